"""Before the first activation retrieval serves nothing: ``status``, ``search`` and the
review page say so and why (issue 34 item 3), instead of ``active: -`` alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import codes, envelope

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.unit import parse_unit

UNIT = "evidence:example:stato-ordine"
UNIT_FILE = "evidence/curated/enum/stato-ordine.md"


@pytest.fixture
def initialized(tmp_path: Path) -> Path:
    """A new workspace (Italian examples) after ``init``: a baseline, nothing active."""
    root = tmp_path / "negozio"
    made = invoke(
        ["workspace", "new", str(root), "--id", "negozio", "--language", "it", "--example"]
    )
    assert made.exit_code == 0, made.stderr
    assert _ws(root, "init")["ok"]
    return root


def _ws(root: Path, *args: str) -> dict[str, object]:
    return envelope(
        invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
    )


def _text(root: Path, *args: str) -> str:
    out = invoke(["workspace", "evidence", *args, "--workspace-root", str(root)])
    return out.stdout + out.stderr


def _block_with_a_review_item(root: Path) -> None:
    """A review item on one unit's current content, as a retracted source raises it."""
    unit = parse_unit((root / UNIT_FILE).read_bytes()).unit
    assert unit is not None and unit.id == UNIT
    item = {
        "code": "source-retracted",
        "message": "the pricing handbook was retracted",
        "raised_by": "registry",
        "raised_at": "2026-10-02T08:00:00Z",
        "content_hash": unit.content_hash,
    }
    LocalEvidenceArchive(root).merge_staged({"review_items": {UNIT: [item]}})


def test_after_init_status_and_search_say_nothing_is_served_until_consolidate(
    initialized: Path,
) -> None:
    status = _ws(initialized, "status")["result"]
    serving = status["serving"]  # type: ignore[index]
    assert serving["revision"] is None and serving["units"] == 0, serving
    assert "consolidate" in serving["reason"], serving
    text = _text(initialized, "status")
    assert "retrieval serves nothing" in text and "tht workspace evidence consolidate" in text
    found = _ws(initialized, "search", "ordine")
    assert codes(found) == ["E905"]
    assert "serves nothing" in found["errors"][0]["message"]  # type: ignore[index]


def test_while_review_items_block_the_first_activation_the_reason_names_them(
    initialized: Path,
) -> None:
    _block_with_a_review_item(initialized)
    assert codes(_ws(initialized, "consolidate")) == ["E140"]
    serving = _ws(initialized, "status")["result"]["serving"]  # type: ignore[index]
    assert serving["revision"] is None and serving["units"] == 0
    assert "review item" in serving["reason"] and "1 unit" in serving["reason"], serving
    text = _text(initialized, "status")
    assert "retrieval serves nothing" in text and "review" in text
    found = _ws(initialized, "search", "ordine")
    assert codes(found) == ["E905"]
    message = found["errors"][0]["message"]  # type: ignore[index]
    assert "review item" in message, message
    page = initialized / "review.html"
    assert _ws(initialized, "report", "--html", str(page))["ok"]
    html = page.read_text(encoding="utf-8")
    assert "Retrieval serves nothing" in html and "review item" in html


def test_once_active_status_says_what_is_served(initialized: Path) -> None:
    assert _ws(initialized, "consolidate")["ok"]
    serving = _ws(initialized, "status")["result"]["serving"]  # type: ignore[index]
    assert serving["revision"] and serving["units"] == 8 and serving["reason"] is None
    assert "retrieval serves nothing" not in _text(initialized, "status")
    assert "retrieval: 8 unit(s)" in _text(initialized, "status")
