"""One catalog run over a workspace (check + drift) and the record it leaves behind.

Every run that reads the warehouse (``check``, ``catalog diff``, and the opt-in step
of validate, verify --strict and consolidate) checks the units, compares the catalog
with the active snapshot's recorded fingerprint, and replaces
``.evidence-cache/catalog-review.json``: each unit's catalog status, the drift list and
the drift review items (E191).  ``status`` and the review page read that record; they
never connect to a warehouse.  The record is replaced as a whole, so an item clears at
the next run once the unit no longer names what changed, or the change is gone.  It is
machine-local (it says what this machine's warehouse looked like), like the page.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.catalog.check import Use, check_unit
from evidence_tool.catalog.drift import Drift, DriftItem, compare, touch
from evidence_tool.catalog.fingerprint import Fingerprint, parse_fingerprint
from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.results import read_cache_record, write_cache_record
from evidence_tool.catalog.settings import CatalogSettings
from evidence_tool.catalog.workspace_check import CatalogCheck, check_workspace
from evidence_tool.errors import EvidenceWarning, IntegrityError
from evidence_tool.jsonvalue import JsonObject, JsonValue, View
from evidence_tool.record import Record
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.curated import CuratedFile
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import Progress

STORE = "catalog-review.json"
FORMAT = 1
DAMAGED = "W189"
# What status and the review page say for an item a hand edit left unreadable.
UNREADABLE_ITEM = "an unreadable item (the catalog record was edited by hand: run 'check' again)"
NO_FINGERPRINT = (
    "the active snapshot records no catalog fingerprint: configure the catalog step "
    "(evidence.catalog in the installation descriptor, passed with --installation) and "
    "run 'tht workspace evidence consolidate'"
)


class CheckedUnit(Record, frozen=True):
    """One unit as a catalog run checked it: its file, content hash and finding codes."""

    path: str
    content_hash: str | None
    codes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CatalogStatus(View):
    """What ``status`` says about the catalog, read from the last run's record; without
    a run (``checked`` false) only the review items are shown (``CheckedStatus``: all)."""

    _keys: ClassVar[tuple[str, ...]] = ("checked", "review_items")
    checked: bool
    review_items: dict[str, list[JsonValue]]  # by unit id, as the record holds them
    checked_at: JsonValue = None
    fingerprint: JsonValue = None
    base: JsonValue = None
    note: JsonValue = None
    changes: int = 0
    deleted_since: tuple[str, ...] = ()
    edited_since: tuple[str, ...] = ()
    warnings: tuple[EvidenceWarning, ...] = ()  # W189 for unreadable items; not in its JSON


class CheckedStatus(CatalogStatus):
    """The status after a run: every key, ``null`` included."""

    __slots__ = ()
    _keys = (
        "checked",
        "checked_at",
        "fingerprint",
        "base",
        "note",
        "changes",
        "review_items",
        "deleted_since",
        "edited_since",
    )


@dataclass
class CatalogRun:
    check: CatalogCheck
    fingerprint: Fingerprint
    base: str | None  # the active revision whose fingerprint was compared
    drift: Drift | None
    note: str | None  # why there is no drift to show
    units: dict[str, CheckedUnit]  # by unit id
    warnings: list[EvidenceWarning] = field(default_factory=list)  # about the run itself

    def record(self) -> JsonObject:
        """The record file's JSON (``catalog-review.json``)."""
        drift = self.drift.to_json() if self.drift else None
        return {
            "format": FORMAT,
            "checked_at": now(),
            "catalog": self.fingerprint.record(),
            "base": self.base,
            "note": self.note,
            "units": {uid: u.to_json() for uid, u in self.units.items()},
            "drift": drift,
            "review_items": drift["review_items"] if drift else {},
        }


class _Resolving(Catalog):
    """The recorded catalog for drift, which keeps only what names resolved to: no
    "did you mean" search through every relation for findings nobody reads."""

    def near_relations(self, schema: str | None, name: str) -> list[str]:
        return []

    def having_column(self, schema: str | None, column: str) -> list[str]:
        return []


