"""Formula SQL: exactly one PostgreSQL expression, checked by PostgreSQL's own parser (pglast)."""

from __future__ import annotations

import json
from typing import Any

_PREFIX = "SELECT "
# A bare ``SELECT <expr>`` has exactly these keys; anything else (FROM, WHERE, ORDER BY,
# LIMIT, INTO, DISTINCT, set operations, ...) means the text was more than an expression.
_ALLOWED_SELECT_KEYS = frozenset({"targetList", "limitOption", "op"})
_REFUSED_NODES = ("SubLink", "A_Star")


def check_expression(sql: str) -> tuple[str, int] | None:
    """Return None if ``sql`` is one expression, else (reason, 0-based line within ``sql``)."""
    from pglast import parser

    try:
        tree = json.loads(parser.parse_sql_json(_PREFIX + sql + "\n"))
    except parser.ParseError as exc:
        offset = max(0, int(getattr(exc, "location", 0) or 0) - len(_PREFIX))
        return f"not valid PostgreSQL: {exc.args[0] if exc.args else exc}", sql.count(
            "\n", 0, offset
        )
    except Exception as exc:  # pglast raises plain errors on some inputs (e.g. NUL bytes)
        return f"not valid PostgreSQL: {exc}", 0
    stmts = tree.get("stmts", [])
    if len(stmts) != 1:
        return "holds several statements; write exactly one expression, no ';'", 0
    select = stmts[0].get("stmt", {}).get("SelectStmt")
    if select is None:
        return "is a statement, not an expression", 0
    extra = sorted(set(select) - _ALLOWED_SELECT_KEYS)
    if extra or select.get("op") != "SETOP_NONE":
        clause = ", ".join(extra) if extra else "a set operation"
        return f"is a query ({clause}), not a single expression", 0
    targets = select.get("targetList", [])
    if len(targets) != 1:
        return f"holds {len(targets)} expressions separated by commas; write exactly one", 0
    if targets[0].get("ResTarget", {}).get("name") is not None:
        return "gives the expression an alias; write the expression alone", 0
    found = _find_nodes(targets[0])
    if found:
        what = "a sub-select" if found == "SubLink" else "a '*' column reference"
        return f"contains {what}; write a single scalar expression", 0
    return None


def _find_nodes(node: Any) -> str | None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _REFUSED_NODES:
                    return key
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return None
