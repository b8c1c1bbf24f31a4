"""BIRD evidence strings: split into fragments, each read as a formula, a term or a rule.

An evidence string is a ``;``-separated list of hints written for one question
("Eligible free rate = `Free Meal Count (K-12)` / `Enrollment (K-12)`;
female refers to gender = 'F'").  Each fragment becomes one unit:

- ``NAME = EXPR`` where EXPR is one PostgreSQL expression -> formula;
- ``NAME refers to EXPR`` (also "refer to", "means", "stands for") where EXPR is
  one expression with a comparison, arithmetic, a call, IS NULL, LIKE or BETWEEN
  -> formula (prose that happens to parse, "A and B", "K-12", is a definition);
- ``NAME refers to TEXT`` -> glossary term NAME defined as TEXT;
- anything else (``A = 'x'`` on a column itself, prose) -> domain rule.

BIRD writes SQLite: backquoted identifiers become PostgreSQL's double quotes,
which is lossless; nothing else is rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass

from evidence_tool.unit.formula import check_expression

_QUOTES = "'\"`"
_OPEN, _CLOSE = "([", ")]"
# A match starts only where a blank run starts (the lookbehind): tried inside a run, the
# pattern rescanned the rest of the run at every blank, quadratic in its length.
_DEFINES = re.compile(r"(?<!\s)\s+(?:refers?\s+to|means|stands\s+for)\s+", re.IGNORECASE)
# What makes a definition SQL: a comparison, arithmetic, a call, or a SQL-only keyword.
# Words that also read as prose ("A and B", "K-12") are not enough.
_OPERATOR = re.compile(
    r"[=<>+*/%(]|\bis\s+(?:not\s+)?null\b|\b(?:like|ilike|between)\b", re.IGNORECASE
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*")


@dataclass(frozen=True)
class Reading:
    kind: str  # "formula", "glossary" or "domain"
    name: str  # the concept or term ("" for a rule)
    body: str  # the SQL of a formula, the definition of a term, the rule's text


def _opens(text: str, i: int) -> bool:
    """True when the quote character at ``i`` opens a quoted part: an apostrophe inside a
    word ("vessel's") does not."""
    return text[i] != "'" or i == 0 or not text[i - 1].isalnum()


def fragments(evidence: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of the ``;``-separated fragments, trimmed and nonempty;
    a ``;`` inside quotes or brackets does not split."""
    out: list[tuple[int, int]] = []
    start, depth, quote = 0, 0, ""
    for i, ch in enumerate(evidence + ";"):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in _QUOTES and _opens(evidence, i):
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch == ";" and (depth == 0 or i == len(evidence)):
            a, b = start, i
            while a < b and evidence[a].isspace():
                a += 1
            while b > a and evidence[b - 1].isspace():
                b -= 1
            if a < b:
                out.append((a, b))
            start = i + 1
    return out


def to_postgres(sql: str) -> str:
    """SQLite's `ident` as PostgreSQL's "ident" (a quote inside doubled)."""
    out: list[str] = []
    i = 0
    while i < len(sql):
        ch = sql[i]
        if ch in "'\"":
            j = sql.find(ch, i + 1)
            j = len(sql) - 1 if j < 0 else j
            out.append(sql[i : j + 1])
            i = j + 1
        elif ch == "`":
            j = sql.find("`", i + 1)
            if j < 0:
                return sql  # unbalanced: left as written, the parser will say why
            out.append('"' + sql[i + 1 : j].replace('"', '""') + '"')
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _unquoted(sql: str) -> str:
    """``sql`` with quoted strings and identifiers blanked, for operator tests."""
    return re.sub(r"'[^']*'|\"[^\"]*\"", " x ", sql)


def _is_expression(sql: str) -> bool:
    return bool(sql) and "\n" not in sql and check_expression(sql) is None


def _column_like(name: str, columns: Set[str]) -> bool:
    """True when the left side of ``=`` is a column (a condition, not a named formula)."""
    if name[:1] in _QUOTES or name.startswith("["):
        return True
    return bool(_IDENT.fullmatch(name)) and name.rsplit(".", 1)[-1].lower() in columns


def _equals_at(text: str) -> int:
    """Index of the first ``=`` outside quotes that is not part of <=, >=, !=, <> or ==."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in _QUOTES and _opens(text, i):
            quote = ch
        elif ch == "=":
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if before not in "<>!=" and after != "=":
                return i
    return -1


def read_fragment(text: str, columns: Set[str]) -> Reading:
    """How one fragment is imported; ``columns`` are the database's column names (lower
    case), so ``gender = 'F'`` is a condition rather than a formula named gender."""
    defined = _DEFINES.search(text)
    if defined is not None:
        name, body = text[: defined.start()].strip(), text[defined.end() :].strip()
        if name and body:
            sql = to_postgres(body)
            if _OPERATOR.search(_unquoted(sql)) and _is_expression(sql):
                return Reading("formula", name, sql)
            return Reading("glossary", name, body)
    at = _equals_at(text)
    if at > 0:
        name, sql = text[:at].strip(), to_postgres(text[at + 1 :].strip())
        if name and not _column_like(name, columns) and _is_expression(sql):
            return Reading("formula", name, sql)
    return Reading("domain", "", text)
