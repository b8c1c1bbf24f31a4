"""BIRD text-to-SQL data (also what ThothAI loads): questions and column descriptions.

A BIRD source is a folder holding a questions file (``dev.json``, else
``train.json``, or the file the ``questions`` option names) and the
``database_description/<table>.csv`` files of each database, either as
``<db_id>/database_description/`` or under ``dev_databases/`` (or any
``*_databases/``) as BIRD ships them; a file source is the questions file alone.

- each question -> example (the question; the evidence and the SQL in a fenced
  block), id ``evidence:bird:<db_id>.q<question_id>``;
- each ``;``-separated evidence fragment -> formula, glossary term or domain
  rule (below), once per database however many questions repeat it, citing its
  first occurrence;
- each described column -> glossary (``applies_to`` its column, the expanded
  name a synonym), and a code list in ``value_description`` -> enum.

A description CSV (``original_column_name, column_name, column_description,
data_format, value_description``) is read row by row with exact byte spans
(``spans.csv_rows``, so a 200,000-row file streams).  The files in the wild have a
UTF-8 BOM on some, quoted cells over several lines, trailing spaces in names and, for
a few, Windows-1252 bytes: those are refused (E504 naming the line), since a span must
be the file's exact UTF-8 bytes; re-encoding the file (``iconv -f cp1252 -t utf-8``)
is the fix.

An evidence string is a ``;``-separated list of hints written for one question
("Eligible free rate = `Free Meal Count (K-12)` / `Enrollment (K-12)`;
female refers to gender = 'F'").  Each fragment becomes one unit:

- ``NAME = EXPR`` where EXPR is one PostgreSQL expression -> formula;
- ``NAME refers to EXPR`` (also "refer to", "means", "stands for") where EXPR is
  one expression with a comparison, arithmetic, a call, IS NULL, LIKE or BETWEEN
  -> formula (prose that happens to parse, "A and B", "K-12", is a definition);
- ``NAME refers to TEXT`` -> glossary term NAME defined as TEXT;
- anything else (``A = 'x'`` on a column itself, prose) -> domain rule.

BIRD writes SQLite: backquoted identifiers become PostgreSQL's double quotes,
which is lossless; nothing else is rewritten.

``db_id`` is the schema in ``applies_to`` (the ``schemas`` option maps it);
names that PostgreSQL would fold are quoted.  ``difficulty``, ``data_format``
and any other member are listed as not imported, counted per database/table.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    element_id,
    make_unit,
    malformed,
    option_error,
    slug,
)
from evidence_tool.importers.spans import csv_rows, json_array_items, string_member
from evidence_tool.importers.unit_parts import fenced_sql, title
from evidence_tool.unit import is_italian
from evidence_tool.unit.formula import check_expression
from evidence_tool.unit.model import (
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    Payload,
)

_QUOTES = "'\"`"
_OPEN, _CLOSE = "([", ")]"
# A match starts only where a blank run starts (the lookbehind): tried inside a run, the
# pattern rescanned the rest of the run at every blank, quadratic in its length.
_DEFINES = re.compile(r"(?<!\s)\s+(?:refers?\s+to|means|stands\s+for)\s+", re.IGNORECASE)
# What makes a definition SQL: a comparison, arithmetic, a call, or a SQL-only keyword.
# Words that also read as prose ("A and B", "K-12") are not enough.
_OPERATOR = re.compile(
    r"[=<>+*/%(]|\bis\s+(?:not\s+)?null\b|\b(?:like|ilike|between)\b", re.IGNORECASE
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*")


@dataclass(frozen=True)
class Reading:
    kind: str  # "formula", "glossary" or "domain"
    name: str  # the concept or term ("" for a rule)
    body: str  # the SQL of a formula, the definition of a term, the rule's text


def _opens(text: str, i: int) -> bool:
    """True when the quote character at ``i`` opens a quoted part: an apostrophe inside a
    word ("vessel's") does not."""
    return text[i] != "'" or i == 0 or not text[i - 1].isalnum()


def fragments(evidence: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of the ``;``-separated fragments, trimmed and nonempty;
    a ``;`` inside quotes or brackets does not split."""
    out: list[tuple[int, int]] = []
    start, depth, quote = 0, 0, ""
    for i, ch in enumerate(evidence + ";"):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in _QUOTES and _opens(evidence, i):
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == ";" and (depth == 0 or i == len(evidence)):
            a, b = start, i
            while a < b and evidence[a].isspace():
                a += 1
            while b > a and evidence[b - 1].isspace():
                b -= 1
            if a < b:
                out.append((a, b))
            start = i + 1
    return out


