"""Text helpers shared by the publishers: names from ids, the SQL of an example."""

from __future__ import annotations

import re

from evidence_tool.unit import (
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    NormalizationPayload,
    ReferencePayload,
    Unit,
)

_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*sql[ \t]*\n(.*?)\n\1[ \t]*$", re.S | re.M)
_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str, sep: str = "-") -> str:
    """A lower-case name of letters, digits and ``sep`` (file names, Cortex names)."""
    return _SLUG.sub(sep, text.lower()).strip(sep) or "unit"


def id_slug(unit_id: str) -> str:
    """A file name from a unit id: ``evidence:admin:ward`` -> ``admin.ward`` (the
    ``evidence:`` prefix every id carries dropped, ``:`` as ``.``)."""
    return unit_id.removeprefix("evidence:").replace(":", ".")


def split_sql(interpretation: str) -> tuple[str, str] | None:
    """(notes, sql) of an example whose interpretation ends with one fenced ``sql`` block;
    None when it has none.  The notes are the text before the fence, trimmed."""
    found = list(_FENCE.finditer(interpretation))
    if not found:
        return None
    last = found[-1]
    if interpretation[last.end() :].strip():
        return None  # text after the SQL: no target keeps that order
    return interpretation[: last.start()].strip(), last.group(2).strip()


def table_of(column: str) -> str:
    """``schema.table`` of a ``schema.table.column`` name (quoted parts kept)."""
    return column.rsplit(".", 1)[0]


def last_part(name: str) -> str:
    part = name.rsplit(".", 1)[-1]
    return part[1:-1].replace('""', '"') if part.startswith('"') else part


def fenced(sql: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", sql)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}sql\n{sql.strip()}\n{fence}"


def _code(value: str) -> str:
    return f"`{value}`" if "`" not in value and value.strip() == value and value else repr(value)


def values_list(values: tuple[EnumValue, ...]) -> str:
    """An enum's values as Markdown bullets ``- `V`: meaning`` (the shape dbt's importer
    and a reader both take)."""
    return "\n".join(
        f"- {_code(v.value)}: {v.meaning}".rstrip() if v.meaning else f"- {_code(v.value)}"
        for v in values
    )


def as_text(unit: Unit) -> str:
    """What a unit says, as Markdown prose for a target that holds only text (Vanna's
    documentation, WrenAI's instructions).  A domain rule is its rule, unchanged."""
    p = unit.payload
    if isinstance(p, DomainPayload):
        return p.rule
    if isinstance(p, GlossaryPayload):
        words = [*p.synonyms, *p.variants]
        more = f"\n\nAlso called: {', '.join(words)}." if words else ""
        return f"{unit.title}: {p.definition}{more}"
    if isinstance(p, EnumPayload):
        return f"{unit.title}. The values of `{p.column}`:\n\n{values_list(p.values)}"
    if isinstance(p, FormulaPayload):
        return f"{unit.title}: {p.concept} is computed as\n\n{fenced(p.sql)}"
    if isinstance(p, MappingPayload):
        names = ", ".join(f"`{n}`" for n in (*p.tables, *p.columns))
        return f"{unit.title}: the concept {p.concept} is stored in {names}."
    if isinstance(p, NormalizationPayload):
        return f"{unit.title}: write {p.input} as {p.output}.\n\n{p.rule}"
    if isinstance(p, ReferencePayload):
        return f"{unit.title}: see {p.label} <{p.url}>.\n\n{p.description}"
    if isinstance(p, ExamplePayload):
        return f"{p.question}\n\n{p.interpretation}"
    raise TypeError(f"no text form for {type(p).__name__}")  # a new kind must choose one


def described_target(unit: Unit) -> str | None:
    """The one table or column a glossary unit describes: one column (its table may be
    named too), or one table and no column; None otherwise."""
    a = unit.metadata.applies_to
    if len(a.columns) == 1 and set(a.tables) <= {table_of(a.columns[0])}:
        return a.columns[0] if a.columns[0].count(".") >= 2 else None
    if len(a.tables) == 1 and not a.columns and a.tables[0].count(".") == 1:
        return a.tables[0]
    return None
