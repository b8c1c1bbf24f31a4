"""``cite-check``: recorded answers' citations against what retrieval returned.

grounded: cited, retrieved and active (retrieval order); ungrounded: cited but
never retrieved (cited order); inactive: cited and retrieved but deleted or
retired; unused: retrieved, not cited (retrieval order).  Exit 1 iff anything
is ungrounded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import FORMULA, Tht, stage_document, stage_retirement, unit_file

from evidence_tool.activation.citations import citation_context, classify
from evidence_tool.archive.local import LocalEvidenceArchive

A = "evidence:clinical:sdo"
B = "evidence:clinical:numero-nosologico"
C = FORMULA
DELETED = "evidence:clinical:regime-di-ricovero"
RETIRED = "evidence:clinical:ricoveri-validi"
MADE_UP = "evidence:clinical:made-up"


@pytest.fixture
def history(workspace: Path, tht: Tht) -> Path:
    """The fixture workspace after one unit was deleted and another retired by a replace."""
    unit_file(workspace, DELETED).unlink()
    stage_retirement(workspace, RETIRED)
    unit_file(workspace, RETIRED).unlink()
    result = tht("consolidate").json["result"]
    assert sorted(result["changes"]["deleted"]) == sorted([DELETED, RETIRED])
    return workspace


def _check(tht: Tht, cited: list[str], retrieved: list[str]) -> Any:
    args = [f"--cited={c}" for c in cited] + [f"--retrieved={r}" for r in retrieved]
    return tht("cite-check", *args)


def test_each_id_is_classified_in_retrieval_order(history: Path, tht: Tht) -> None:
    retrieved = [C, RETIRED, B, A, DELETED]
    cited = [A, MADE_UP, DELETED, C, RETIRED, A]
    result = _check(tht, cited, retrieved)
    assert result.exit_code == 1  # MADE_UP was never retrieved
    res = result.json["result"]
    assert res["grounded"] == [C, A]
    assert res["ungrounded"] == [MADE_UP]
    assert res["inactive"] == [RETIRED, DELETED]
    assert res["unused"] == [B]
    assert res["flags"] == [
        {"id": MADE_UP, "flag": "unknown"},
        {"id": DELETED, "flag": "deleted"},
        {"id": RETIRED, "flag": "retired"},
    ]
    assert res["ok"] is False
    assert res["revision"] == LocalEvidenceArchive(history).state().active


def test_grounded_citations_exit_0_even_with_unused_or_inactive_ids(
    history: Path, tht: Tht
) -> None:
    result = _check(tht, [A, DELETED], [B, A, DELETED])
    assert result.exit_code == 0
    res = result.json["result"]
    assert (res["grounded"], res["ungrounded"], res["inactive"], res["unused"]) == (
        [A],
        [],
        [DELETED],
        [B],
    )
    assert res["flags"] == [{"id": DELETED, "flag": "deleted"}]
    text = _check_text(tht, [A, DELETED], [B, A, DELETED])
    assert text.exit_code == 0
    assert f"grounded:   {A}" in text.stdout and f"inactive:   {DELETED}" in text.stdout


def _check_text(tht: Tht, cited: list[str], retrieved: list[str]) -> Any:
    args = [f"--cited={c}" for c in cited] + [f"--retrieved={r}" for r in retrieved]
    return tht("cite-check", *args, as_json=False)


def test_recorded_answers_from_a_jsonl_file(history: Path, tht: Tht, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    lines = [
        {"question": "q1", "cited": [A], "retrieved": [A, B]},
        {"question": "q2", "cited": [C, MADE_UP], "retrieved": [C]},
        {"question": "q3", "cited": [RETIRED], "retrieved": [RETIRED, C]},
    ]
    answers.write_text("\n".join(json.dumps(x) for x in lines[:2]) + "\n\n" + json.dumps(lines[2]))
    result = tht("cite-check", "--answers", str(answers))
    assert result.exit_code == 1
    res = result.json["result"]
    assert res["ok"] is False and res["revision"] == LocalEvidenceArchive(history).state().active
    one, two, three = res["answers"]
    assert (one["grounded"], one["unused"], one["ok"]) == ([A], [B], True)
    assert (two["grounded"], two["ungrounded"], two["ok"]) == ([C], [MADE_UP], False)
    assert (three["inactive"], three["unused"], three["flags"]) == (
        [RETIRED],
        [C],
        [{"id": RETIRED, "flag": "retired"}],
    )
    # One line is still a list of answers: the shape does not depend on the count.
    answers.write_text(json.dumps(lines[0]) + "\n")
    single = tht("cite-check", "--answers", str(answers))
    assert single.exit_code == 0 and len(single.json["result"]["answers"]) == 1


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        '["a list"]',
        '{"cited": ["x"]}',
        '{"cited": "evidence:clinical:sdo", "retrieved": []}',
        '{"cited": [1], "retrieved": []}',
    ],
)
def test_a_malformed_answer_line_is_a_usage_error_naming_the_line(
    workspace: Path, tht: Tht, tmp_path: Path, line: str
) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"cited": [A], "retrieved": [A]}) + "\n" + line + "\n")
    result = tht("cite-check", "--answers", str(answers))
    assert result.exit_code == 2
    error = result.json["errors"][0]
    assert error["code"] == "E901" and error["line"] == 2 and error["path"] == str(answers)


def test_nothing_to_check_is_a_usage_error(workspace: Path, tht: Tht, tmp_path: Path) -> None:
    assert tht("cite-check").exit_code == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert tht("cite-check", "--answers", str(empty)).exit_code == 2


def test_the_library_call(history: Path) -> None:
    res = classify(citation_context(LocalEvidenceArchive(history)), [B, A], [A, B, C])
    assert (res.grounded, res.unused, res.ok) == ((A, B), (C,), True)


def test_a_cited_unit_whose_source_was_retracted_is_flagged(workspace: Path, tht: Tht) -> None:
    """The retraction is recorded by the registry's own 'retract' (SPEC.md 6.5)."""
    from evidence_tool.sources import registry, store
    from evidence_tool.sources.records import SourceKind, SourceRecord

    source_id = stage_document(workspace, C, "giornate di degenza")
    assert tht("consolidate").json["result"]["status"] == "activated"
    archive = LocalEvidenceArchive(workspace)
    sources = store.read(archive.layout)
    sources.sources[source_id] = SourceRecord(
        source_id, "fs:evidence/source/lab-handbook.md", SourceKind.FS, "2026-01-01T00:00:00Z"
    )
    store.write(archive.layout, sources)
    registry.retract(archive, source_id, "withdrawn by the publisher", "bob")

    result = _check(tht, [C, A], [C, A])
    assert result.exit_code == 0  # grounded, but the reader must know the source is gone
    res = result.json["result"]
    assert res["grounded"] == [C, A]
    assert res["flags"] == [{"id": C, "flag": "source-retracted", "source_id": source_id}]


