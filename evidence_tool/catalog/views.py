"""The columns a view's query yields, named as PostgreSQL names them.

A target's name is its alias, else the last field of a column reference, else
the function or cast name, else ``?column?``.  ``*`` and ``alias.*`` expand
from the relations of FROM that earlier statements defined.  Types come from
the referenced column or the cast; anything else is ``unknown`` (the live
PostgreSQL path will report real types).
"""

from __future__ import annotations

from collections.abc import Callable

from evidence_tool.catalog.model import Column, Relation
from evidence_tool.catalog.pgtree import Node, type_name

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
