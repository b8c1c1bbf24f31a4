"""``eval`` as the gate of a pull request (issue 29): ``--min-recall`` / ``--min-mrr``
exit 1 below the threshold (E171), ``--fail-on-drop`` exits 1 when a metric is worse
than on ``--compare REV`` (E172).  Thresholds are taken from a plain run, never
hard-coded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import Tht, unit_text, write_unit

from evidence_tool.archive.local import LocalEvidenceArchive


def _questions(path: Path) -> Path:
    items = [
        {"question": "night transfers", "expected": ["evidence:test:zanzibar"]},
        {"question": "tax code", "expected": ["evidence:mapping:tax-code"]},
        {"question": "length of stay", "expected": ["evidence:mapping:tax-code"]},
    ]
    path.write_text(json.dumps({"questions": items}), encoding="utf-8")
    return path


def _bm25(result: dict[str, Any], label: str = "active") -> dict[str, Any]:
    run = next(r for r in result["runs"] if r["label"] == label)
    return next(m for m in run["modes"] if m["mode"] == "bm25")  # type: ignore[no-any-return]


def _zanzibar(root: Path) -> Path:
    return write_unit(
        root,
        "glossary",
        "zanzibar",
        unit_text(
            "evidence:test:zanzibar",
            "glossary",
            "en",
            ["disambiguation"],
            "Zanzibar protocol",
            "The zanzibar protocol governs night transfers.",
        ),
    )


def test_thresholds_pass_at_the_figures_and_fail_just_above(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    questions = str(_questions(tmp_path / "q.json"))
    # zanzibar is not a unit yet: one question of three has no live expected id to find
    plain = tht("eval", questions, "--mode", "bm25")
    assert plain.exit_code == 2  # E911: an expected id the archive never held
    _zanzibar(indexed)
    assert tht("consolidate").exit_code == 0
    figures = _bm25(tht("eval", questions, "--mode", "bm25").json["result"])
    recall, mrr = figures["recall"], figures["mrr"]
    assert 0 < recall < 1 and 0 < mrr < 1, figures  # "length of stay" misses tax-code
    at = tht(
        "eval", questions, "--mode", "bm25", "--min-recall", str(recall), "--min-mrr", str(mrr)
    )
    assert at.exit_code == 0, at.stdout
    gate = at.json["result"]["gate"]
    assert gate["passed"] and gate["failures"] == 0 and gate["min_recall"] == recall
    above = tht("eval", questions, "--mode", "bm25", "--min-recall", str(round(recall + 0.01, 4)))
    assert above.exit_code == 1
    assert [e["code"] for e in above.json["errors"]] == ["E171"]
    assert f"bm25: recall is {recall}, below the required" in above.json["errors"][0]["message"]
    assert above.json["errors"][0]["hint"]
    both = tht("eval", questions, "--mode", "bm25", "--min-recall", "1", "--min-mrr", "1")
    assert both.exit_code == 1 and len(both.json["errors"]) == 2
    assert both.json["result"]["gate"]["failures"] == 2
    # The figures are still there for the reader: the gate adds to eval, it hides nothing.
    assert _bm25(both.json["result"])["recall"] == recall


@pytest.mark.allow_system_temp
def test_fail_on_drop_passes_an_improvement_and_fails_a_regression(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    questions = str(_questions(tmp_path / "q.json"))
    path = _zanzibar(indexed)
    assert tht("consolidate").json["result"]["status"] == "activated"
    good = LocalEvidenceArchive(indexed).state().active
    assert good is not None
    # The same revision compared with itself: nothing dropped.
    same = tht("eval", questions, "--mode", "bm25", "--compare", good, "--fail-on-drop")
    assert same.exit_code == 0, same.stdout
    compared = same.json["result"]["gate"]["compared"]
    assert [c["metric"] for c in compared] == ["recall", "mrr", "ndcg"]
    # A change that makes zanzibar harder to find: its words leave the unit.
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("The zanzibar protocol governs night transfers.", "Governs moves.").replace(
            "# Zanzibar protocol", "# Protocol Z"
        ),
        encoding="utf-8",
    )
    assert tht("consolidate").json["result"]["status"] == "activated"
    worse = tht("eval", questions, "--mode", "bm25", "--compare", good[:12], "--fail-on-drop")
    assert worse.exit_code == 1, worse.stdout
    codes = {e["code"] for e in worse.json["errors"]}
    assert codes == {"E172"}
    dropped = [e["message"] for e in worse.json["errors"]]
    assert any(m.startswith("bm25: recall dropped from") for m in dropped), dropped
    assert not worse.json["result"]["gate"]["passed"]
    # Without the flag the same comparison only reports.
    assert tht("eval", questions, "--mode", "bm25", "--compare", good[:12]).exit_code == 0


def test_fail_on_drop_without_a_revision_is_a_usage_error(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    _zanzibar(indexed)
    assert tht("consolidate").exit_code == 0
    result = tht("eval", str(_questions(tmp_path / "q.json")), "--fail-on-drop")
    assert result.exit_code == 2
    assert "--compare REV" in result.json["errors"][0]["message"]
