"""The source registry: list, show and retract (SPEC 6.5).

Retraction keeps every link (declarations and lineage stay as they are) and
raises a review item on each live unit that cites the source, bound to that
unit's current content hash: consolidation is blocked (E140) until the unit
is edited, retired or its item resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from msgspec.structs import replace

from evidence_tool.archive import eventlog
from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.records import Declaration, ManualDeclaration
from evidence_tool.errors import EvidenceWarning, UnknownNameError, UsageError
from evidence_tool.jsonvalue import JsonObject, JsonValue, View
from evidence_tool.record import Record, field
from evidence_tool.sources import store
from evidence_tool.sources.records import (
    Comparison,
    DecisionProgress,
    Registry,
    Retraction,
    ReviewCode,
    SourceKind,
    SourceRecord,
    SourceStatus,
    as_stored,
)

if TYPE_CHECKING:
    from evidence_tool.sources.compare import ArchiveView

RETRACTED = ReviewCode.SOURCE_RETRACTED.value
MISSING = "W151"  # a live unit derived from a source that refresh marked missing
UNFINISHED = "W153"  # a decision saved whose consolidation was never recorded


MIN_PREFIX = 6
_LISTED = 10  # candidates named in the message; 'sources list' shows the rest


def resolve_id(known: dict[str, str], given: str) -> str:
    """A full source id, or a unique prefix of at least 6 hex characters (else E904).
    ``known``: source id -> locator, of every source the caller may name."""
    if given in known:
        return given
    matches = [s for s in known if s.startswith(given)]
    if len(given) >= MIN_PREFIX and len(matches) == 1:
        return matches[0]
    if len(given) < MIN_PREFIX:
        what = f"is too short: give at least {MIN_PREFIX} characters of a source id"
    else:
        what = "is ambiguous" if matches else "is not a known source"
    raise UnknownNameError(f"source id {given!r} {what}; {_candidates(known, matches)}")


def locators(registry: Registry) -> dict[str, str]:
    """source id -> locator of every registered source: what ``resolve_id`` chooses from."""
    return {sid: r.locator for sid, r in registry.sources.items()}


def _candidates(known: dict[str, str], matches: list[str]) -> str:
    """The sources to choose from (those the prefix matches, if any): short id and locator."""
    ids = matches or sorted(known)
    if not ids:
        return "the workspace has no sources yet: run 'tht workspace evidence refresh'"
    shown = [f"{sid[:12]} {known[sid]}" for sid in ids[:_LISTED]]
    more = f", and {len(ids) - _LISTED} more" if len(ids) > _LISTED else ""
    return (
        "candidates: "
        + ", ".join(shown)
        + more
        + " ('tht workspace evidence sources list' shows them all)"
    )


class CitingUnit(Record, frozen=True):
    """A live unit citing a source, as its document source or as its original."""

    id: str
    role: str = field(name="as")  # "source" | "original"
    path: str


def _view(archive: LocalEvidenceArchive) -> ArchiveView:
    """The archive's units by source; loaded here, so that W151's common case (no source
    missing) does not import the comparison (start-up, docs/performance.md)."""
    from evidence_tool.sources.compare import ArchiveView

    return ArchiveView.load(archive)


def _citing(view: ArchiveView, sid: str) -> list[CitingUnit]:
    return [CitingUnit(uid, role, view.files[uid].rel) for uid, role in view.citing.get(sid, [])]


@dataclass(frozen=True, slots=True)
class SourceSummary(View):
    """One line of 'sources list': the record, whether it is suppressed, who cites it."""

    _keys = (
        "source_id",
        "locator=record.locator",
        "kind=record.kind",
        "status",
        "title=record.title",
        "identifier=record.identifier",  # its keys are in sources.json's (sorted) order
        "adopted_hash=record.adopted_hash",
        "acknowledged_hash=record.acknowledged_hash",
        "pending_comparison",
        "suppressed",
        "retraction",
        "decision",
        "citing_units",
    )
    record: SourceRecord
    suppressed: bool
    citing_units: tuple[CitingUnit, ...]

    @property
    def source_id(self) -> str:
        return self.record.source_id

    @property
    def status(self) -> SourceStatus:
        return SourceStatus.RETRACTED if self.record.retraction else self.record.status

    def warning(self) -> str | None:
        return warning_for(self.record)

    @property
    def pending_comparison(self) -> str | None:
        return self.record.comparison.revision if self.record.comparison else None

    @property
    def retraction(self) -> JsonValue:
        return _stored(self.record.retraction)

    @property
    def decision(self) -> JsonValue:
        return _stored(self.record.decision)


def _stored(record: Record | None) -> JsonValue:
    """A record as sources.json holds it (keys sorted), None where there is none."""
    return as_stored(record.to_json()) if record is not None else None


def _summary(record: SourceRecord, view: ArchiveView) -> SourceSummary:
    sid = record.source_id
    # An import is never suppressed as a whole (only its deleted ids are: compare._place).
    suppressed = sid in view.suppressed and record.kind is not SourceKind.IMPORT
    return SourceSummary(record, suppressed, tuple(_citing(view, sid)))


def source_summaries(
    archive: LocalEvidenceArchive, registry: Registry | None = None, view: ArchiveView | None = None
) -> list[SourceSummary]:
    """Every source, with who cites it (from ``registry`` and ``view`` when already read)."""
    registry = registry if registry is not None else store.read(archive.layout)
    view = view if view is not None else _view(archive)
    return [_summary(r, view) for _, r in sorted(registry.sources.items())]


def list_sources(archive: LocalEvidenceArchive) -> list[JsonObject]:
    """The 'sources list --json' payload (a JSON boundary: the CLI and the review page
    render it as is)."""
    return [s.to_json() for s in source_summaries(archive)]


def warning_for(record: SourceRecord) -> str | None:
    """The retraction warning of a record."""
    retraction, locator = record.retraction, record.locator
    if retraction is None:
        return None
    return (
        f"source {locator} was retracted on {retraction.at} by "
        f"{retraction.actor}: {retraction.note}"
    )


@dataclass(frozen=True, slots=True)
class SourceDetail(View):
    """'sources show': the summary, the pending comparison and the retraction warning."""

    _keys = ("*summary", "comparison=stored", "changes", "warnings")
    summary: SourceSummary
    comparison: Comparison | None

    @property
    def stored(self) -> JsonValue:
        return _stored(self.comparison)

    @property
    def changes(self) -> JsonObject | None:
        return self.comparison.changes().to_json() if self.comparison else None

    @property
    def warnings(self) -> list[str]:
        warning = self.summary.warning()
        return [warning] if warning else []


def show_source(archive: LocalEvidenceArchive, given: str) -> SourceDetail:
    registry = store.read(archive.layout)
    record = registry.sources[resolve_id(locators(registry), given)]
    return SourceDetail(_summary(record, _view(archive)), record.comparison)


def unit_warnings(archive: LocalEvidenceArchive, declaration: Declaration | None) -> list[str]:
    """Retraction warnings for a unit whose declaration or lineage cites a retracted source."""
    if isinstance(declaration, ManualDeclaration):
        cited = [declaration.original.source_id] if declaration.original else []
    else:
        cited = [declaration.source_id] if declaration else []
    if not cited:
        return []
    registry = store.read(archive.layout)
    out: list[str] = []
    for sid in cited:
        record = registry.sources.get(sid)
        warning = warning_for(record) if record else None
        if warning and warning not in out:
            out.append(warning)
    return out


def _where(record: SourceRecord) -> str:
    locator = record.locator
    return locator[3:] if record.kind == SourceKind.FS else locator


def missing_warnings(
    archive: LocalEvidenceArchive,
    view: ArchiveView | None = None,
    registry: Registry | None = None,
) -> list[EvidenceWarning]:
    """W151 for each live unit whose declaration or lineage cites a source the last
    refresh did not find: nothing is retired for it, so the operator must choose."""
    registry = registry if registry is not None else store.read(archive.layout)
    missing = {s: r for s, r in registry.sources.items() if r.status == SourceStatus.MISSING}
    if not missing:
        return []  # the common case costs one small read, no scan
    view = view if view is not None else _view(archive)
    out = []
    for sid, record in sorted(missing.items()):
        since = record.missing_since or "the last refresh"
        for uid, _ in view.citing.get(sid, []):
            path = view.files[uid].rel
            message = (
                f"unit '{uid}' comes from {_where(record)}, which refresh has not found since "
                f"{since}: restore the document and run 'tht workspace evidence refresh', or "
                f"retire the unit: delete {path} and run 'tht workspace evidence consolidate'"
            )
            out.append(EvidenceWarning(message, path, None, MISSING))
    return sorted(out, key=lambda w: (w.path or "", w.message))


class RetractResult(Record, frozen=True):
    source_id: str
    retraction: Retraction
    review_items_raised: tuple[str, ...]


def _retraction_items(
    view: ArchiveView, record: SourceRecord, retraction: Retraction, citing: list[CitingUnit]
) -> JsonObject:
    """The staged review items (the archive's staged.json format) raised on each citing
    unit, bound to its current content hash."""
    items: JsonObject = {}
    for c in citing:
        unit = view.files[c.id].unit
        assert unit is not None
        items[c.id] = [
            {
                "code": RETRACTED,
                "message": f"its source {record.locator} was retracted: {retraction.note}",
                "raised_by": retraction.actor,
                "raised_at": retraction.at,
                "content_hash": unit.content_hash,
                "source_id": record.source_id,
            }
        ]
    return items


def retract(archive: LocalEvidenceArchive, given: str, note: str, actor: str) -> RetractResult:
    if not note.strip():
        raise UsageError("--note is required: say why the source is retracted")
    with archive.locked("sources retract"):
        layout = archive.layout
        registry = store.read(layout)
        sid = resolve_id(locators(registry), given)
        record = registry.sources[sid]
        # The retraction is recorded first and its time reused, so re-running after a
        # crash stages identical items (staged merges are idempotent).
        if record.retraction is None:
            record = replace(record, retraction=Retraction(note, actor, now()))
            registry.sources[sid] = record
            store.write(layout, registry)
        assert record.retraction is not None
        retraction = record.retraction
        view = _view(archive)
        citing = _citing(view, sid)
        items = _retraction_items(view, record, retraction, citing)
        archive.merge_staged({"review_items": items})
        eventlog.append(
            layout.log,
            "source retracted",
            actor,
            source_id=sid,
            note=note,
            units=[c.id for c in citing],
        )
    return RetractResult(sid, retraction, tuple(sorted(items)))


def unfinished_decisions(archive: LocalEvidenceArchive) -> list[EvidenceWarning]:
    """W153 for each decision written but still recorded as "saved": its consolidation
    failed or was interrupted (an exception, a kill, blocking files), so ``status`` says
    what finishes it."""
    if not archive.layout.sources_json.exists():
        return []
    out = []
    for sid, record in sorted(store.read(archive.layout).sources.items()):
        if record.decision is not None and record.decision.status == DecisionProgress.SAVED:
            message = (
                f"the {record.decision.decision} decision for source {sid[:12]} "
                f"({record.locator}) is saved but its consolidation is not recorded: run "
                f"'tht workspace evidence decide --source-id {sid[:12]} --retry'"
            )
            path = archive.layout.rel(archive.layout.sources_json)
            out.append(EvidenceWarning(message, path, None, UNFINISHED))
    return out