def recorded_fingerprint(
    archive: LocalEvidenceArchive,
) -> tuple[str | None, Fingerprint | None]:
    """(active revision, the fingerprint its snapshot records), either None if absent."""
    snap = archive.active_snapshot()
    if snap is None:
        return None, None
    entry = snap.view.catalog()
    if not isinstance(entry, dict):
        return snap.revision, None
    digest = str(entry.get("fingerprint"))
    try:
        return snap.revision, parse_fingerprint(archive.objects.get(digest))
    except (ValueError, KeyError) as exc:
        raise IntegrityError(
            f"snapshot {snap.revision[:12]}… names catalog fingerprint {digest[:12]}…, which "
            f"cannot be read ({exc}); restore evidence/.local/objects/ from Git",
            path=str(archive.objects.path_for(digest)) if len(digest) == 64 else None,
        ) from None


def run_catalog(
    root: str | os.PathLike[str],
    settings: CatalogSettings,
    progress: Progress | None = None,
    *,
    record: bool = True,
    sample_values: bool = False,
    execute: bool = False,
) -> CatalogRun:
    """Check every unit against the catalog, compare it with the active snapshot's
    fingerprint, and (``record``) replace the workspace's catalog record."""
    archive = LocalEvidenceArchive(root)
    base, recorded = recorded_fingerprint(archive)
    old_catalog = recorded.catalog(_Resolving) if recorded is not None else None
    units: dict[str, CheckedUnit] = {}
    uses: dict[str, tuple[str, list[Use]]] = {}

    def visit(f: CuratedFile, codes: list[str]) -> None:
        unit = f.unit
        assert unit is not None
        units[unit.id] = CheckedUnit(f.rel, f.content_hash, tuple(codes))
        if old_catalog is not None:
            found: list[Use] = []
            check_unit(old_catalog, unit, f.data.decode("utf-8"), f.rel, found)
            uses[unit.id] = (f.rel, found)

    checked = check_workspace(
        root, settings, progress, visit=visit, sample_values=sample_values, execute=execute
    )
    current = Fingerprint.of(checked.catalog)
    drift = None
    note = None
    if base is None:
        note = (
            "the archive has no active snapshot yet, so nothing to compare the catalog with: "
            "configure the catalog step (evidence.catalog) and run "
            "'tht workspace evidence consolidate'"
        )
    elif recorded is None:
        note = NO_FINGERPRINT
    else:
        drift = compare(recorded, current)
        at = now()
        for uid in sorted(uses):
            touch(drift, uid, uses[uid][0], uses[uid][1], at)
    result = CatalogRun(checked, current, base, drift, note, units)
    if record:
        write_record(archive, result)
    return result


def write_record(archive: LocalEvidenceArchive, run: CatalogRun) -> None:
    """Replace the record (``results.write_cache_record``); items raised before keep their
    time.  A record that cannot be replaced is a warning on the run."""
    layout = archive.layout
    why = write_cache_record(
        layout, STORE, "catalog check", lambda: _record(layout, run), "that operation"
    )
    if why is not None:
        run.warnings.append(
            EvidenceWarning(f"the catalog record (status, review page) was not updated: {why}")
        )


def _record(layout: Layout, run: CatalogRun) -> JsonObject:
    if run.drift is not None:
        before = review_items(layout)
        run.drift.items = {
            uid: [_keep_time(item, before.get(uid, [])) for item in items]
            for uid, items in run.drift.items.items()
        }
    return run.record()


def _keep_time(item: DriftItem, before: list[JsonValue]) -> DriftItem:
    """The item with the time it was first raised, when the last record holds it."""
    change = canonical_json(item.change.to_json())
    for old in before:
        if isinstance(old, dict) and canonical_json(old.get("change")) == change:
            at = old.get("raised_at", item.raised_at)
            return item.raised_before(at) if isinstance(at, str) else item
    return item


