"""Check 4 (PostgreSQL only): each formula type-checks where it will be spliced.

A formula is prepared, never executed, as ``SELECT <expr> FROM <its tables> WHERE
false`` (the tables checks 1-3 resolved, schema-qualified); PostgreSQL's parse
analysis then resolves every name, operator and cast and says the result type
(``numeric``, ``interval``, ...).  A refusal is E188 with PostgreSQL's own message
at the place of the formula's SQL it points at.
"""

from __future__ import annotations

from dataclasses import dataclass

from evidence_tool.catalog.check import sql_position
from evidence_tool.catalog.fences import locate
from evidence_tool.catalog.model import Relation
from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.record import Record
from evidence_tool.unit import FormulaPayload, Unit

_PREFIX = "SELECT "


@dataclass(frozen=True)
class Formula:
    unit: Unit
    text: str  # the unit file, for positions
    path: str
    tables: tuple[Relation, ...]

    @property
    def sql(self) -> str:
        assert isinstance(self.unit.payload, FormulaPayload)
        return self.unit.payload.sql

    def statement(self) -> str:
        """The formula as PostgreSQL sees it; a newline ends a trailing ``--`` comment."""
        source = ", ".join(r.qualified for r in self.tables)
        return _PREFIX + self.sql + "\n" + (f"FROM {source}\n" if source else "") + "WHERE false"


class TypeResult(Record, frozen=True):
    unit_id: str
    path: str
    type: str | None  # None when PostgreSQL refused the formula or gave up


def finding(f: Formula, error: str, position: int | None) -> Diagnostic:
    """E188 at the formula's character PostgreSQL pointed at (else at the SQL fence)."""
    where = locate(f.text, f.unit.kind, f.unit.language)
    offset = position - 1 - len(_PREFIX) if position is not None else -1
    if 0 <= offset <= len(f.sql):
        line, column = sql_position(where, f.sql, offset)
    else:  # in the FROM we added, or no position: the formula as a whole
        line, column = (where.sql_line or where.headings.get("sql"), 1)
    why = f"the formula does not type-check in PostgreSQL: {error}"
    return Diagnostic("E188", why, f.path, line, column, f.unit.id)


def gave_up(f: Formula, why: str) -> EvidenceWarning:
    line = locate(f.text, f.unit.kind, f.unit.language).sql_line
    message = f"{f.unit.id}: the formula was not type-checked: PostgreSQL stopped it at {why}"
    return EvidenceWarning(message, f.path, line, code="W188")
