"""``tht workspace evidence eval``: recall@k, MRR and nDCG of a question set.

Deletion-aware: an expected id the archive deleted or retired is reported as
``retired`` with its deletion record (who, when, why) and left out of the
figures; an id the archive never held is an error of the question set (E911).
``--compare REV`` rebuilds REV's index in a temporary folder outside the
workspace and runs the same questions on it.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from evidence_tool.activation.sqlite_index import (
    ALL_MODES,
    INDEX_NAME,
    Filters,
    build_index,
    search,
    search_modes,
    search_path,
)
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.records import Deletion
from evidence_tool.errors import Diagnostic, NotReadyError, UsageError
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlProblem, load

# Bounds on a question set: a hostile or mistaken file is refused before it is parsed.
MAX_BYTES = 4 * 1024 * 1024
MAX_QUESTIONS = 5000


@dataclass(frozen=True)
class Question:
    line: int
    question: str
    expected: tuple[str, ...]
    filters: Filters


def _invalid(path: str, message: str, line: int | None = None) -> UsageError:
    where = f"{path}:{line}" if line else path
    return UsageError(
        f"{where}: {message}; docs/retrieval.md shows the question set's format",
        code="E910",
        path=path,
        line=line,
    )


def _records(path: str, text: str) -> Iterator[tuple[int, Any]]:
    """(line, question object) pairs of a JSONL or YAML question set."""
    if path.endswith(".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except ValueError as exc:
                    raise _invalid(path, f"not a JSON object ({exc})", n) from None
        return
    try:
        yaml = load(text)  # the strict loader of units: no anchors, tags or duplicates
    except YamlProblem as exc:
        raise _invalid(path, f"not valid YAML ({exc.message})", exc.line) from None
    doc = yaml.value
    problems = list(Draft202012Validator(_TOP).iter_errors(doc))
    if problems:
        raise _invalid(path, f"the top level must be {{questions: [...]}} ({problems[0].message})")
    for i, item in enumerate(doc["questions"]):
        yield yaml.mark(("questions", i))[0] or 1, item


_TOP = {**load_schema("eval-questions.schema.json"), "properties": {"questions": {"type": "array"}}}
_QUESTION = Draft202012Validator(
    {"$defs": load_schema("eval-questions.schema.json")["$defs"], "$ref": "#/$defs/question"}
)


def load_questions(path: str) -> list[Question]:
    """The questions of ``path`` (YAML or JSONL), each checked against the schema."""
    file = Path(path)
    try:
        if file.stat().st_size > MAX_BYTES:
            raise _invalid(path, f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(path, f"unreadable ({exc})") from None
    out: list[Question] = []
    for line, item in _records(path, text):
        if len(out) == MAX_QUESTIONS:
            raise _invalid(path, f"more than {MAX_QUESTIONS} questions", line)
        errors = list(_QUESTION.iter_errors(item))
        if errors:
            where = "/".join(map(str, errors[0].absolute_path)) or "question"
            raise _invalid(path, f"{where}: {errors[0].message}", line)
        filters = dict(item.get("filters") or {})
        out.append(Question(line, item["question"], tuple(item["expected"]), Filters(**filters)))
    if not out:
        raise _invalid(path, "no questions")
    return out


def _check_ids(path: str, questions: list[Question], known: set[str]) -> None:
    """Every expected id must be one the archive holds or deleted (E911)."""
    bad = [
        Diagnostic("E911", f"expected id {uid} was never in the archive", path, q.line)
        for q in questions
        for uid in q.expected
        if uid not in known
    ]
    if bad:
        first = bad[0]
        raise UsageError(
            f"{path}:{first.line}: {first.message.split(' was')[0]} was never in the archive "
            f"({len(bad)} unknown id(s)): correct the id, or drop it from the question",
            code="E911",
            path=path,
            line=first.line,
            diagnostics=bad,
        )


def _metrics(ranked: list[str], relevant: set[str], k: int) -> dict[str, float]:
    top = ranked[:k]
    ranks = [n for n, uid in enumerate(top, 1) if uid in relevant]
    ideal = sum(1 / math.log2(n + 1) for n in range(1, min(len(relevant), k) + 1))
    return {
        "recall": len(ranks) / len(relevant),
        "rr": 1 / ranks[0] if ranks else 0.0,
        "ndcg": sum(1 / math.log2(n + 1) for n in ranks) / ideal,
    }


def _run_mode(
    search_fn: Any, questions: list[Question], retired: dict[str, Deletion], k: int
) -> dict[str, Any]:
    rows = []
    for q in questions:
        gone = [uid for uid in q.expected if uid in retired]
        relevant = set(q.expected) - set(gone)
        row: dict[str, Any] = {
            "line": q.line,
            "question": q.question,
            "retired": [_retired(retired[uid]) for uid in gone],
        }
        if relevant:
            try:
                ranked = [h["id"] for h in search_fn(q.question, q.filters, k)["hits"]]
            except UsageError as exc:  # e.g. only stop words: nothing found, said why
                ranked, row["note"] = [], exc.message
            row.update(_metrics(ranked, relevant, k))
            row["misses"] = sorted(relevant - set(ranked[:k]))
        rows.append(row)
    scored = [r for r in rows if "recall" in r]
    n = len(scored)
    return {
        "available": True,
        "evaluated": n,
        "retired_only": len(rows) - n,
        **{
            name: round(sum(r[key] for r in scored) / n, 4) if n else None
            for name, key in (("recall", "recall"), ("mrr", "rr"), ("ndcg", "ndcg"))
        },
        "questions": rows,
    }


def _retired(record: Deletion) -> dict[str, Any]:
    return {
        k: v for k, v in record.to_json().items() if k in ("id", "actor", "deleted_at", "reason")
    }


def _modes(asked: tuple[str, ...]) -> list[str]:
    unknown = [m for m in asked if m not in ALL_MODES]
    if unknown:
        raise UsageError(f"unknown mode '{unknown[0]}': use one of {', '.join(ALL_MODES)}")
    return list(asked or ALL_MODES)


def _run(
    label: str,
    revision: str,
    search_at: Any,
    questions: list[Question],
    retired: Any,
    k: int,
    modes: list[str],
) -> dict[str, Any]:
    out = []
    for mode in modes:
        if mode not in search_modes():
            out.append(
                {
                    "mode": mode,
                    "available": False,
                    "reason": f"mode '{mode}' needs the embedding extra, not installed here",
                }
            )
            continue
        run = _run_mode(lambda q, f, n, m=mode: search_at(q, f, n, m), questions, retired, k)
        out.append({"mode": mode, **run})
    return {"label": label, "revision": revision, "backend": "sqlite", "modes": out}


def evaluate(
    archive: LocalEvidenceArchive,
    questions_path: str,
    *,
    k: int = 5,
    modes: tuple[str, ...] = (),
    compare: str | None = None,
) -> dict[str, Any]:
    """Figures of the active index, and of ``compare``'s index rebuilt in a temp folder."""
    from evidence_tool.archive.diffing import resolve_revision

    questions = load_questions(questions_path)
    newest = archive.newest_snapshot()
    active = archive.active_snapshot()
    if newest is None or active is None:
        raise NotReadyError(
            "no active revision to evaluate: run 'tht workspace evidence consolidate' first"
        )
    retired = {d.id: d for d in newest.deletions}
    known = {e.id for e in newest.entries()} | {e.id for e in active.entries()} | set(retired)
    _check_ids(questions_path, questions, known)
    chosen = _modes(modes)
    layout = archive.layout
    runs = [
        _run(
            "active",
            active.revision,
            lambda q, f, n, m: search(layout, q, f, n, m),
            questions,
            retired,
            k,
            chosen,
        )
    ]
    if compare is not None:
        runs.append(
            _compare(archive, resolve_revision(archive, compare), questions, retired, k, chosen)
        )
    return {"k": k, "questions": len(questions), "path": questions_path, "runs": runs}


def _compare(
    archive: LocalEvidenceArchive,
    revision: str,
    questions: list[Question],
    retired: dict[str, Deletion],
    k: int,
    modes: list[str],
) -> dict[str, Any]:
    """The same questions on ``revision``'s index, built outside the workspace."""
    snapshot = archive.snapshot(revision)
    with tempfile.TemporaryDirectory(prefix="tht-eval-") as tmp:
        path = Path(tmp) / INDEX_NAME
        build_index(path, revision, snapshot.records())
        return _run(
            "compare",
            revision,
            lambda q, f, n, m: search_path(path, q, f, n, m),
            questions,
            retired,
            k,
            modes,
        )


def score_index(
    path: Path,
    questions: list[Question],
    retired: dict[str, Deletion],
    k: int = 5,
    mode: str = "bm25",
) -> dict[str, Any]:
    """One mode's figures on the index file at ``path`` (used to compare analyzers)."""
    return _run_mode(lambda q, f, n: search_path(path, q, f, n, mode), questions, retired, k)
