"""The review page's model: what ``collect`` reads once and the page sections render.

Typed rows, not the library's dicts: a section reads ``row.code``, and mypy knows
what a card or a panel holds.  Sources and comparisons are the sources package's own
typed records (``SourceSummary``, ``Comparison``), read as they are.  ``WrittenReport``
is what ``write_report`` hands the CLI; its ``to_json`` is the ``report`` command's
--json result.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import Record


class UnitStatus(StrEnum):
    """A card's change since the base revision (``unchanged`` when none)."""

    UNCHANGED = "unchanged"
    ADDED = "added"
    MODIFIED = "modified"
    RENAMED = "renamed"
    REFORMATTED = "reformatted"
    DELETED = "deleted"


class CatalogState(StrEnum):
    """A unit's standing in the last catalog run."""

    CLEAN = "clean"
    FINDINGS = "findings"
    NOT_CHECKED = "not checked"


@dataclass(frozen=True, slots=True)
class ReviewRow:
    """One review item as a table row: code, message, unit or who raised it, and when."""

    code: str
    message: str
    by: str = ""
    raised_at: str = ""

    @classmethod
    def of(cls, item: JsonObject) -> ReviewRow:
        """From an archive or catalog review item: the JSON record as stored (the page
        shows whatever a hand-edited record holds, as text)."""
        by = item.get("unit_id") or item.get("raised_by") or ""
        at = item.get("raised_at") or ""
        return cls(str(item.get("code")), str(item.get("message")), str(by), str(at))


@dataclass(frozen=True, slots=True)
class CatalogStatus:
    """A card's catalog status from the last run (never a warehouse connection)."""

    status: CatalogState = CatalogState.NOT_CHECKED
    codes: tuple[str, ...] = ()
    review_items: tuple[ReviewRow, ...] = ()
    note: str | None = None  # why a unit is not checked in its present form


def _shown(value: JsonValue) -> str | None:
    """A record's value as the page prints it, None when unset (shown as a dash)."""
    return str(value) if value else None


def part(value: JsonValue) -> JsonObject:
    """A part of a derived record (the catalog run's): a broken part reads empty."""
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class DriftRow:
    """One catalog change since the active snapshot's catalog, with the units it touches."""

    change: str
    relation: str
    column: str | None
    old: str | None
    new: str | None
    renamed_to: str | None
    units: tuple[str, ...]

    @classmethod
    def of(cls, c: JsonObject) -> DriftRow:
        units = c.get("units")
        return cls(
            str(c.get("change")),
            str(c.get("relation")),
            _shown(c.get("column")),
            _shown(c.get("old")),
            _shown(c.get("new")),
            _shown(c.get("renamed_to")),
            tuple(str(u) for u in units) if isinstance(units, list) else (),
        )


@dataclass(frozen=True, slots=True)
class CatalogPanel:
    """The last catalog run as the page shows it: when, which catalog, the drift."""

    checked_at: str
    kind: str
    relations: str
    fingerprint: str | None
    base: str | None  # the snapshot whose catalog it was compared with
    note: str | None
    drift: tuple[DriftRow, ...] | None  # None: no drift part in the record

    @classmethod
    def of(cls, rec: JsonObject) -> CatalogPanel | None:
        """From the run's record file (the catalog's JSON boundary, a derived file that
        may be hand-broken: every part is narrowed); None when no run left one."""
        if not rec:
            return None
        cat = part(rec.get("catalog"))
        drift = part(rec.get("drift"))
        changes = drift.get("changes")
        rows = [DriftRow.of(part(c)) for c in changes] if isinstance(changes, list) else []
        return cls(
            str(rec.get("checked_at")),
            str(cat.get("kind")),
            str(cat.get("relations")),
            _shown(cat.get("fingerprint")),
            _shown(rec.get("base")),
            _shown(rec.get("note")),
            tuple(rows) if drift else None,
        )


@dataclass(frozen=True, slots=True)
class GitPanel:
    """The commands that commit the complete evidence tree, or why there are none."""

    available: bool
    note: str = ""  # outside Git: why
    steps: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class ComparisonRef(Record, frozen=True):
    source_id: str
    revision: str


class WrittenReport(Record, frozen=True, omit_defaults=True):
    """Where ``write_report`` put the page and what it holds (the command's result);
    ``opened`` is written only when set (its default None is left out)."""

    path: str
    bytes: int
    units: int
    file_errors: int
    comparisons: tuple[ComparisonRef, ...]
    initialized: bool
    active: str | None
    pending: str | None
    opened: bool | None = None  # set by ``--open``: whether a browser started


__all__ = [
    "CatalogState",
    "CatalogStatus",
    "ComparisonRef",
    "GitPanel",
    "ReviewRow",
    "UnitStatus",
    "WrittenReport",
]
