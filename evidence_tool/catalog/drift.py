"""Catalog drift: what changed in the warehouse since a recorded fingerprint, and which
units each change touches.

A unit is touched by a change when one of its names resolved, in the recorded
catalog, to what changed (check.py's resolution, run against the recorded catalog:
the names mean what they meant when the snapshot was checked).  Touches that make
a unit wrong become review items (E191): a dropped relation or column the unit
names, and a type change of a column its formula uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import ClassVar

from msgspec.structs import replace

from evidence_tool.catalog.check import Use
from evidence_tool.catalog.fingerprint import Fingerprint, RelationPrint
from evidence_tool.catalog.model import quote_ident
from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record, View

DRIFT_CODE = "E191"


class ChangeKind(StrEnum):
    RELATION_ADDED = "relation_added"
    RELATION_DROPPED = "relation_dropped"
    COLUMN_ADDED = "column_added"
    COLUMN_DROPPED = "column_dropped"
    COLUMN_RENAMED = "column_renamed"  # likely: a dropped and an added column alike (_renames)
    TYPE_CHANGED = "type_changed"
    KIND_CHANGED = "kind_changed"


class Change(Record, frozen=True, omit_defaults=True):
    """One difference between the recorded and the current catalog."""

    change: ChangeKind
    relation: str  # qualified name
    column: str | None = None
    old: str | None = None  # the recorded type (or relation kind)
    new: str | None = None
    # A dropped relation whose columns reappear under this name; a renamed column's new name.
    renamed_to: str | None = None

    def describe(self) -> str:
        where = self.relation + (f".{quote_ident(self.column)}" if self.column else "")
        if self.change == ChangeKind.TYPE_CHANGED:
            return f"{where} changed type from {self.old} to {self.new}"
        if self.change == ChangeKind.KIND_CHANGED:
            return f"{where} changed from a {self.old} to a {self.new}"
        if self.change == ChangeKind.COLUMN_RENAMED:
            new = quote_ident(self.renamed_to or "")
            return f"column {where} renamed to {new} (likely: same type, similar name and position)"
        verb = self.change.split("_")[1]
        what = "column" if self.column else "relation"
        more = f" (its columns reappear as {self.renamed_to})" if self.renamed_to else ""
        return f"{what} {where} {verb}{more}"


class DriftItem(Record, frozen=True, tag_field="code", tag=DRIFT_CODE):
    """A drift review item (E191) on one unit: the change that makes the unit wrong.

    Its JSON is a review item: ``code`` (the tag) first, ``raised_by`` before ``raised_at``."""

    _keys = ("code", "message", "path", "line", "column", "change", "raised_by", "raised_at")
    code: ClassVar[str] = DRIFT_CODE
    raised_by: ClassVar[str] = "catalog"
    message: str
    path: str
    line: int | None
    column: int | None
    change: Change
    raised_at: str

    def diagnostic(self, unit_id: str) -> Diagnostic:
        """The item as a finding on its unit."""
        return Diagnostic(DRIFT_CODE, self.message, self.path, self.line, self.column, unit_id)

    def raised_before(self, at: str) -> DriftItem:
        """The same item, keeping the time it was first raised."""
        return replace(self, raised_at=at)


@dataclass
class Drift(View):
    _keys = (
        "recorded=recorded.digest",
        "current=current.digest",
        "settings",
        "changes=shown",
        "review_items=items",
    )
    recorded: Fingerprint
    current: Fingerprint
    changes: list[Change] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)  # kind or search path changed
    touched: dict[str, list[int]] = field(default_factory=dict)  # unit id -> change indexes
    items: dict[str, list[DriftItem]] = field(default_factory=dict)  # unit id -> items

    @cached_property
    def by_relation(self) -> dict[str, list[int]]:
        """Relation-wide changes (dropped, kind changed) by qualified name: built once,
        not once per unit (10,000 units against 500 changes)."""
        out: dict[str, list[int]] = {}
        for i, c in enumerate(self.changes):
            if c.change in (ChangeKind.RELATION_DROPPED, ChangeKind.KIND_CHANGED):
                out.setdefault(c.relation, []).append(i)
        return out

    @cached_property
    def by_column(self) -> dict[tuple[str, str | None], int]:
        return {
            (c.relation, c.column): i
            for i, c in enumerate(self.changes)
            if c.column is not None and c.change in (*_COLUMN_GONE, ChangeKind.TYPE_CHANGED)
        }

    def diagnostics(self) -> list[Diagnostic]:
        """Every review item as a finding on its unit (E191), by unit id."""
        return [i.diagnostic(uid) for uid in sorted(self.items) for i in self.items[uid]]

    @property
    def shown(self) -> list[JsonObject]:
        """The changes, each with the units it touches."""
        return [
            {**c.to_json(), "units": [*sorted(u for u, idx in self.touched.items() if i in idx)]}
            for i, c in enumerate(self.changes)
        ]


def compare(recorded: Fingerprint, current: Fingerprint) -> Drift:
    """The changes from ``recorded`` to ``current``, in a stable order."""
    out = Drift(recorded, current)
    if recorded.kind != current.kind:
        out.settings.append(f"catalog kind changed from {recorded.kind} to {current.kind}")
    if recorded.search_path != current.search_path:
        out.settings.append(
            f"search path changed from {', '.join(recorded.search_path)} "
            f"to {', '.join(current.search_path)}"
        )
    old, new = recorded.relations, current.relations
    added = sorted(set(new) - set(old))
    by_hash: dict[str, list[str]] = {}
    for name in added:
        by_hash.setdefault(new[name].hash, []).append(name)
    for name in sorted(set(old) | set(new)):
        if name not in new:
            twins = by_hash.get(old[name].hash, [])
            renamed = twins[0] if len(twins) == 1 else None
            out.changes.append(Change(ChangeKind.RELATION_DROPPED, name, renamed_to=renamed))
        elif name not in old:
            out.changes.append(Change(ChangeKind.RELATION_ADDED, name))
        elif old[name].hash != new[name].hash:
            out.changes += _columns(name, old[name], new[name])
    return out


# A unit that names one of these columns names a column the warehouse no longer has.
_COLUMN_GONE = (ChangeKind.COLUMN_DROPPED, ChangeKind.COLUMN_RENAMED)
# How alike a dropped and an added name must be (difflib's ratio) to be one rename:
# 'sex' -> 'sex_cd' (0.67) and 'order_state' -> 'order_status' (0.78) are; 'sex' ->
# 'gender' (0.22) is not.
RENAME_LIKENESS = 0.6


def _renames(old: RelationPrint, new: RelationPrint) -> dict[str, str]:
    """Dropped column -> added column, for each pair that is most likely one column
    renamed: the same type at the same position, with a similar name (what ``check``
    would offer as "did you mean").  A guess, so said as "likely" in the message."""
    import difflib

    before, after = dict(old.columns), dict(new.columns)
    out: dict[str, str] = {}
    for i, (col, typ) in enumerate(old.columns):
        if col in after or i >= len(new.columns):
            continue
        cand, cand_type = new.columns[i]
        if cand in before or cand_type != typ or cand in out.values():
            continue
        if difflib.SequenceMatcher(None, col, cand).ratio() >= RENAME_LIKENESS:
            out[col] = cand
    return out


def _columns(name: str, old: RelationPrint, new: RelationPrint) -> list[Change]:
    out = []
    if old.kind != new.kind:
        out.append(Change(ChangeKind.KIND_CHANGED, name, old=old.kind, new=new.kind))
    before, after = dict(old.columns), dict(new.columns)
    renames = _renames(old, new)
    taken = set(renames.values())
    for col in sorted(set(before) | set(after)):
        if col in renames:
            out.append(
                Change(
                    ChangeKind.COLUMN_RENAMED, name, col, old=before[col], renamed_to=renames[col]
                )
            )
        elif col in taken:
            continue  # the new name of a rename, reported with it
        elif col not in after:
            out.append(Change(ChangeKind.COLUMN_DROPPED, name, col, old=before[col]))
        elif col not in before:
            out.append(Change(ChangeKind.COLUMN_ADDED, name, col, new=after[col]))
        elif before[col] != after[col]:
            out.append(Change(ChangeKind.TYPE_CHANGED, name, col, old=before[col], new=after[col]))
    return out


def touch(drift: Drift, unit_id: str, path: str, uses: list[Use], at: str) -> None:
    """Record which changes touch the unit whose resolved names are ``uses``, and raise
    a review item for each that makes it wrong."""
    if not drift.changes:
        return
    hit: set[int] = set()
    items: dict[int, DriftItem] = {}
    for use in uses:
        rel = f"{quote_ident(use.schema)}.{quote_ident(use.relation)}"
        for i in drift.by_relation.get(rel, ()):
            hit.add(i)
            if drift.changes[i].change == ChangeKind.RELATION_DROPPED:
                items.setdefault(i, _item(drift.changes[i], use, path, at))
        j = drift.by_column.get((rel, use.column)) if use.column is not None else None
        if j is not None:
            hit.add(j)
            c = drift.changes[j]
            if c.change in _COLUMN_GONE or use.formula:
                items.setdefault(j, _item(c, use, path, at))
    if hit:
        drift.touched[unit_id] = sorted(hit)
    if items:
        drift.items[unit_id] = [items[i] for i in sorted(items)]


def _item(c: Change, use: Use, path: str, at: str) -> DriftItem:
    if c.change == ChangeKind.TYPE_CHANGED:
        why = "its formula uses it: check the formula still computes what it says"
    elif c.change == ChangeKind.COLUMN_RENAMED:
        why = f"the unit names it: write the new name {quote_ident(c.renamed_to or '')}"
    else:
        why = "the unit names it: correct or remove the name"
    message = f"catalog drift: {c.describe()} since the last consolidation; {why}"
    return DriftItem(message, path, use.pos[0], use.pos[1], c, at)
