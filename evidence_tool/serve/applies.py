"""``evidence_for``: every active unit whose ``applies_to`` names the given tables or columns.

Names are compared case-insensitively.  An unqualified table (``admissions``) is resolved
as PostgreSQL would, through the search path (``evidence.catalog.search_path``, default
``[public]``): the first schema on it whose table a unit names wins.  A name found only
outside the search path, in more than one schema, is ambiguous: all its tables are
answered and ``notes`` says so.  A column is ``column``, ``table.column`` or
``schema.table.column``; its table part is resolved the same way.
"""

from __future__ import annotations

from collections import defaultdict

from evidence_tool.activation.records import IndexRecord
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.serve import shapes
from evidence_tool.serve.revisions import RevisionView


def _lower(values: JsonValue) -> list[str]:
    return [v.lower() for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _named(record: IndexRecord) -> tuple[set[str], set[str]]:
    """(tables, columns) the unit's applies_to names; a column's table counts as named."""
    applies = record.applies_to
    columns = set(_lower(applies.get("columns")))
    tables = set(_lower(applies.get("tables")))
    tables |= {c.rsplit(".", 1)[0] for c in columns if c.count(".") >= 2}
    return tables, columns


def _resolve_table(
    name: str, known: set[str], search_path: tuple[str, ...], notes: list[str]
) -> list[str]:
    """The qualified tables an asked-for name stands for."""
    name = name.lower()
    if "." in name:
        return [name]
    for schema in search_path:
        if f"{schema.lower()}.{name}" in known:
            return [f"{schema.lower()}.{name}"]
    found = sorted(t for t in known if t.rsplit(".", 1)[-1] == name)
    if not found:
        notes.append(f"no active unit names a table '{name}'")
    elif len(found) > 1:
        notes.append(
            f"'{name}' is ambiguous: no schema of the search path ({', '.join(search_path)}) "
            f"holds it, and units name {', '.join(found)}; all are answered"
        )
    return found or [name]


def evidence_for(
    view: RevisionView, tables: list[str], columns: list[str], search_path: tuple[str, ...]
) -> JsonObject:
    """The active units about ``tables``/``columns``, grouped by kind, with what each name
    was resolved to."""
    named = [(r, *_named(r)) for r in view.records()]
    known = set().union(*(t for _, t, _ in named)) if named else set()
    notes: list[str] = []
    resolved: JsonObject = {}
    want_tables: set[str] = set()
    for t in tables:
        hits = _resolve_table(t, known, search_path, notes)
        resolved[t] = list[JsonValue](hits)
        want_tables.update(hits)
    want_columns: list[tuple[str | None, str]] = []  # (qualified table or None, column)
    for c in columns:
        parts = c.lower().rsplit(".", 1)
        if len(parts) == 1:
            want_columns.append((None, parts[0]))
            resolved[c] = [f"*.{parts[0]}"]
            continue
        owners = _resolve_table(parts[0], known, search_path, notes)
        want_columns += [(o, parts[1]) for o in owners]
        resolved[c] = [f"{o}.{parts[1]}" for o in owners]
    groups: dict[str, list[JsonValue]] = defaultdict(list)
    for record, held_tables, held_columns in sorted(named, key=lambda n: n[0].id):
        if held_tables & want_tables or any(
            _has_column(held_columns, owner, col) for owner, col in want_columns
        ):
            groups[record.kind].append(shapes.unit(view, record))
    return {
        "resolved": resolved,
        "notes": list[JsonValue](notes),
        "count": sum(len(v) for v in groups.values()),
        "by_kind": {k: groups[k] for k in sorted(groups)},
    }


def _has_column(held: set[str], owner: str | None, column: str) -> bool:
    if owner is not None:
        return f"{owner}.{column}" in held
    return any(h.rsplit(".", 1)[-1] == column for h in held)
