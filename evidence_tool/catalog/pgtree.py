"""A typed, read-only view of pglast's JSON parse tree (``parser.parse_sql_json``).

The tree is PostgreSQL's own, parsed from JSON: the one place the catalog meets it is
this view.  A key PostgreSQL leaves out (a default) reads as an empty node, an empty
list, ``""`` or ``None``, as the ``.get(key, {})`` reads it replaces did.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evidence_tool.jsonvalue import JsonValue


class Node:
    """One node of the parse tree; ``node["RangeVar"]`` is the child under that key."""

    __slots__ = ("raw",)

    def __init__(self, raw: JsonValue) -> None:
        self.raw = raw

    def __contains__(self, key: str) -> bool:
        return isinstance(self.raw, dict) and key in self.raw

    def __getitem__(self, key: str) -> Node:
        return Node(self.raw.get(key) if isinstance(self.raw, dict) else None)

    def get(self, key: str, default: Node) -> Node:
        """The child under ``key``, or ``default`` when the node has no such key."""
        if isinstance(self.raw, dict) and key in self.raw:
            return Node(self.raw[key])
        return default

    def nodes(self, key: str) -> list[Node]:
        """The list under ``key`` (empty when absent)."""
        found = self[key].raw
        return [Node(v) for v in found] if isinstance(found, list) else []

    def opt(self, key: str) -> str | None:
        """The string under ``key``, or None."""
        found = self[key].raw
        return found if isinstance(found, str) else None

    def text(self, key: str, default: str = "") -> str:
        """The string under ``key``, or ``default``."""
        found = self.opt(key)
        return default if found is None else found

    def flag(self, key: str) -> bool:
        """A boolean option (``if_not_exists``, ``missing_ok``): absent is false."""
        return bool(self[key].raw)

    def int(self, key: str, default: int = 0) -> int:
        found = self[key].raw
        return found if isinstance(found, int) and not isinstance(found, bool) else default

    @property
    def sval(self) -> str:
        """A ``{"String": {"sval": ...}}`` node's text (names, aliases, fields)."""
        return self["String"].text("sval")

    def relname(self) -> str:
        """A RangeVar's name as written, schema-qualified when it says a schema."""
        schema = self.opt("schemaname")
        return f"{schema}.{self.text('relname')}" if schema else self.text("relname")


def under(tree: object, key: str) -> Iterator[dict[str, Any]]:
    """Every node under ``key`` in a raw parse tree (dicts and lists), depth first; not
    inside one found (a ColumnRef holds no other, a RangeVar no relation)."""
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found = node.get(key)
            if isinstance(found, dict):
                yield found
                continue
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


_TYPE_NAMES = {
    "int8": "bigint",
    "int4": "integer",
    "int2": "smallint",
    "float8": "double precision",
    "float4": "real",
    "bool": "boolean",
    "bpchar": "character",
    "varchar": "character varying",
    "timestamptz": "timestamp with time zone",
    "timestamp": "timestamp without time zone",
    "timetz": "time with time zone",
    "time": "time without time zone",
}


def type_name(node: Node) -> str:
    """A pglast TypeName as PostgreSQL's format_type prints it (int4 -> integer)."""
    names = [n.sval for n in node.nodes("names")]
    if len(names) == 2 and names[0] == "pg_catalog":
        names = names[1:]
    text = _TYPE_NAMES.get(names[0], names[0]) if len(names) == 1 else ".".join(names)
    mods = [m["A_Const"]["ival"].int("ival") for m in node.nodes("typmods") if _is_int(m)]
    if mods:
        spec = "(" + ",".join(str(m) for m in mods) + ")"
        if text.startswith(("timestamp ", "time ")):  # timestamp(3) without time zone
            head, _, zone = text.partition(" ")
            text = f"{head}{spec} {zone}"
        else:
            text += spec
    return text + "[]" * len(node.nodes("arrayBounds"))


def _is_int(mod: Node) -> bool:
    return "ival" in mod["A_Const"]