def to_postgres(sql: str) -> str:
    """SQLite's `ident` as PostgreSQL's "ident" (a quote inside doubled)."""
    out: list[str] = []
    i = 0
    while i < len(sql):
        ch = sql[i]
        if ch in "'\"":
            j = sql.find(ch, i + 1)
            j = len(sql) - 1 if j < 0 else j
            out.append(sql[i : j + 1])
            i = j + 1
        elif ch == "`":
            j = sql.find("`", i + 1)
            if j < 0:
                return sql  # unbalanced: left as written, the parser will say why
            out.append('"' + sql[i + 1 : j].replace('"', '""') + '"')
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _unquoted(sql: str) -> str:
    """``sql`` with quoted strings and identifiers blanked, for operator tests."""
    return re.sub(r"'[^']*'|\"[^\"]*\"", " x ", sql)


def _is_expression(sql: str) -> bool:
    return bool(sql) and "\n" not in sql and check_expression(sql) is None


def _column_like(name: str, columns: Set[str]) -> bool:
    """True when the left side of ``=`` is a column (a condition, not a named formula)."""
    if name[:1] in _QUOTES or name.startswith("["):
        return True
    return bool(_IDENT.fullmatch(name)) and name.rsplit(".", 1)[-1].lower() in columns


def _equals_at(text: str) -> int:
    """Index of the first ``=`` outside quotes that is not part of <=, >=, !=, <> or ==."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in _QUOTES and _opens(text, i):
            quote = ch
        elif ch == "=":
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if before not in "<>!=" and after != "=":
                return i
    return -1


def read_fragment(text: str, columns: Set[str]) -> Reading:
    """How one fragment is imported; ``columns`` are the database's column names (lower
    case), so ``gender = 'F'`` is a condition rather than a formula named gender."""
    defined = _DEFINES.search(text)
    if defined is not None:
        name, body = text[: defined.start()].strip(), text[defined.end() :].strip()
        if name and body:
            sql = to_postgres(body)
            if _OPERATOR.search(_unquoted(sql)) and _is_expression(sql):
                return Reading("formula", name, sql)
            return Reading("glossary", name, body)
    at = _equals_at(text)
    if at > 0:
        name, sql = text[:at].strip(), to_postgres(text[at + 1 :].strip())
        if name and not _column_like(name, columns) and _is_expression(sql):
            return Reading("formula", name, sql)
    return Reading("domain", "", text)


HEADER = (
    "original_column_name",
    "column_name",
    "column_description",
    "data_format",
    "value_description",
)
REQUIRED = ("original_column_name", "column_description")


@dataclass(frozen=True)
class Row:
    cells: dict[str, str]  # header name -> cell, every HEADER name present ("" if absent)
    span: Span  # the record's exact text, line end excluded
    line: int  # 1-based first line


def rows(f: SourceFile, shown: str) -> Iterator[Row]:
    """The described columns of one file (the header checked, blank rows skipped)."""
    header: list[str] | None = None
    for cells, span, line in csv_rows(f, shown):
        if header is None:
            header = _header(cells, shown, line)
        elif any(c.strip() for c in cells):
            if any(c.strip() for c in cells[len(header) :]):
                why = f"the row has {len(cells)} cells, the header {len(header)}"
                raise malformed(shown, line, why)
            values = dict.fromkeys(HEADER, "")
            values.update(zip(header, cells, strict=False))
            yield Row(values, span, line)
    if header is None:
        raise malformed(shown, None, f"the file is empty; a description CSV starts {HEADER}")


def _header(cells: list[str], shown: str, line: int) -> list[str]:
    names = [c.strip().lower() for c in cells]
    unknown = [n for n in names if n not in HEADER]
    missing = [n for n in REQUIRED if n not in names]
    if unknown or missing:
        what = f"has {', '.join(map(repr, unknown))}" if unknown else f"lacks {missing[0]}"
        raise malformed(
            shown,
            line,
            f"the header {what}; a BIRD description file has the columns {', '.join(HEADER)}",
        )
    return names


# -- value descriptions ---------------------------------------------------------------

# A stored value: quoted text, a number, or a short code (N, Y, W, HS, ...).
_CODE = r"\"[^\"\n]+\"|'[^'\n]+'|-?\d+(?:\.\d+)?|[A-Za-z]{1,3}|[A-Z0-9_]{1,10}"
# The meaning runs to the end and is trimmed by hand: a lazy group before trailing blanks
# backtracked quadratically on a long blank run inside the meaning.
_ITEM = re.compile(rf"\s*(?:[•*-]\s*)?({_CODE})\s*[:=：]\s*(\S.*)")
_SPLIT = re.compile(rf"[;\n]|,\s+(?=(?:{_CODE})\s*[:=：])")


def code_list(text: str) -> list[tuple[str, str]] | None:
    """The (value, meaning) pairs of a code list such as ``0: N; 1: Y`` or ``"W": white``:
    the first run of two or more consecutive items; None when there is none (a unit, a
    format note or prose stays in the column's definition only)."""
    run: list[tuple[str, str]] = []
    for item in _SPLIT.split(text):
        if not item.strip():
            continue
        m = _ITEM.match(item)
        if m is None:
            if len(run) >= 2:
                break
            run = []
            continue
        value = m.group(1)
        if value[0] in "\"'":
            value = value[1:-1]
        run.append((value, m.group(2).rstrip()))
    return run if len(run) >= 2 else None


QUESTION_FILES = ("dev.json", "train.json")
_DESCRIPTION = re.compile(r"^(?:[^/]*_databases/)?([^/]+)/database_description/([^/]+)\.csv$")


class BirdImporter:
    format = "bird"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {"schemas": dict, "questions": str}

    def read(self, source: ImportInput) -> ImportResult:
        state = Collected(source, _schemas(source))
        tables, questions, other = _layout(source)
        for db, table, f in tables:
            import_table(state, db, table, f)
        if questions is not None:
            import_questions(state, questions)
        for (element, what), n in sorted(state.absent.items()):
            state.result.omit(f"{element} ({n})", what)
        if other:
            state.result.skipped["other files"] = other
        return state.result


def _schemas(source: ImportInput) -> dict[str, str]:
    schemas = source.options.get("schemas", {})
    for db, schema in schemas.items():
        if not isinstance(schema, str) or not schema.strip():
            where = f"{source.key}.options.schemas.{db}"
            raise option_error(
                where, f"{schema!r} is not a schema name; map each db_id to a schema name"
            )
    return dict(schemas)


def _layout(
    source: ImportInput,
) -> tuple[list[tuple[str, str, SourceFile]], SourceFile | None, int]:
    """(db, table, file) of each description CSV, the questions file, the other files' count."""
    tables: list[tuple[str, str, SourceFile]] = []
    rest: list[SourceFile] = []
    for f in source.files:
        m = _DESCRIPTION.match(f.path)
        if m:
            tables.append((m.group(1), m.group(2).strip(), f))
        else:
            rest.append(f)
    questions = _questions_file(source, rest)
    if questions is None and not tables:
        # An empty proposal would retire every unit imported before: refuse instead.
        raise malformed(
            source.root or ".",
            None,
            "holds no BIRD files: neither dev.json nor train.json at its top, nor any "
            "<db_id>/database_description/<table>.csv; point the entry at the BIRD folder "
            "(or name the questions file with the option questions)",
        )
    other = len(rest) - (questions is not None)
    return tables, questions, other


def _questions_file(source: ImportInput, rest: list[SourceFile]) -> SourceFile | None:
    named = source.options.get("questions")
    if named is not None:
        found = source.file(named)
        if found is None:
            where = f"{source.key}.options.questions"
            raise option_error(
                where,
                f"the source holds no file {named!r}; name the questions file relative to the "
                "source's folder",
            )
        return found
    if len(source.files) == 1 and rest and rest[0].path.endswith(".json"):
        return rest[0]  # a file source: the questions file itself
    return next((f for name in QUESTION_FILES for f in rest if f.path == name), None)


_BARE = re.compile(r"[a-z_][a-z0-9_$]*")
_LABELS = {  # (evidence, values, an enum's title) in each heading language
    "en": ("Evidence:", "Values:", "{column} values"),
    "it": ("Conoscenza esterna:", "Valori:", "Valori di {column}"),
}


def quote(name: str) -> str:
    """A name as PostgreSQL needs it written: bare only when it would not fold or break."""
    return name if _BARE.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def clean(text: str) -> str:
    """A cell or member as unit text: line ends as the unit format writes them, trimmed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


@dataclass
class Collected:
    """What one read accumulates: the result, per-database names, not-imported counts."""

    source: ImportInput
    schemas: dict[str, str]
    result: ImportResult = field(default_factory=ImportResult)
    columns: dict[str, set[str]] = field(default_factory=dict)  # db -> lower-case names
    fragments: set[tuple[str, str]] = field(default_factory=set)  # (db, fragment) imported
    names: dict[str, str] = field(default_factory=dict)  # term id -> its first fragment
    absent: Counter[tuple[str, str]] = field(default_factory=Counter)  # (element, what)

    @property
    def labels(self) -> tuple[str, str, str]:
        return _LABELS["it" if is_italian(self.source.language) else "en"]

    def schema(self, db: str) -> str:
        return self.schemas.get(db, db)

    def add(self, uid: str, title: str, payload: Payload, span: Span, **kw: Any) -> None:
        unit = make_unit(id=uid, language=self.source.language, title=title, payload=payload, **kw)
        self.result.units.append(Imported(unit, [span]))


def import_table(state: Collected, db: str, table: str, f: SourceFile) -> None:
    shown = state.source.shown(f.path)
    known = state.columns.setdefault(db, set())
    for row in rows(f, shown):
        span = row.span
        name = row.cells["original_column_name"].strip()
        if not name or not name.isprintable():
            state.result.review(
                "invalid-element",
                f"{shown}:{row.line}: the row names no column (original_column_name "
                f"{name!r}); it is not imported",
            )
            continue
        known.add(name.lower())
        if row.cells["data_format"].strip():
            state.absent[(f"BIRD {db}.{table} column descriptions", "data_format")] += 1
        import_column(state, db, table, name, row, span)


def import_column(state: Collected, db: str, table: str, name: str, row: Row, span: Span) -> None:
    cells = row.cells
    expanded = " ".join(cells["column_name"].split())
    described = clean(cells["column_description"])
    values = clean(cells["value_description"])
    table_ref = f"{quote(state.schema(db))}.{quote(table)}"
    column_ref = f"{table_ref}.{quote(name)}"
    uid = element_id("bird", db, table, name)
    _, values_label, enum_title = state.labels
    head = described or expanded
    if head or values:
        text = f"{head}\n\n{values_label} {values}" if head and values else head or values
        synonyms = (expanded,) if expanded and expanded.lower() != name.lower() else ()
        state.add(
            uid,
            f"{table}.{name}",
            GlossaryPayload(definition=text, synonyms=synonyms),
            span,
            purposes=("schema_linking", "disambiguation"),
            tables=(table_ref,),
            columns=(column_ref,),
        )
    codes = code_list(values) if values else None
    if codes is None:
        return
    if len({v for v, _ in codes}) != len(codes):
        state.result.review(
            "invalid-element",
            f"{state.source.shown(span.path)}:{row.line}: the value list of {table}.{name} "
            "names one value twice; no enum is imported for it",
            f"{uid}.values",
        )
        return
    state.add(
        element_id("bird", db, table, name, "values"),
        enum_title.format(column=f"{table}.{name}"),
        EnumPayload(column=column_ref, values=tuple(EnumValue(v, m) for v, m in codes)),
        span,
        purposes=("sql_generation", "schema_linking"),
        tables=(table_ref,),
        columns=(column_ref,),
    )


QUESTION_REQUIRED = ("db_id", "question", "evidence", "SQL")
KNOWN = ("question_id", *QUESTION_REQUIRED)


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
    missing = [k for k in QUESTION_REQUIRED if k not in values]
    if missing:
        raise malformed(
            shown,
            line,
            f"the question lacks {', '.join(missing)}; a BIRD question has "
            "question_id, db_id, question, evidence, SQL and difficulty",
        )
    texts = {k: values[k] for k in QUESTION_REQUIRED}
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
