"""What a BIRD import accumulates, and the text helpers its units share."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    Span,
    make_unit,
)
from evidence_tool.unit import is_italian
from evidence_tool.unit.model import Payload

_BARE = re.compile(r"[a-z_][a-z0-9_$]*")
_LABELS = {  # (evidence, values, an enum's title) in each heading language
    "en": ("Evidence:", "Values:", "{column} values"),
    "it": ("Conoscenza esterna:", "Valori:", "Valori di {column}"),
}


def quote(name: str) -> str:
    """A name as PostgreSQL needs it written: bare only when it would not fold or break."""
    return name if _BARE.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def clean(text: str) -> str:
    """A cell or member as unit text: line ends as the unit format writes them, trimmed."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


@dataclass
class Collected:
    """What one read accumulates: the result, per-database names, not-imported counts."""

    source: ImportInput
    schemas: dict[str, str]
    result: ImportResult = field(default_factory=ImportResult)
    columns: dict[str, set[str]] = field(default_factory=dict)  # db -> lower-case names
    fragments: set[tuple[str, str]] = field(default_factory=set)  # (db, fragment) imported
    names: dict[str, str] = field(default_factory=dict)  # term id -> its first fragment
    absent: Counter[tuple[str, str]] = field(default_factory=Counter)  # (element, what)

    @property
    def labels(self) -> tuple[str, str, str]:
        return _LABELS["it" if is_italian(self.source.language) else "en"]

    def schema(self, db: str) -> str:
        return self.schemas.get(db, db)

    def add(self, uid: str, title: str, payload: Payload, span: Span, **kw: Any) -> None:
        unit = make_unit(id=uid, language=self.source.language, title=title, payload=payload, **kw)
        self.result.units.append(Imported(unit, [span]))
