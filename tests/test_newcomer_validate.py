"""What ``validate`` tells a newcomer (issue 34 items 1, 5 and 7): a reserved id is E121
before consolidate refuses it, each file is validated once however PATH is spelled, and a
unit saved where no unit is read is named with the folder it belongs in."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import codes, envelope


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A small consolidated workspace (one example unit per kind), its own id and language."""
    root = tmp_path / "shop"
    made = invoke(["workspace", "new", str(root), "--id", "shop", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stderr
    for args in (["init"], ["consolidate"]):
        done = invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
        assert done.exit_code == 0, done.stdout
    return root


def _evidence(root: Path, *args: str) -> dict[str, object]:
    return envelope(
        invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
    )


def _retire(root: Path, rel: str) -> tuple[str, str]:
    """Delete ``rel`` and consolidate: its id is now reserved.  Returns (id, old text)."""
    path = root / rel
    text = path.read_text(encoding="utf-8")
    uid = next(line[4:] for line in text.splitlines() if line.startswith("id: "))
    path.unlink()
    out = _evidence(root, "consolidate")
    assert out["ok"] and out["result"]["changes"]["deleted"] == [uid], out  # type: ignore[index]
    return uid, text


def test_validate_reports_a_reserved_id_as_consolidate_would(shop: Path) -> None:
    uid, text = _retire(shop, "evidence/curated/formula/average-order-value.md")
    reused = shop / "evidence/curated/formula/mean-basket.md"
    reused.write_text(text.replace("# Average", "# Mean basket (was average"), encoding="utf-8")

    for args in (
        ["workspace", "evidence", "validate", "--workspace-root", str(shop), "--json"],
        ["evidence", "validate", str(shop), "--json"],
        ["evidence", "validate", str(reused), "--json"],
    ):
        out = envelope(invoke(args))
        assert codes(out) == ["E121"], (args, out)
        error = out["errors"][0]
        assert error["unit_id"] == uid and error["path"].endswith("mean-basket.md"), error
        assert "restore" in error["message"]
    # The pre-check agrees with the step it guards.
    assert codes(_evidence(shop, "consolidate")) == ["E121"]


def test_a_staged_restore_is_not_a_reserved_id(shop: Path) -> None:
    uid, _ = _retire(shop, "evidence/curated/glossary/customer.md")
    assert _evidence(shop, "restore", uid)["ok"]
    assert _evidence(shop, "validate")["ok"]
    assert envelope(invoke(["evidence", "validate", str(shop), "--json"]))["ok"]


def test_validate_outside_an_archive_has_no_reserved_ids(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    made = invoke(["workspace", "new", str(root), "--id", "fresh", "--language", "it", "--example"])
    assert made.exit_code == 0
    assert _evidence(root, "validate")["ok"]  # never initialized: nothing reserved


def test_each_file_is_validated_once_however_path_is_spelled(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    enum = shop / "evidence/curated/enum"
    twin = enum / "order-status-twin.md"
    twin.write_text((enum / "order-status.md").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(shop / "evidence")
    spellings = (
        [str(shop)],
        [".."],
        [str(shop), "curated/enum"],  # overlapping: the enum files twice
        ["curated/enum", str(shop), "../evidence/curated"],
        [str(twin), "curated/enum/./order-status-twin.md", str(enum)],
    )
    for paths in spellings:
        out = envelope(invoke(["evidence", "validate", *paths, "--json"]))
        assert codes(out) == ["E120"], (paths, out["errors"])
        files = 2 if paths[0] == str(twin) else 9
        assert out["result"]["files"] == files, (paths, out["result"])
    text = invoke(["evidence", "validate", str(shop), "curated"])
    assert text.stdout.count("E120") + text.stderr.count("E120 id") == 1, text


def _unit_text(root: Path, rel: str, new_id: str) -> str:
    text = (root / rel).read_text(encoding="utf-8")
    old = next(line for line in text.splitlines() if line.startswith("id: "))
    return text.replace(old, f"id: {new_id}")


def test_a_unit_saved_where_no_unit_is_read_is_named_with_its_folder(shop: Path) -> None:
    misplaced = {
        "evidence/basket-size.md": ("formula/average-order-value.md", "formula"),
        "refund-rate.md": ("domain/cancelled-orders.md", "domain"),
        "drafts/q3/vip.md": ("glossary/customer.md", "glossary"),
    }
    for rel, (model, _kind) in misplaced.items():
        (shop / rel).parent.mkdir(parents=True, exist_ok=True)
        text = _unit_text(shop, f"evidence/curated/{model}", f"evidence:shop:{Path(rel).stem}")
        (shop / rel).write_text(text, encoding="utf-8")
    # Markdown that is not a v4 unit stays unnamed: a README, a page with other frontmatter.
    (shop / "README.md").write_text("# Shop evidence\n", encoding="utf-8")
    (shop / "drafts/notes.md").write_text("---\ntitle: notes\n---\n\nkind: formula\n")

    def named(warnings: list[dict[str, object]]) -> dict[str, str]:
        return {str(w["path"]): str(w["message"]) for w in warnings if w["code"] == "W108"}

    for out in (
        _evidence(shop, "validate"),
        envelope(invoke(["evidence", "validate", str(shop), "--json"])),
        _evidence(shop, "status"),
    ):
        assert out["ok"], out  # a warning: nothing that is read is wrong
        found = named(out["warnings"])  # type: ignore[arg-type]
        assert len(found) == len(misplaced), found
        for rel, (_model, kind) in misplaced.items():
            message = next(m for p, m in found.items() if p.endswith(rel))
            assert f"evidence/curated/{kind}/{Path(rel).name}" in message, message
    refused = _evidence(shop, "validate", "--warnings-as-errors")
    assert codes(refused) == ["E190"] * 3


def test_status_text_names_the_misplaced_unit(shop: Path) -> None:
    (shop / "evidence/order-lines.md").write_text(
        _unit_text(shop, "evidence/curated/example/orders-per-month.md", "evidence:shop:ol"),
        encoding="utf-8",
    )
    out = invoke(["workspace", "evidence", "status", "--workspace-root", str(shop)])
    assert out.exit_code == 0
    assert "evidence/order-lines.md" in out.stderr + out.stdout
    assert "evidence/curated/example/order-lines.md" in out.stderr + out.stdout
