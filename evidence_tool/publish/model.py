"""What a publisher receives and returns: the active snapshot's typed units in, files out.

A publisher (one module per format) is a pure function from a ``Snapshot`` to a
``Published``: the same snapshot gives the same bytes, nothing is written, and every
unit it cannot hold is named in ``not_exported`` with the reason (the mirror of an
importer's ``not_imported``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_tool.record import Record
from evidence_tool.unit import Unit


@dataclass(frozen=True)
class Entry:
    """One active unit with the provenance a target can show: who declared it, and when."""

    unit: Unit
    declared_by: str | None  # the curator (manual) or actor (a migrated document unit)
    declared_at: str | None  # RFC 3339 UTC, as the manifest records it


@dataclass(frozen=True)
class Snapshot:
    """The active snapshot as publishers see it: its revision and its units by id."""

    workspace: str  # the workspace id (names the Cortex model, the dbt docs file)
    revision: str
    entries: tuple[Entry, ...]  # sorted by unit id: the order every format writes


class NotExported(Record, frozen=True):
    unit_id: str
    reason: str


@dataclass
class Published:
    """A format's output: ``files`` by path relative to ``--output`` ("" when the output
    is one file), the ids it holds, and what it could not hold."""

    files: dict[str, bytes] = field(default_factory=dict)
    exported: list[str] = field(default_factory=list)
    not_exported: list[NotExported] = field(default_factory=list)

    def skip(self, unit_id: str, reason: str) -> None:
        self.not_exported.append(NotExported(unit_id, reason))


def stamp(unit_id: str, revision: str) -> str:
    """The citation mark every published entry carries: unit id and snapshot revision."""
    return f"{unit_id} @ {revision}"
