"""How one DDL statement changes the relations, as PostgreSQL would apply it.

CREATE TABLE (LIKE, INHERITS, PARTITION OF), CREATE VIEW / TABLE AS /
MATERIALIZED VIEW, ALTER TABLE (ADD, DROP, ALTER TYPE of a column), RENAME of a
relation or a column, DROP TABLE / VIEW.  Anything else leaves them as they are.

A view's columns are named as PostgreSQL names them: a target's alias, else the last
field of a column reference, else the function or cast name, else ``?column?``.  ``*``
and ``alias.*`` expand from the relations of FROM that earlier statements defined.
Types come from the referenced column or the cast; anything else is ``unknown`` (the
live PostgreSQL path will report real types).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evidence_tool.catalog.model import Column, Relation
from evidence_tool.catalog.pgtree import Node, type_name
from evidence_tool.errors import Diagnostic

# The objects whose RENAME or DROP changes the relations (a column's RENAME too).
_RELATIONS = ("OBJECT_TABLE", "OBJECT_VIEW", "OBJECT_MATVIEW")


@dataclass
class DdlState:
    search_path: tuple[str, ...]
    relations: dict[tuple[str, str], Relation] = field(default_factory=dict)
    findings: list[Diagnostic] = field(default_factory=list)

    def find(self, rv: Node) -> Relation | None:
        schema, name = rv.opt("schemaname"), rv.text("relname")
        if schema:
            return self.relations.get((schema, name))
        for s in self.search_path:
            if (s, name) in self.relations:
                return self.relations[(s, name)]
        return None

    def key(self, rv: Node) -> tuple[str, str]:
        return (rv.opt("schemaname") or self.search_path[0], rv.text("relname"))


def apply_statement(node: Node, state: DdlState) -> str | None:
    """Apply one statement to the relations; a reason when it cannot be applied."""
    if "CreateStmt" in node:
        return _create_table(node["CreateStmt"], state)
    if "ViewStmt" in node:
        v = node["ViewStmt"]
        return _define_view(v["view"], v.nodes("aliases"), v["query"], v.flag("replace"), state)
    if "CreateTableAsStmt" in node:
        c = node["CreateTableAsStmt"]
        into = c["into"]
        kind = "view" if c.opt("objtype") == "OBJECT_MATVIEW" else "table"
        if c.flag("if_not_exists") and state.key(into["rel"]) in state.relations:
            return None  # CREATE ... AS ... IF NOT EXISTS: the existing one stays, as in PostgreSQL
        return _define_view(into["rel"], into.nodes("colNames"), c["query"], False, state, kind)
    if "AlterTableStmt" in node:
        return _alter(node["AlterTableStmt"], state)
    if "RenameStmt" in node:
        return _rename(node["RenameStmt"], state)
    if "DropStmt" in node:
        return _drop(node["DropStmt"], state)
    return None


def _create_table(c: Node, state: DdlState) -> str | None:
    rv = c["relation"]
    key = state.key(rv)
    if key in state.relations:
        if c.flag("if_not_exists"):
            return None
        return f"relation {key[0]}.{key[1]} is created twice; the first definition is kept (PostgreSQL refuses the second)"
    columns: list[Column] = []
    for parent in c.nodes("inhRelations"):
        found = state.find(parent["RangeVar"])
        if found is None:
            return f"CREATE TABLE {key[0]}.{key[1]} inherits from {parent['RangeVar'].text('relname')}, which is not defined before it"
        columns.extend(found.columns)
    for elt in c.nodes("tableElts"):
        if "ColumnDef" in elt:
            d = elt["ColumnDef"]
            columns.append(Column(d.text("colname"), type_name(d["typeName"])))
        elif "TableLikeClause" in elt:
            found = state.find(elt["TableLikeClause"]["relation"])
            if found is None:
                return f"CREATE TABLE {key[0]}.{key[1]} (LIKE ...) names a relation not defined before it"
            columns.extend(found.columns)
    state.relations[key] = Relation(key[0], key[1], "table", tuple(columns))
    return None


def _define_view(
    rv: Node,
    aliases: list[Node],
    query: Node,
    replace: bool,
    state: DdlState,
    kind: str = "view",
) -> str | None:
    key = state.key(rv)
    if key in state.relations and not replace:
        return f"relation {key[0]}.{key[1]} is created twice; the first definition is kept (PostgreSQL refuses the second)"
    columns, problem = view_columns(query, state.find)
    names = [a.sval for a in aliases]
    if names:
        if len(names) > len(columns):
            return f"{kind} {key[0]}.{key[1]} names {len(names)} columns but its query has {len(columns)}"
        columns = [Column(n, c.type) for n, c in zip(names, columns, strict=False)] + columns[
            len(names) :
        ]
    state.relations[key] = Relation(key[0], key[1], kind, tuple(columns))
    return problem


def _alter(a: Node, state: DdlState) -> str | None:
    rv = a["relation"]
    rel = state.find(rv)
    if rel is None:
        return None if a.flag("missing_ok") else _unknown(rv, "ALTER TABLE")
    columns = list(rel.columns)
    for cmd in (c["AlterTableCmd"] for c in a.nodes("cmds") if "AlterTableCmd" in c):
        sub, name = cmd.opt("subtype"), cmd.text("name")
        names = [c.name for c in columns]
        if sub == "AT_AddColumn":
            d = cmd["def"]["ColumnDef"]
            if d.text("colname") in names:
                if cmd.flag("missing_ok"):
                    continue
                return f"ALTER TABLE adds column {d.text('colname')}, which {rel.qualified} already has"
            columns.append(Column(d.text("colname"), type_name(d["typeName"])))
        elif sub == "AT_DropColumn":
            if name not in names:
                if cmd.flag("missing_ok"):
                    continue
                return f"ALTER TABLE drops column {name}, which {rel.qualified} does not have"
            columns = [c for c in columns if c.name != name]
        elif sub == "AT_AlterColumnType":
            if name not in names:
                return f"ALTER TABLE changes the type of column {name}, which {rel.qualified} does not have"
            new = type_name(cmd["def"]["ColumnDef"]["typeName"])
            columns = [Column(c.name, new) if c.name == name else c for c in columns]
    state.relations[(rel.schema, rel.name)] = Relation(
        rel.schema, rel.name, rel.kind, tuple(columns)
    )
    return None


def _rename(r: Node, state: DdlState) -> str | None:
    rv = r["relation"]
    kind = r.opt("renameType")
    if rv.raw is None or kind not in (*_RELATIONS, "OBJECT_COLUMN"):
        return None
    rel = state.find(rv)
    if rel is None:
        return None if r.flag("missing_ok") else _unknown(rv, "ALTER ... RENAME")
    old, new = r.text("subname"), r.text("newname")
    if kind == "OBJECT_COLUMN":
        if rel.column(old) is None:
            return f"RENAME COLUMN {old}: {rel.qualified} has no such column"
        cols = tuple(Column(new, c.type) if c.name == old else c for c in rel.columns)
        state.relations[(rel.schema, rel.name)] = Relation(rel.schema, rel.name, rel.kind, cols)
    else:
        del state.relations[(rel.schema, rel.name)]
        state.relations[(rel.schema, new)] = Relation(rel.schema, new, rel.kind, rel.columns)
    return None


def _drop(d: Node, state: DdlState) -> str | None:
    if d.opt("removeType") not in _RELATIONS:
        return None
    for obj in d.nodes("objects"):
        names = [n.sval for n in obj["List"].nodes("items")]
        rv = Node({"schemaname": names[-2] if len(names) > 1 else None, "relname": names[-1]})
        rel = state.find(rv)
        if rel is None:
            if not d.flag("missing_ok"):
                return _unknown(rv, "DROP")
            continue
        del state.relations[(rel.schema, rel.name)]
    return None


def _unknown(rv: Node, what: str) -> str:
    return f"{what} names {rv.relname()}, which no earlier statement defines"


Finder = Callable[[Node], Relation | None]


def _select(node: Node) -> Node:
    """The SelectStmt a query node wraps (the node itself when it wraps none)."""
    return node.get("SelectStmt", node)


def view_columns(query: Node, find: Finder) -> tuple[list[Column], str | None]:
    select = _select(query)
    if "targetList" not in select and "op" not in select and "valuesLists" not in select:
        return [], "the view's query is not a SELECT; its columns are unknown"
    find = _with_ctes(select, find)
    # UNION & co. name their columns by the left arm.
    while select.text("op", "SETOP_NONE") != "SETOP_NONE" and "larg" in select:
        select = _select(select["larg"])
    if "valuesLists" in select:
        width = len(select.nodes("valuesLists")[0]["List"].nodes("items"))
        return [Column(f"column{i + 1}", "unknown") for i in range(width)], None
    scope, missing = _from_scope(select.nodes("fromClause"), find)
    columns: list[Column] = []
    for target in select.nodes("targetList"):
        res = target["ResTarget"]
        val = res["val"]
        star = _star(val)
        if star is not None:
            expanded = _expand(star, scope)
            if expanded is None:
                return columns, (
                    f"the view selects {'.'.join(star) + '.*' if star else '*'} from "
                    f"{', '.join(missing) or 'a relation'} that no earlier statement defines"
                )
            columns.extend(expanded)
            continue
        columns.append(Column(res.opt("name") or output_name(val), _type(val, scope)))
    if missing:
        return columns, f"the view reads {', '.join(missing)}, which no earlier statement defines"
    return columns, None


def _from_scope(items: list[Node], find: Finder) -> tuple[list[tuple[str, Relation]], list[str]]:
    """(alias or name, relation) of every FROM item in order; names of unknown ones."""
    scope: list[tuple[str, Relation]] = []
    missing: list[str] = []
    stack = list(reversed(items))
    while stack:
        item = stack.pop()
        if "RangeVar" in item:
            rv = item["RangeVar"]
            rel = find(rv)
            if rel is None:
                missing.append(rv.relname())
                continue
            scope.append((rv["alias"].opt("aliasname") or rv.text("relname"), rel))
        elif "JoinExpr" in item:
            j = item["JoinExpr"]
            stack.extend([j["rarg"], j["larg"]])
        elif "RangeSubselect" in item:
            sub = item["RangeSubselect"]
            cols, problem = view_columns(sub["subquery"], find)
            alias = sub["alias"].text("aliasname")
            if problem is None:
                scope.append((alias, Relation("", alias or "?", "view", tuple(cols))))
            else:
                missing.append(f"the sub-select {alias}".strip())
    return scope, missing


def _with_ctes(select: Node, find: Finder) -> Finder:
    """``find`` that also knows the query's WITH names (they hide relations of that name)."""
    ctes: dict[str, Relation] = {}
    for cte in select["withClause"].nodes("ctes"):
        c = cte["CommonTableExpr"]
        inner = _finder_with(find, ctes)
        cols, problem = view_columns(c["ctequery"], inner)
        if problem is None:
            names = [a.sval for a in c.nodes("aliascolnames")]
            cols = [Column(n, col.type) for n, col in zip(names, cols, strict=False)] + cols[
                len(names) :
            ]
            ctes[c.text("ctename")] = Relation("", c.text("ctename"), "view", tuple(cols))
    return _finder_with(find, ctes) if ctes else find


