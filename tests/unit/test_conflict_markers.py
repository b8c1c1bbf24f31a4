"""A unit that still holds Git's conflict markers (two curators edited it, one pulled and
resolved nothing).  Inside a ```sql fence or a list the markers are legal Markdown, so the
unit was valid: consolidate recorded and activated an example whose SQL began with
'<<<<<<< HEAD', and search served it to agents.  It is now E119 at the marker's line."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_runner import invoke

from evidence_tool.unit.parse import parse_unit

REPO = Path(__file__).resolve().parents[2]
CURATED = REPO / "fixtures/workspace/evidence/curated"


def _conflicted(text: str, anchor: str, theirs: str) -> tuple[str, int]:
    """``text`` with the line holding ``anchor`` turned into a two-sided conflict, and the
    1-based line of its '<<<<<<<' marker."""
    lines = text.split("\n")
    (i,) = [n for n, line in enumerate(lines) if anchor in line]
    lines[i : i + 1] = ["<<<<<<< HEAD", lines[i], "=======", theirs, ">>>>>>> 5e1f0aa (ward edit)"]
    return "\n".join(lines), i + 1


CASES = [
    ("example/admissions-per-month.md", "count(*) AS admissions", "       count(1) AS visits"),
    ("glossary/drg.md", "# DRG", "# Diagnosis related group"),
    ("enum/triage-code.md", "Red, emergency", "Red: immediate treatment."),
    ("example/admissions-per-month.md", "purposes: [sql_generation]", "purposes: [rewriting]"),
]


@pytest.mark.parametrize(("rel", "anchor", "theirs"), CASES)
def test_conflict_markers_are_e119_at_their_line(rel: str, anchor: str, theirs: str) -> None:
    text, line = _conflicted((CURATED / rel).read_text(encoding="utf-8"), anchor, theirs)
    result = parse_unit(text.encode("utf-8"), path=rel)
    assert result.unit is None or result.errors, rel
    assert [(e.code, e.line) for e in result.errors] == [("E119", line)], result.errors
    assert "conflict marker" in result.errors[0].message, result.errors[0].message


def test_marker_like_text_that_is_no_conflict_stays_valid() -> None:
    text = (CURATED / "glossary/drg.md").read_text(encoding="utf-8")
    # Mid-line, or a run of '=' alone (a setext rule inside a fence): no conflict.
    text = text.replace("\n## Definition\n\n", "\n## Definition\n\nA >>>>>>> B <<<<<<< C.\n", 1)
    result = parse_unit(text.encode("utf-8"))
    assert result.ok, result.errors


def test_consolidate_refuses_a_conflicted_unit_and_serves_the_old_one(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    first = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(ws)])
    assert first.exit_code == 0, first.stdout + first.stderr  # the index serves the old text
    rel, anchor, theirs = CASES[0]
    unit = ws / "evidence/curated" / rel
    text, line = _conflicted(unit.read_text(encoding="utf-8"), anchor, theirs)
    unit.write_text(text, encoding="utf-8")
    ran = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(ws), "--json"])
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    assert [(e["code"], e["line"]) for e in ran.json["errors"]] == [("E119", line)], ran.json
    found = invoke(["workspace", "evidence", "search", "admissions per month", "--workspace-root",
                    str(ws), "--json"])  # fmt: skip
    assert found.exit_code == 0, found.stdout + found.stderr
    served = [h for h in found.json["result"]["hits"] if h["id"].endswith("admissions-per-month")]
    assert served and not re.search(r"(?m)^<{7}", str(served[0])), served


# Lines that look like one marker but are no conflict: Git always writes the three lines of
# a conflict, '<<<<<<<', '=======' and '>>>>>>>' in this order, so one alone is the unit's.
LEGIT = [
    ("email-quote", "From the SDO office:\n\n>>>>>>> we confirm the grouper version"),
    ("bare-quote", ">>>>>>>"),
    ("arrows-in-fence", "```text\n<<<<<<< older rows\n>>>>>>> newer rows\n```"),
    ("lt-in-fence", "```text\n<<<<<<< older rows\n```"),
    ("banner-in-fence", "```text\n=======\n>>>>>>> report\n=======\n```"),
]


@pytest.mark.parametrize(("name", "extra"), LEGIT, ids=[n for n, _ in LEGIT])
def test_one_marker_like_line_is_the_units_text(name: str, extra: str) -> None:
    text = (CURATED / "glossary/drg.md").read_text(encoding="utf-8")
    text = text.replace("\n## Definition\n\n", f"\n## Definition\n\n{extra}\n\n", 1)
    assert extra in text
    result = parse_unit(text.encode("utf-8"))
    assert result.ok, (name, result.errors)


def test_a_diff3_conflict_is_e119_at_its_first_marker() -> None:
    text = (CURATED / "glossary/drg.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    at = lines.index("## Definition") + 2
    lines[at:at] = ["<<<<<<< HEAD", "A", "||||||| base", "O", "=======", "B", ">>>>>>> x"]
    result = parse_unit("\n".join(lines).encode("utf-8"))
    assert [(e.code, e.line) for e in result.errors] == [("E119", at + 1)], result.errors


def test_the_conflict_is_named_at_its_own_marker_after_marker_like_text() -> None:
    text = (CURATED / "glossary/drg.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    at = lines.index("## Definition") + 2
    lines[at:at] = ["```text", "<<<<<<< older rows", "```", "", "<<<<<<< HEAD", "A", "=======",
                    "B", ">>>>>>> x"]  # fmt: skip
    result = parse_unit("\n".join(lines).encode("utf-8"))
    assert [(e.code, e.line) for e in result.errors] == [("E119", at + 5)], result.errors