def part(value: JsonValue) -> JsonObject:
    """A part of the record file (a derived file that may be hand-broken): a broken part
    reads empty."""
    return value if isinstance(value, dict) else {}


def read_record(layout: Layout) -> JsonObject:
    """The last run's record, or {} when no run left one (or it cannot be read)."""
    rec = read_cache_record(layout, STORE)
    return rec if rec.get("format") == FORMAT else {}


def review_items(layout: Layout, rec: JsonObject | None = None) -> dict[str, list[JsonValue]]:
    """The drift review items the record (``rec``, else read) holds, by unit id; a unit's
    items that are not a list are one unreadable item (``record_items``)."""
    return record_items(read_record(layout) if rec is None else rec)


def record_items(rec: JsonObject) -> dict[str, list[JsonValue]]:
    """``review_items`` of a record already read (the review page's).  A unit's items that
    are not a list (the tool never writes one) are one unreadable item, ``None``: even an
    object with a code and message is then a hand edit, not an item the check raised."""
    items = part(rec.get("review_items"))
    return {uid: list(v) if isinstance(v, list) else [None] for uid, v in items.items()}


def readable_item(item: JsonValue) -> JsonObject | None:
    """The item, when it is an object with a text code and message; None when a hand edit
    left it unreadable.  The one narrowing of status and the review page, so both list
    the same items and say the same of the rest (``UNREADABLE_ITEM``)."""
    if isinstance(item, dict):
        code, message = item.get("code"), item.get("message")
        if isinstance(code, str) and isinstance(message, str):
            return item
    return None


def item_text(item: JsonValue) -> str:
    """An item as one line: its code and message, or ``UNREADABLE_ITEM``."""
    readable = readable_item(item)
    return f"{readable['code']} {readable['message']}" if readable else UNREADABLE_ITEM


def unreadable_warnings(
    layout: Layout, items: Mapping[str, list[JsonValue]]
) -> list[EvidenceWarning]:
    """W189 once, when any of ``items`` (the ones shown) is unreadable: how many, where."""
    units = sorted(
        uid for uid, found in items.items() if any(readable_item(i) is None for i in found)
    )
    if not units:
        return []
    count = sum(1 for found in items.values() for i in found if readable_item(i) is None)
    named = ", ".join(units[:5]) + (f" and {len(units) - 5} more" if len(units) > 5 else "")
    return [
        EvidenceWarning(
            f"{STORE} holds {count} unreadable review item(s) (on {named}): it was edited by "
            "hand, so they are listed as unreadable; run 'tht workspace evidence check' again, "
            "which writes the record anew",
            layout.rel(layout.cache / STORE),
            code=DAMAGED,
        )
    ]


def catalog_status(layout: Layout, working: Mapping[str, str] | None = None) -> CatalogStatus:
    """What ``status`` says about the catalog: the last run's time, catalog, drift
    review items by unit (from the record; nothing connects to a warehouse).

    ``working`` (unit id -> content hash of the working files) drops the items of units
    deleted since the run (``deleted_since``): nothing is left to review there.  A unit
    edited since keeps its items, listed in ``edited_since``: the next run says whether
    the edit settled them."""
    rec = read_record(layout)
    if not rec:
        return CatalogStatus(False, {})
    changes = part(rec.get("drift")).get("changes")
    items = review_items(layout, rec)
    gone: list[str] = []
    edited: list[str] = []
    if working is not None:
        gone = sorted(uid for uid in items if uid not in working)
        units = part(rec.get("units"))
        edited = sorted(
            uid
            for uid in items
            if uid in working and part(units.get(uid)).get("content_hash") != working[uid]
        )
        items = {uid: v for uid, v in items.items() if uid in working}
    return CheckedStatus(
        True,
        items,
        rec.get("checked_at"),
        part(rec.get("catalog")).get("fingerprint"),
        rec.get("base"),
        rec.get("note"),
        len(changes) if isinstance(changes, list) else 0,
        tuple(gone),
        tuple(edited),
        tuple(unreadable_warnings(layout, items)),
    )