def _finder_with(find: Finder, ctes: dict[str, Relation]) -> Finder:
    def lookup(rv: Node) -> Relation | None:
        if not rv.opt("schemaname") and rv.text("relname") in ctes:
            return ctes[rv.text("relname")]
        return find(rv)

    return lookup


def _star(val: Node) -> list[str] | None:
    fields = val["ColumnRef"].nodes("fields")
    if fields and "A_Star" in fields[-1]:
        return [f.sval for f in fields[:-1]]
    return None


def _expand(qualifier: list[str], scope: list[tuple[str, Relation]]) -> list[Column] | None:
    if not qualifier:
        return [c for _, rel in scope for c in rel.columns] if scope else None
    for alias, rel in scope:
        if alias == qualifier[-1]:
            return list(rel.columns)
    return None


def output_name(val: Node) -> str:
    """A target's column name when it has no alias, as PostgreSQL names it."""
    if "ColumnRef" in val:
        return val["ColumnRef"].nodes("fields")[-1]["String"].text("sval", "?column?")
    if "FuncCall" in val:
        return val["FuncCall"].nodes("funcname")[-1].sval
    if "TypeCast" in val:
        inner = val["TypeCast"]["arg"]
        if "ColumnRef" in inner or "FuncCall" in inner:
            return output_name(inner)
        names = val["TypeCast"]["typeName"].nodes("names")
        return names[-1].sval if names else "?column?"
    return "?column?"


def _type(val: Node, scope: list[tuple[str, Relation]]) -> str:
    if "TypeCast" in val:
        return type_name(val["TypeCast"]["typeName"])
    fields = val["ColumnRef"].nodes("fields")
    if fields:
        names = [f.sval for f in fields]
        for alias, rel in scope:
            if len(names) == 1 or names[-2] == alias:
                col = rel.column(names[-1])
                if col is not None:
                    return col.type
    return "unknown"
