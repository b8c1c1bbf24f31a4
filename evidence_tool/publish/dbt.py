"""A patch for a dbt project, for review in its repository (the project itself is never
touched): ``evidence_docs.md`` with one docs block per glossary or enum unit, and
``evidence_properties.yml`` describing the models (tables) and columns those units name.

- a glossary unit on exactly one table -> the model's ``description``; on exactly one
  column -> the column's; both as ``{{ doc('...') }}`` of its block;
- an enum -> the column's ``accepted_values`` test, and its meanings as ``- `V`: meaning``
  lines of the column's docs block (where dbt's docs show them, and where this
  project's dbt importer reads them back);
- ``meta.evidence`` of each model and column names the units and the snapshot revision,
  and a ``{# ... #}`` comment above each docs block names its unit and revision.

A model is named by its table (dbt has no schema in a model's name: the project's
``schema`` config decides it), so a table name two schemas share is published once.
Rules, examples, formulas, mappings, normalizations and references have no place in
model properties: not exported.
"""

from __future__ import annotations

from typing import Any

from evidence_tool.publish.model import Entry, Published, Snapshot, stamp
from evidence_tool.publish.text import (
    described_target,
    id_slug,
    last_part,
    slug,
    table_of,
    values_list,
)
from evidence_tool.unit import EnumPayload, GlossaryPayload
from evidence_tool.unit.yaml_emit import Commented, dump

DOCS = "evidence_docs.md"
PROPERTIES = "evidence_properties.yml"
FLOW = frozenset({"values", "units"})


def _block(entry: Entry) -> str:
    return "evidence__" + slug(id_slug(entry.unit.id), "_")


class _Patch:
    def __init__(self, snap: Snapshot) -> None:
        self.snap, self.out = snap, Published()
        self.models: dict[str, str] = {}  # model name -> schema.table
        self.model_doc: dict[str, Entry] = {}  # table -> glossary
        self.columns: dict[str, dict[str, list[Entry]]] = {}  # table -> column -> units
        self.blocks: list[str] = []
        self.names: set[str] = set()

    def target(self, entry: Entry) -> tuple[str, str | None] | None:
        """(table, column or None) the unit describes, or None (not exported)."""
        p = entry.unit.payload
        target = p.column if isinstance(p, EnumPayload) else described_target(entry.unit)
        if target is not None and target.count(".") == 1:
            return target, None
        if target is None:
            self.out.skip(
                entry.unit.id,
                "dbt describes one model or one column; this unit "
                "applies to neither exactly one table nor one column",
            )
            return None
        if target.count(".") < 2:
            self.out.skip(entry.unit.id, f"{target} is not schema.table.column")
            return None
        return table_of(target), target

    def place(self, entry: Entry) -> None:
        if not isinstance(entry.unit.payload, GlossaryPayload | EnumPayload):
            kind = entry.unit.kind
            self.out.skip(
                entry.unit.id,
                f"dbt model properties describe models and columns; "
                f"a {kind} unit has no place there",
            )
            return
        found = self.target(entry)
        if found is None:
            return
        table, column = found
        model = last_part(table)
        if self.models.setdefault(model, table) != table:
            self.out.skip(
                entry.unit.id,
                f"the model {model} is {self.models[model]} already "
                "(a dbt model name is one table)",
            )
            return
        if column is None:
            if table in self.model_doc:
                self.out.skip(
                    entry.unit.id,
                    f"{table} is described by {self.model_doc[table].unit.id} already",
                )
                return
            self.model_doc[table] = entry
        else:
            units = self.columns.setdefault(table, {}).setdefault(column, [])
            if any(type(u.unit.payload) is type(entry.unit.payload) for u in units):
                self.out.skip(entry.unit.id, f"{column} has a {entry.unit.kind} unit already")
                return
            units.append(entry)
        self.out.exported.append(entry.unit.id)

    def block(self, name: str, units: list[Entry], text: str) -> str:
        # Two ids can slug to one block name (a.b, a-b); dbt refuses a name defined twice.
        base, n = name, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        marks = "".join(f"{{# {stamp(u.unit.id, self.snap.revision)} #}}\n" for u in units)
        self.blocks.append(f"{marks}{{% docs {name} %}}\n{text.strip()}\n{{% enddocs %}}\n")
        return f"{{{{ doc('{name}') }}}}"

    def meta(self, units: list[Entry]) -> dict[str, Any]:
        # config.meta: where dbt 1.10+ wants meta (a top-level meta is deprecated).
        ids = [u.unit.id for u in units]
        return {"meta": {"evidence": {"units": ids, "revision": self.snap.revision}}}

    def column(self, column: str, units: list[Entry]) -> Commented:
        units = sorted(units, key=lambda u: u.unit.kind != "glossary")
        item: dict[str, Any] = {"name": last_part(column)}
        text = []
        enum = None
        for u in units:
            p = u.unit.payload
            if isinstance(p, GlossaryPayload):
                text.append(p.definition)
            elif isinstance(p, EnumPayload):
                enum = p
                text.append(values_list(p.values))
        item["description"] = self.block(_block(units[0]), units, "\n\n".join(text))
        item["config"] = self.meta(units)
        if enum is not None:
            values = [v.value for v in enum.values]
            # The meanings also describe the test itself (a data test's description, dbt
            # 1.9+), so a failing test says what each accepted value means.
            test = {"arguments": {"values": values}, "description": values_list(enum.values)}
            item["data_tests"] = [{"accepted_values": test}]
        return Commented(item, "; ".join(stamp(u.unit.id, self.snap.revision) for u in units))

    def model(self, name: str, table: str) -> Commented:
        item: dict[str, Any] = {"name": name}
        described = self.model_doc.get(table)
        units = [described] if described else []
        if described is not None and isinstance(described.unit.payload, GlossaryPayload):
            item["description"] = self.block(
                _block(described), units, described.unit.payload.definition
            )
        columns = self.columns.get(table, {})
        every = units + [u for c in sorted(columns) for u in columns[c]]
        item["config"] = self.meta(every)
        if columns:
            item["columns"] = [self.column(c, columns[c]) for c in sorted(columns)]
        return Commented(item, f"{table}: " + ", ".join(u.unit.id for u in every))

    def build(self) -> Published:
        for entry in self.snap.entries:
            self.place(entry)
        models = [self.model(n, t) for n, t in sorted(self.models.items())]
        head = (
            "# dbt properties published by evidence-tool (review, then copy into the project)\n"
            f"# workspace {self.snap.workspace}, revision {self.snap.revision}\n"
        )
        self.out.files[PROPERTIES] = (
            head + dump({"version": 2, "models": models}, flow_keys=FLOW)
        ).encode()
        docs = "".join(f"\n{b}" for b in self.blocks)
        intro = (
            "{# dbt docs blocks published by evidence-tool: workspace "
            f"{self.snap.workspace}, revision {self.snap.revision} #}}\n"
        )
        self.out.files[DOCS] = (intro + docs).encode()
        return self.out


def publish(snap: Snapshot) -> Published:
    return _Patch(snap).build()
