"""``verify --strict`` gives each finding a hint that fits its cause (issue 34 item 8):
an unconsolidated edit is told to consolidate, an invalid unit file to be corrected,
and only a damaged managed file to be restored from Git."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import envelope


@pytest.fixture
def depot(tmp_path: Path) -> Path:
    root = tmp_path / "depot"
    made = invoke(["workspace", "new", str(root), "--id", "depot", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stderr
    for step in ("init", "consolidate"):
        assert _ws(root, step)["ok"]
    return root


def _ws(root: Path, *args: str) -> dict[str, object]:
    return envelope(
        invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
    )


def _strict(root: Path) -> list[dict[str, object]]:
    result = invoke(
        ["workspace", "evidence", "verify", "--strict", "--workspace-root", str(root), "--json"]
    )
    out = envelope(result)
    assert result.exit_code == 7, out
    return out["errors"]  # type: ignore[return-value]


def test_an_unconsolidated_edit_is_told_to_consolidate(depot: Path) -> None:
    unit = depot / "evidence/curated/mapping/order-date.md"
    text = unit.read_text(encoding="utf-8")
    unit.write_text(text.replace("\n# ", "\n# Renamed: ", 1), encoding="utf-8")
    extra = depot / "evidence/curated/glossary/supplier.md"
    extra.write_text(
        (depot / "evidence/curated/glossary/customer.md")
        .read_text(encoding="utf-8")
        .replace("evidence:example:customer", "evidence:example:supplier"),
        encoding="utf-8",
    )
    errors = _strict(depot)
    assert len(errors) == 2, errors
    for error in errors:
        hint = str(error["hint"])
        assert "not consolidated" in str(error["message"])
        assert "tht workspace evidence consolidate" in hint, error
        assert "Restore" not in hint and "by hand" not in hint, error
        assert error["code"] != "E701"


def test_an_invalid_unit_file_is_told_to_be_corrected(depot: Path) -> None:
    unit = depot / "evidence/curated/enum/order-status.md"
    unit.write_text(unit.read_text(encoding="utf-8").replace("language: en", "language: 7"))
    [error] = _strict(depot)
    hint = str(error["hint"])
    assert "tht workspace evidence validate" in hint and "Restore" not in hint, error


def test_a_damaged_managed_file_still_points_at_git_or_backup(depot: Path) -> None:
    state = depot / "evidence/.local/state.yaml"
    state.write_text(state.read_text(encoding="utf-8").replace("active:", "active: 0"))
    errors = _strict(depot)
    assert {e["code"] for e in errors} == {"E701"}, errors
    assert all("Restore" in str(e["hint"]) for e in errors)
