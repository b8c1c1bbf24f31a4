"""``show`` of a misspelt id suggests the live unit before a retired one, and marks a
retired suggestion as such (issue 34 item 12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import codes, envelope

OLD = "evidence:example:country-code"
NEW = "evidence:example:country-codes-iso"


@pytest.fixture
def replaced(tmp_path: Path) -> Path:
    """A unit whose id was changed: the old id is deleted, the new one is live."""
    root = tmp_path / "atlas"
    made = invoke(["workspace", "new", str(root), "--id", "atlas", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stderr
    assert _ws(root, "init")["ok"]
    unit = root / "evidence/curated/normalization/country-code.md"
    unit.write_text(unit.read_text(encoding="utf-8").replace(OLD, NEW), encoding="utf-8")
    assert _ws(root, "consolidate")["ok"]
    return root


def _ws(root: Path, *args: str) -> dict[str, object]:
    return envelope(
        invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
    )


def _message(root: Path, typo: str) -> str:
    out = _ws(root, "show", typo)
    assert codes(out) == ["E904"], out
    return str(out["errors"][0]["message"])  # type: ignore[index]


def test_a_typo_nearer_the_retired_id_still_suggests_the_live_one(replaced: Path) -> None:
    message = _message(replaced, "evidence:example:country-cde")  # closest to OLD
    assert f"did you mean '{NEW}'" in message, message
    assert OLD in message and "deleted" in message, message  # named, and marked as such


def test_a_typo_near_only_a_retired_id_suggests_it_marked_deleted(tmp_path: Path) -> None:
    root = tmp_path / "small"
    made = invoke(["workspace", "new", str(root), "--id", "small", "--language", "en", "--example"])
    assert made.exit_code == 0
    assert _ws(root, "init")["ok"]
    (root / "evidence/curated/glossary/customer.md").unlink()
    assert _ws(root, "consolidate")["ok"]
    message = _message(root, "evidence:example:custmer")
    assert "did you mean 'evidence:example:customer'" in message, message
    assert "deleted" in message, message


def test_a_typo_of_a_live_id_names_only_it(replaced: Path) -> None:
    message = _message(replaced, "evidence:example:ordr-date")
    assert "did you mean 'evidence:example:order-date'?" in message
    assert "deleted" not in message
