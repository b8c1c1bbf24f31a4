"""Formula SQL: exactly one PostgreSQL expression, checked by PostgreSQL's own parser (pglast)."""

from __future__ import annotations

import json
from typing import Any

_PREFIX = "SELECT "
# A bare ``SELECT <expr>`` has exactly these keys; anything else (FROM, WHERE, ORDER BY,
# LIMIT, INTO, DISTINCT, set operations, ...) means the text was more than an expression.
_ALLOWED_SELECT_KEYS = frozenset({"targetList", "limitOption", "op"})
_REFUSED_NODES = ("SubLink", "A_Star")
# pglast's clause keys, named as the user wrote them.
_CLAUSES = {
    "distinctClause": "DISTINCT",
    "intoClause": "INTO",
    "fromClause": "FROM",
    "whereClause": "WHERE",
    "groupClause": "GROUP BY",
    "havingClause": "HAVING",
    "windowClause": "WINDOW",
    "valuesLists": "VALUES",
    "sortClause": "ORDER BY",
    "limitOffset": "OFFSET",
    "limitCount": "LIMIT",
    "lockingClause": "FOR UPDATE/SHARE",
    "withClause": "WITH",
}


# The contract's own words for the most common mistake: pasting the query being explained.
WHOLE_QUERY = (
    "is a whole query (or statement) where one expression belongs; "
    "write only the expression, e.g. `avg(los)`"
)


def check_expression(sql: str) -> tuple[str, int, int | None] | None:
    """None if ``sql`` is one expression, else (reason, 0-based line, 1-based column or None)."""
    problem = _expression_problem(sql)
    # Only a text already refused is tried as a statement: 'checkpoint' is a statement
    # and also a valid column name.
    if problem is not None and _parses_as_statements(sql):
        return WHOLE_QUERY, 0, None
    return problem


def _parses_as_statements(sql: str) -> bool:
    """True if ``sql`` on its own is one or more SQL statements (a query, DDL, DML...)."""
    from pglast import parser

    try:
        return bool(json.loads(parser.parse_sql_json(sql)).get("stmts"))
    except Exception:  # any parser failure: not a statement
        return False


def _expression_problem(sql: str) -> tuple[str, int, int | None] | None:
    from pglast import parser

    try:
        tree = json.loads(parser.parse_sql_json(_PREFIX + sql + "\n"))
    except parser.ParseError as exc:
        # pglast puts the 0-based character offset of a syntax error in args[1].
        at = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else None
        message = exc.args[0] if exc.args else exc
        if at is None or at < len(_PREFIX):
            return f"is not valid PostgreSQL: {message}", 0, None
        return f"is not valid PostgreSQL: {message}", *_at(sql, min(at - len(_PREFIX), len(sql)))
    except Exception as exc:  # pglast raises plain errors on some inputs (e.g. NUL bytes)
        return f"is not valid PostgreSQL: {exc}", 0, None
    stmts = tree.get("stmts", [])
    if len(stmts) != 1:
        return "holds several statements; write exactly one expression, no ';'", 0, None
    # A trailing ';' parses as one statement, but the stored text must splice into a query.
    for token in parser.scan(_PREFIX + sql):
        if token.name == "ASCII_59":
            reason = "holds a ';'; write exactly one expression, no statement separator"
            return reason, *_at(sql, token.start - len(_PREFIX))
    select = stmts[0].get("stmt", {}).get("SelectStmt")
    if select is None:
        return "is a statement, not an expression", 0, None
    if select.get("op") != "SETOP_NONE":
        return "is a query (a set operation such as UNION), not a single expression", 0, None
    extra = sorted(set(select) - _ALLOWED_SELECT_KEYS)
    if extra:
        clause = ", ".join(_CLAUSES.get(key, key) for key in extra)
        return f"is a query ({clause}), not a single expression", 0, None
    targets = select.get("targetList", [])
    if len(targets) != 1:
        return f"holds {len(targets)} expressions separated by commas; write exactly one", 0, None
    if targets[0].get("ResTarget", {}).get("name") is not None:
        return "gives the expression an alias; write the expression alone", 0, None
    found = _find_nodes(targets[0])
    if found:
        what = "a sub-select" if found == "SubLink" else "a '*' column reference"
        return f"contains {what}; write a single scalar expression", 0, None
    return None


def _at(sql: str, offset: int) -> tuple[int, int]:
    """(0-based line, 1-based column) of a character offset into ``sql``."""
    return sql.count("\n", 0, offset), offset - sql.rfind("\n", 0, offset)


def _find_nodes(node: Any) -> str | None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _REFUSED_NODES:
                    return str(key)
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return None
