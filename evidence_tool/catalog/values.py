"""Check 5 (``--sample-values``): an enum unit's documented values against the values
its column really stores.

The database is asked, in one bounded query per enum column, for its ``SAMPLE_LIMIT``
most frequent non-NULL values and for the count of each documented value.  Values
compare as text, exactly as the database prints them (``CAST(col AS TEXT)`` in
SQLite, ``col::text`` in PostgreSQL): an integer column's 1 matches the documented
``"1"``, a numeric(3,1)'s 1.0 does not; ``char(n)`` loses its padding first, as
PostgreSQL's cast does.  A documented value never stored is W186; a value among
the most frequent that is not documented is W187, with its row count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from evidence_tool.catalog.fences import locate
from evidence_tool.catalog.model import Catalog, Relation, quote_ident, split_name
from evidence_tool.errors import EvidenceWarning
from evidence_tool.unit import EnumPayload, Unit

SAMPLE_LIMIT = 50  # the most frequent stored values compared with the documented ones
SAMPLE_TIMEOUT_S = 30.0  # per column, SQLite (PostgreSQL has its statement_timeout)


@dataclass(frozen=True)
class ValueSample:
    """What to ask the database: one enum unit's column and its documented values."""

    relation: Relation
    column: str  # as the catalog spells it
    documented: tuple[str, ...]


@dataclass(frozen=True)
class Sampled:
    """The database's answer: value -> rows, or why it could not say."""

    counts: dict[str, int] | None
    problem: str | None = None


def sample_of(unit: Unit, catalog: Catalog) -> ValueSample | None:
    """The sample an enum unit asks for; None when its ``## Column`` does not resolve
    (check 2 has said so already)."""
    payload = unit.payload
    if not isinstance(payload, EnumPayload):
        return None
    parts = split_name(payload.column) or []
    if len(parts) not in (2, 3):
        return None
    rel = catalog.relation(parts[0] if len(parts) == 3 else None, parts[-2])
    col = rel.column(parts[-1], fold_case=catalog.fold_case) if rel else None
    if rel is None or col is None:
        return None
    return ValueSample(rel, col.name, tuple(v.value for v in payload.values))


def compare(
    unit: Unit, text: str, path: str, sample: ValueSample, sampled: Sampled
) -> list[EvidenceWarning]:
    """W186 for each documented value not stored, W187 for each frequent undocumented one."""
    column = f"{sample.relation.qualified}.{quote_ident(sample.column)}"

    def warn(code: str, message: str, line: int | None) -> EvidenceWarning:
        return EvidenceWarning(f"{unit.id}: {message}", path, line, code=code)

    if sampled.counts is None:
        line = locate(text, unit.kind, unit.language).headings.get("column")
        why = f"the stored values of {column} were not compared: {sampled.problem}"
        return [warn("W188", why, line)]
    counts, documented = sampled.counts, set(sample.documented)
    lines = _value_lines(text) if any(not counts.get(v) for v in documented) else {}
    out = [
        warn(
            "W186",
            f"the value {_quoted(v)} is documented, but no row of {column} stores it (0 rows)",
            lines.get(v),
        )
        for v in sample.documented
        if counts.get(v, 0) == 0
    ]
    frequent = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:SAMPLE_LIMIT]
    undocumented = [(v, n) for v, n in frequent if v not in documented]
    # positions are read back from the text only for a warning: locate parses the YAML again
    values_line = (
        locate(text, unit.kind, unit.language).headings.get("values") if undocumented else None
    )
    out += [
        warn(
            "W187",
            f"{column} stores {_quoted(v)} in {n} row(s), but the unit does not document it",
            values_line,
        )
        for v, n in undocumented
    ]
    return out


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _value_lines(text: str) -> dict[str, int]:
    """File line of each ``### "value"`` heading."""
    out: dict[str, int] = {}
    for i, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.startswith('### "'):
            try:
                value = json.loads(line[4:].strip())
            except ValueError:
                continue
            if isinstance(value, str):
                out.setdefault(value, i)
    return out
