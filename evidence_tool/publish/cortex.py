"""A Snowflake Cortex Analyst semantic model (one YAML file), after Snowflake's "Cortex
Analyst semantic model specification" and its Verified Query Repository page
(docs.snowflake.com/en/user-guide/snowflake-cortex/cortex-analyst/semantic-model-spec).

- every ``schema.table`` the units name is a logical table (``base_table``: the
  ``database`` given, the schema, the table); every ``schema.table.column`` they name is
  one of its columns: a ``fact`` when a formula computes with it, a ``time_dimension``
  when its name says date or time, else a ``dimension``;
- a glossary unit on exactly one table or one column gives its ``description`` and
  ``synonyms`` (synonyms and variants); an enum gives the column's ``sample_values`` and
  its meanings as ``V = meaning`` lines of the description (how Cortex, and this
  project's importer, read them);
- a formula on one table is a table ``metric``, on several (or none) a model ``metric``;
- an example with fenced SQL is a ``verified_query`` (``verified_by``, ``verified_at``
  from its provenance: the curator, the declaration time in seconds since the epoch);
- domain rules and normalizations are the model's ``custom_instructions``.

Each entry has a ``# <unit id> @ <revision>`` comment above it.  Units carry no column
types: ``data_type`` (required by the specification) is ``VARCHAR`` for a dimension,
``TIMESTAMP`` for a time dimension and ``NUMBER`` for a fact, to be checked in review.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from typing import Any

from evidence_tool.errors import UsageError
from evidence_tool.publish.model import Entry, Published, Snapshot, stamp
from evidence_tool.publish.text import (
    as_text,
    described_target,
    last_part,
    slug,
    split_sql,
    table_of,
)
from evidence_tool.unit import (
    DomainPayload,
    EnumPayload,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    Unit,
)
from evidence_tool.unit.yaml_emit import Commented, dump

_TIME = re.compile(r"(^|_)(date|time|timestamp|datetime|day|month|year|at|ts)(_|$)", re.I)
DATA_TYPES = {"dimensions": "VARCHAR", "time_dimensions": "TIMESTAMP", "facts": "NUMBER"}


def _columns(unit: Unit) -> list[str]:
    p = unit.payload
    named = list(unit.metadata.applies_to.columns)
    if isinstance(p, EnumPayload):
        named.append(p.column)
    if isinstance(p, FormulaPayload | MappingPayload):
        named += p.columns
    return [c for c in named if c.count(".") >= 2]


def _tables(unit: Unit) -> list[str]:
    named = [*unit.metadata.applies_to.tables, *map(table_of, _columns(unit))]
    if isinstance(unit.payload, MappingPayload):
        named += unit.payload.tables
    return list(dict.fromkeys(n for n in named if n.count(".") == 1))


def _epoch(when: str | None) -> int | None:
    if not when:
        return None
    try:
        return int(datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


class _Model:
    def __init__(self, snap: Snapshot, database: str) -> None:
        self.snap, self.database, self.out = snap, database, Published()
        self.tables: dict[str, dict[str, list[str]]] = {}  # table -> role -> columns
        self.described: dict[str, Entry] = {}  # a table or column -> its glossary unit
        self.enums: dict[str, Entry] = {}  # column -> enum unit
        self.metrics: dict[str | None, list[Entry]] = defaultdict(list)
        self.queries: list[Entry] = []
        self.rules: list[Entry] = []

    def collect(self) -> None:
        facts = {
            c
            for e in self.snap.entries
            if isinstance(e.unit.payload, FormulaPayload)
            for c in _columns(e.unit)
        }
        enums = {
            e.unit.payload.column
            for e in self.snap.entries
            if isinstance(e.unit.payload, EnumPayload)
        }
        placed: set[str] = set()
        for entry in self.snap.entries:
            for table in _tables(entry.unit):
                self.tables.setdefault(table, {r: [] for r in DATA_TYPES})
            for column in _columns(entry.unit):
                roles = self.tables[table_of(column)]
                if column in placed:  # a set: a wide table's columns are not searched
                    continue
                placed.add(column)
                if _TIME.search(last_part(column)):
                    roles["time_dimensions"].append(column)
                elif column in facts and column not in enums:
                    roles["facts"].append(column)
                else:
                    roles["dimensions"].append(column)
        for entry in self.snap.entries:
            self.sort(entry)

    def sort(self, entry: Entry) -> None:
        unit, p = entry.unit, entry.unit.payload
        if isinstance(p, GlossaryPayload):
            target = described_target(unit)
            if target is None:
                self.out.skip(
                    unit.id,
                    "Cortex describes one table or one column; this "
                    "glossary unit applies to neither exactly one table nor one column",
                )
            elif target in self.described:
                self.out.skip(
                    unit.id,
                    f"{target} is described by "
                    f"{self.described[target].unit.id} already (one description each)",
                )
            else:
                self.described[target] = entry
        elif isinstance(p, EnumPayload):
            if p.column in self.enums:
                self.out.skip(
                    unit.id,
                    f"{p.column} has the sample values of {self.enums[p.column].unit.id} already",
                )
            else:
                self.enums[p.column] = entry
        elif isinstance(p, FormulaPayload):
            tables = _tables(unit)
            self.metrics[tables[0] if len(tables) == 1 else None].append(entry)
        elif isinstance(p, ExamplePayload):
            if split_sql(p.interpretation) is None:
                self.out.skip(
                    unit.id, "an example without a fenced sql block: a verified query needs SQL"
                )
            else:
                self.queries.append(entry)
        elif unit.kind in ("domain", "normalization"):
            self.rules.append(entry)
        elif unit.kind == "mapping":
            self.out.skip(
                unit.id,
                "a Cortex relationship needs the join columns of both "
                "tables and its join type; a mapping names neither",
            )
        elif unit.kind == "reference":
            self.out.skip(unit.id, "a semantic model has no place for a link to a document")

    def column(self, column: str, role: str) -> Commented | dict[str, Any]:
        name = last_part(column)
        item: dict[str, Any] = {"name": slug(name, "_") if name != name.lower() else name}
        described, enum = self.described.get(column), self.enums.get(column)
        text = []
        if described is not None:
            definition, synonyms = _glossary(described)
            item |= synonyms
            text.append(definition)
        enumerated = enum.unit.payload if enum is not None else None
        values = enumerated.values if isinstance(enumerated, EnumPayload) else ()
        # One line per value: the meaning's own line breaks would end it early.
        text += [f"{v.value} = {' '.join(v.meaning.split())}" for v in values if v.meaning]
        if text:
            item["description"] = "\n".join(text)
        item["expr"] = column.rsplit(".", 1)[-1]
        item["data_type"] = DATA_TYPES[role]
        if isinstance(enumerated, EnumPayload) and role != "facts":
            item["sample_values"] = [v.value for v in values]
        ids = [e.unit.id for e in (described, enum) if e is not None]
        self.out.exported += ids
        if not ids:
            return item  # a column only named by units: no unit to cite
        return Commented(item, "; ".join(stamp(i, self.snap.revision) for i in ids))

    def metric(self, entry: Entry) -> Commented:
        p = entry.unit.payload
        assert isinstance(p, FormulaPayload)
        item: dict[str, Any] = {"name": slug(p.concept, "_"), "description": entry.unit.title}
        synonyms = [c for c in entry.unit.metadata.applies_to.concepts if c != p.concept]
        if synonyms:
            item["synonyms"] = synonyms
        item["expr"] = p.sql
        self.out.exported.append(entry.unit.id)
        return Commented(item, stamp(entry.unit.id, self.snap.revision))

    def table(self, table: str) -> Commented | dict[str, Any]:
        schema, name = table.split(".", 1)
        item: dict[str, Any] = {"name": slug(f"{last_part(name)}", "_")}
        described = self.described.get(table)
        if described is not None:
            item["description"], synonyms = _glossary(described)
            item |= synonyms
            self.out.exported.append(described.unit.id)
        item["base_table"] = {
            "database": self.database,
            "schema": last_part(schema),
            "table": last_part(name),
        }
        for role in DATA_TYPES:
            cols = self.tables[table][role]
            if cols:
                item[role] = [self.column(c, role) for c in sorted(cols)]
        if self.metrics.get(table):
            item["metrics"] = [self.metric(e) for e in self.metrics[table]]
        if described is None:
            return item
        return Commented(item, stamp(described.unit.id, self.snap.revision))

    def query(self, entry: Entry) -> Commented:
        p = entry.unit.payload
        assert isinstance(p, ExamplePayload)
        parts = split_sql(p.interpretation)
        assert parts is not None
        item: dict[str, Any] = {"name": entry.unit.title, "question": p.question}
        item["sql"] = parts[1]
        when = _epoch(entry.declared_at)
        if entry.declared_by:
            item["verified_by"] = entry.declared_by
        if when is not None:
            item["verified_at"] = when
        self.out.exported.append(entry.unit.id)
        return Commented(item, stamp(entry.unit.id, self.snap.revision))

    def model(self) -> dict[str, Any]:
        self.collect()
        if not self.tables:
            raise UsageError(
                f"a Cortex semantic model needs at least one table, and no unit of revision "
                f"{self.snap.revision[:12]} names a schema.table or schema.table.column: "
                "name the tables in the units' applies_to, or publish another format"
            )
        names: dict[str, str] = {}
        tables = []
        for table in sorted(self.tables):
            entry = self.table(table)
            item = entry.value if isinstance(entry, Commented) else entry
            if item["name"] in names:  # two schemas, one table name: logical names differ
                item["name"] = slug(table, "_")
            names[item["name"]] = table
            tables.append(entry)
        model: dict[str, Any] = {"name": slug(self.snap.workspace, "_"), "tables": tables}
        if self.metrics.get(None):
            model["metrics"] = [self.metric(e) for e in self.metrics[None]]
        if self.queries:
            model["verified_queries"] = [self.query(e) for e in self.queries]
        if self.rules:
            text = "\n\n".join(_instruction(e.unit) for e in self.rules)
            ids = "\n".join(stamp(e.unit.id, self.snap.revision) for e in self.rules)
            model["custom_instructions"] = Commented(text, ids)
            self.out.exported += [e.unit.id for e in self.rules]
        return model


def _glossary(described: Entry) -> tuple[str, dict[str, Any]]:
    """A glossary unit's definition, and its synonyms and variants (if any) as ``synonyms``."""
    g = described.unit.payload
    assert isinstance(g, GlossaryPayload)
    words = list(dict.fromkeys([*g.synonyms, *g.variants]))
    return g.definition, {"synonyms": words} if words else {}


def _instruction(unit: Unit) -> str:
    p = unit.payload
    return f"{unit.title}: {p.rule}" if isinstance(p, DomainPayload) else as_text(unit)


def publish(snap: Snapshot, database: str | None = None) -> Published:
    m = _Model(snap, database or slug(snap.workspace, "_").upper())
    head = (
        "# Cortex Analyst semantic model published by evidence-tool\n"
        f"# workspace {snap.workspace}, revision {snap.revision}\n"
    )
    body = dump(m.model())
    m.out.files[""] = (head + body).encode("utf-8")
    m.out.exported.sort()
    return m.out
