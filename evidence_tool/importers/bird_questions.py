"""BIRD questions as units: an example per question, and a formula, glossary term or
domain rule per distinct evidence fragment of a database."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from evidence_tool.importers.base import SourceFile, Span, element_id, malformed, slug
from evidence_tool.importers.bird_evidence import fragments, read_fragment
from evidence_tool.importers.bird_units import Collected, clean
from evidence_tool.importers.spans import json_array_items, string_member
from evidence_tool.importers.unit_parts import fenced_sql, title
from evidence_tool.unit.model import (
    DomainPayload,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    Payload,
)

REQUIRED = ("db_id", "question", "evidence", "SQL")
KNOWN = ("question_id", *REQUIRED)


def import_questions(state: Collected, f: SourceFile) -> None:
    shown = state.source.shown(f.path)
    items = json_array_items(f, shown, "one JSON array of question objects (BIRD's dev.json)")
    for position, (values, span, line) in enumerate(items):
        _import_question(state, shown, position, span, _question(values, shown, line))


@dataclass(frozen=True, slots=True)
class Question:
    """One BIRD question, its required fields checked."""

    question_id: int | str | None  # null when given as null
    db_id: str
    question: str
    evidence: str
    sql: str
    keys: tuple[str, ...]  # every key it has, to count those no unit field holds
    line: int  # where its object starts in the file

    @property
    def numbered(self) -> bool:
        return "question_id" in self.keys  # train.json has no question_id


def _question(values: dict[str, Any], shown: str, line: int) -> Question:
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise malformed(
            shown,
            line,
            f"the question lacks {', '.join(missing)}; a BIRD question has "
            "question_id, db_id, question, evidence, SQL and difficulty",
        )
    texts = {k: values[k] for k in REQUIRED}
    for key, value in texts.items():
        if not isinstance(value, str):
            raise malformed(shown, line, f"{key} is not a string")
    strings = {k: v for k, v in texts.items() if isinstance(v, str)}
    if not strings["db_id"].strip():
        raise malformed(shown, line, "db_id is empty")
    qid = values.get("question_id")
    if qid is not None and (isinstance(qid, bool) or not isinstance(qid, int | str)):
        raise malformed(shown, line, "question_id is not a number or a string")
    return Question(
        qid,
        strings["db_id"],
        strings["question"],
        strings["evidence"],
        strings["SQL"],
        tuple(values),
        line,
    )


def _import_question(
    state: Collected, shown: str, position: int, span: Span, values: Question
) -> None:
    db = values.db_id.strip()
    for key in values.keys:
        if key not in KNOWN:
            state.absent[(f"BIRD {db} questions", key)] += 1
    # train.json has no question_id: the position in the file numbers it, as BIRD does.
    qid = str(values.question_id) if values.numbered else str(position)
    uid = element_id("bird", db, f"q{qid}")
    question, sql = clean(values.question), clean(values.sql)
    evidence = values.evidence
    if not question or not sql:
        state.result.review(
            "invalid-element",
            f"{shown}:{values.line}: question {qid} has no "
            f"{'question' if not question else 'SQL'}; it is not imported",
            uid,
        )
    else:
        label = state.labels[0]
        told = " ".join(evidence.split())
        interpretation = f"{label} {told}\n\n{fenced_sql(sql)}" if told else fenced_sql(sql)
        state.add(
            uid,
            title(question, headings=True),
            ExamplePayload(question=question, interpretation=interpretation),
            span,
            purposes=("sql_generation",),
        )
    _import_evidence(state, db, evidence, span)


def _import_evidence(state: Collected, db: str, evidence: str, whole: Span) -> None:
    raw = whole.text.encode("utf-8")
    offsets = string_member(raw, "evidence", evidence) if evidence.strip() else None
    for a, b in fragments(evidence):
        text = " ".join(evidence[a:b].split())
        if (db, text) in state.fragments:
            continue  # the same hint on another question: one unit, its first span
        state.fragments.add((db, text))
        span = whole
        if offsets is not None:
            start, end = offsets[a], offsets[b]
            cited = raw[start:end].decode("utf-8")
            span = Span(whole.path, whole.start + start, whole.start + end, cited)
        _import_fragment(state, db, text, span)


def _import_fragment(state: Collected, db: str, text: str, span: Span) -> None:
    reading = read_fragment(text, state.columns.get(db, set()))
    scope = f"bird:{slug(db)}"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if reading.kind == "domain":
        uid = element_id(scope, "rule", digest[:12])
        state.add(
            uid,
            title(text, headings=True),
            DomainPayload(rule=text),
            span,
            purposes=("sql_generation",),
        )
        return
    uid = element_id(scope, "term", reading.name)
    first = state.names.setdefault(uid, text)
    if first != text:  # the same name defined otherwise elsewhere: a unit of its own
        uid = element_id(scope, "term", f"{reading.name} {digest[:8]}")
    name = " ".join(reading.name.split())
    payload: Payload
    purposes: tuple[str, ...] = ("sql_generation",)
    if reading.kind == "formula":
        payload = FormulaPayload(concept=name, sql=reading.body)
    else:
        payload = GlossaryPayload(definition=reading.body)
        purposes = ("disambiguation", "sql_generation")
    state.add(uid, title(name, headings=True), payload, span, purposes=purposes, concepts=(name,))
