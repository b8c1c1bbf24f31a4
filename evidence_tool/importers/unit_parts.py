"""Small parts the importers share: names, titles, fenced SQL, purposes, unique ids."""

from __future__ import annotations

import re

from evidence_tool.importers.base import Imported, ImportResult, Span, make_unit
from evidence_tool.unit import Payload

# What each kind of imported unit is for (SPEC 3): a curator can change it after import.
PURPOSES: dict[str, tuple[str, ...]] = {
    "glossary": ("disambiguation", "schema_linking"),
    "enum": ("schema_linking", "sql_generation"),
    "formula": ("sql_generation",),
    "example": ("sql_generation",),
    "domain": ("disambiguation", "sql_generation"),
    "mapping": ("schema_linking",),
}

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_TITLE_MAX = 120


def ident(name: str) -> str:
    """A name as one part of ``schema.table.column``: plain when it can be, else quoted."""
    return name if _PLAIN_NAME.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def title(text: str, headings: bool = False) -> str:
    """One line of at most 120 characters (``headings``: Markdown heading marks dropped)."""
    line = " ".join(text.split())
    if headings:
        line = line.lstrip("#").strip()
    return line if len(line) <= _TITLE_MAX else line[: _TITLE_MAX - 1].rstrip() + "…"


def fence(text: str) -> str:
    """A code fence longer than any backtick run inside ``text``."""
    return "`" * max(3, max(map(len, re.findall(r"`+", text)), default=0) + 1)


def fenced_sql(sql: str) -> str:
    """SQL in a ```sql fence that ``fence`` makes for it."""
    mark = fence(sql)
    return f"{mark}sql\n{sql.strip()}\n{mark}"


class Units:
    """Collects a result's units; a second element with the same id is a review item, not a
    silent overwrite (two names that slug alike, e.g. 'Order ID' and 'order-id')."""

    def __init__(self, result: ImportResult, language: str) -> None:
        self.result, self.language = result, language
        self.seen: dict[str, str] = {}

    def add(
        self,
        uid: str,
        name: str,
        payload: Payload,
        spans: list[Span],
        *,
        tables: tuple[str, ...] = (),
        columns: tuple[str, ...] = (),
        where: str,
    ) -> bool:
        if uid in self.seen:
            self.result.review(
                "invalid-element",
                f"{where} gives the id {uid}, already given by {self.seen[uid]}; rename one "
                "of them in the source",
                uid,
            )
            return False
        self.seen[uid] = where
        unit = make_unit(
            id=uid,
            language=self.language,
            title=title(name),
            payload=payload,
            purposes=PURPOSES[payload.kind],
            tables=tuple(dict.fromkeys(tables)),
            columns=tuple(dict.fromkeys(columns)),
        )
        self.result.units.append(Imported(unit, spans))
        return True