# -- a failed check carries coded errors (issue 15) ------------------------------------

INVENTED = "evidence:ward:never-written"


def test_a_made_up_citation_is_an_e170_error_naming_the_id(workspace: Path, tht: Tht) -> None:
    result = _check(tht, [INVENTED, A], [A, B])
    assert result.exit_code == 1
    envelope = result.json
    assert envelope["ok"] is False and envelope["result"]["ungrounded"] == [INVENTED]
    assert [(e["code"], e["unit_id"]) for e in envelope["errors"]] == [("E170", INVENTED)]
    assert INVENTED in envelope["errors"][0]["message"]
    assert envelope["errors"][0]["hint"]


def test_each_ungrounded_citation_of_a_file_names_its_line(
    workspace: Path, tht: Tht, tmp_path: Path
) -> None:
    answers = tmp_path / "recorded.jsonl"
    rows = [
        {"cited": [A], "retrieved": [A]},
        {"cited": [INVENTED, MADE_UP], "retrieved": [B]},
        {"cited": [B], "retrieved": [B]},
        {"cited": [C], "retrieved": []},
    ]
    answers.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n"
                       + "\n".join(json.dumps(r) for r in rows[2:]) + "\n")  # fmt: skip
    result = tht("cite-check", "--answers", str(answers))
    assert result.exit_code == 1
    found = [(e["code"], e["unit_id"], e["path"], e["line"]) for e in result.json["errors"]]
    assert found == [
        ("E170", INVENTED, str(answers), 2),
        ("E170", MADE_UP, str(answers), 2),
        ("E170", C, str(answers), 5),  # the blank line 3 still counts
    ]


def test_the_text_lists_the_classes_without_reprs(history: Path, tht: Tht) -> None:
    text = _check_text(tht, [A, INVENTED, DELETED], [B, A, DELETED])
    assert text.exit_code == 1
    out = text.stdout
    assert f"grounded:   {A}" in out and f"ungrounded: {INVENTED}" in out, out
    assert f"unused:     {B}" in out and f"inactive:   {DELETED}" in out, out
    assert f"flags:      {INVENTED} unknown, {DELETED} deleted" in out, out
    assert "E170" in out and "fix E170" in text.stderr
    report = [line for line in out.splitlines() if "E170" not in line]
    assert not any(mark in line for line in report for mark in "[]{}'"), report


@pytest.mark.parametrize(
    "second, line",
    [
        (b"\xff\xfe not utf-8\n", 2),  # a UTF-16 export or a binary file
        (b'{"cited": ["caf\xe9"], "retrieved": []}\n', 2),  # Latin-1 text
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", 2),  # nested past the parser's depth
    ],
)
def test_an_unreadable_answers_file_is_a_usage_error_not_a_traceback(
    workspace: Path, tht: Tht, tmp_path: Path, second: bytes, line: int
) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(json.dumps({"cited": [A], "retrieved": [A]}).encode() + b"\n" + second)
    result = tht("cite-check", "--answers", str(answers))
    assert result.exit_code == 2, result.stdout
    error = result.json["errors"][0]
    assert error["code"] == "E901" and error["line"] == line and error["path"] == str(answers)
