"""Everything the review page shows, read once from the workspace (no lock, no writes).

The curated tree is scanned once per report: every library view used here
(status, diff, the source registry, git-commands) reads it through the same
``ReportArchive``, so a 10,000-unit workspace is parsed one time, not four.

The page's model is typed rows, not the library's dicts: a section reads ``row.code``,
and mypy knows what a card or a panel holds.  Sources and comparisons are the sources
package's own typed records, read as they are.  ``WrittenReport`` is what
``write_report`` hands the CLI (the ``report`` command's --json result).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from evidence_tool.archive import queries
from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.records import Declaration, ManualDeclaration, declaration_from_json
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.archive.state import State
from evidence_tool.catalog.review import (
    UNREADABLE_ITEM,
    part,
    read_record,
    readable_item,
    record_items,
    unreadable_warnings,
)
from evidence_tool.errors import Diagnostic, EvidenceError, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import Record
from evidence_tool.sources import missing_warnings, store
from evidence_tool.sources.compare import ArchiveView, stale_paths
from evidence_tool.sources.identity import normalize
from evidence_tool.sources.records import Comparison
from evidence_tool.sources.registry import SourceSummary, source_summaries
from evidence_tool.unit import Unit, parse
from evidence_tool.workspace.descriptor import load_workspace_descriptor
from evidence_tool.workspace.scan import ValidationReport

CHANGE_CLASSES = ("added", "modified", "renamed", "reformatted", "deleted")


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


class ReportArchive(LocalEvidenceArchive):
    """The archive as one report sees it: the curated tree is scanned once."""

    _scanned: ValidationReport | None = None

    def scan(self, *, cached: bool = False) -> ValidationReport:
        if self._scanned is None:
            self._scanned = super().scan(cached=cached)  # every unit is rendered: read all
        return self._scanned


@dataclass
class UnitView:
    """One unit card: a working file, or a unit deleted since the base revision."""

    unit: Unit
    path: str | None
    text: str  # the file's Markdown (the last snapshot's, for a deleted unit)
    status: UnitStatus
    provenance: Declaration | None  # None: new, not consolidated yet
    review_items: list[ReviewRow]
    warnings: list[str]
    has_errors: bool = False  # the file has findings (layout, duplicate id) besides parsing
    catalog: CatalogStatus = field(default_factory=CatalogStatus)  # the last catalog run's


@dataclass
class ComparisonView:
    source: SourceSummary
    comparison: Comparison
    local: dict[str, str]  # unit id -> the working file's Markdown
    source_text: str | None
    source_note: str | None
    stale: list[str]  # affected files changed since the refresh
    commands: dict[str, str]  # keep / replace -> shell command


@dataclass
class ReportData:
    root: str
    workspace_id: str
    workspace_name: str
    generated_at: str
    state: State
    initialized: bool
    base: str | None  # the revision the working files are compared with
    base_label: str  # active | pending | none
    units: list[UnitView]
    errors: list[Diagnostic]
    warnings: list[EvidenceWarning]
    changes: dict[str, list[str]]
    old_texts: dict[str, str]  # modified or deleted id -> the base revision's Markdown
    interrupted: int  # journal entries of interrupted operations
    comparisons: list[ComparisonView]
    sources: list[SourceSummary]
    git: GitPanel
    sources_by_id: dict[str, SourceSummary] = field(default_factory=dict)
    catalog: CatalogPanel | None = None  # the last catalog run; None: no run yet
    not_served: str | None = None  # why retrieval serves nothing; None: a revision is active


def decide_commands(installation: str | None, root: str, sid: str, revision: str) -> dict[str, str]:
    """The exact ``decide`` command lines for one comparison, every argument shell-quoted."""
    head = ["tht"]
    if installation:
        head += ["--installation", os.path.abspath(installation)]
    head += ["workspace", "evidence", "decide", "--workspace-root", root]
    head += ["--source-id", sid, "--revision", revision, "--decision"]
    return {d: " ".join(shlex.quote(a) for a in [*head, d]) for d in ("keep", "replace")}


def _workspace_names(root: Path) -> tuple[str, str]:
    try:
        descriptor = load_workspace_descriptor(root)
    except EvidenceError:
        return root.name, root.name
    return descriptor.id, descriptor.name


def _base(archive: LocalEvidenceArchive, state: State) -> tuple[Snapshot | None, str]:
    """The snapshot that ``diff`` compares the working files with: active, else pending."""
    if state.active:
        return archive.snapshot(state.active), "active"
    if state.pending:
        return archive.snapshot(state.pending), "pending"
    return None, "none"


def _classes(changes: dict[str, list[str]]) -> dict[str, UnitStatus]:
    """id -> its change class, the first class listing it winning (one pass, not one
    search of every list per unit)."""
    out: dict[str, UnitStatus] = {}
    for cls in CHANGE_CLASSES:
        for uid in changes.get(cls, ()):
            out.setdefault(uid, UnitStatus(cls))
    return out


def _declaration(provenance: JsonObject | None) -> Declaration | None:
    """The typed record of a manifest's provenance object (archive's JSON boundary)."""
    return declaration_from_json(provenance) if provenance else None


def _unit_warnings(provenance: Declaration | None, retracted: dict[str, str]) -> list[str]:
    """The retraction warnings of the sources the declaration or its lineage cites."""
    if isinstance(provenance, ManualDeclaration):
        cited = provenance.original.source_id if provenance.original else None
    else:
        cited = provenance.source_id if provenance else None
    warning = retracted.get(cited) if cited else None
    return [warning] if warning else []


def _units(
    view: ArchiveView,
    changes: dict[str, list[str]],
    review: dict[str, list[JsonObject]],
    base: Snapshot | None,
    retracted: dict[str, str],
    error_paths: set[str | None],
) -> tuple[list[UnitView], dict[str, str]]:
    """The cards of the working units (``changes`` is None before the archive's first
    snapshot: every unit is new), then those deleted since ``base``."""
    classes = _classes(changes)
    cards = []
    for uid in sorted(view.files):
        f = view.files[uid]
        assert f.unit is not None
        prov = _declaration(view.declarations.get(uid))
        cards.append(
            UnitView(
                f.unit,
                f.rel,
                f.data.decode("utf-8"),
                classes.get(uid, UnitStatus.UNCHANGED),
                prov,
                [ReviewRow.of(i) for i in review.get(uid, [])],
                _unit_warnings(prov, retracted),
                f.rel in error_paths,
            )
        )
    old_texts: dict[str, str] = {}
    if base is not None:
        old_texts = _deleted_cards(base, changes, retracted, cards)
    cards.sort(key=lambda c: c.unit.id)
    return cards, old_texts


def _deleted_cards(
    base: Snapshot,
    changes: dict[str, list[str]],
    retracted: dict[str, str],
    cards: list[UnitView],
) -> dict[str, str]:
    """Cards for the units deleted since ``base``; returns the base text of every modified
    or deleted unit (one pass over the manifest: ``Snapshot.entry`` is a linear search)."""
    wanted = set(changes.get("modified", [])) | set(changes.get("deleted", []))
    entries = {e.id: e for e in base.entries() if e.id in wanted}
    old_texts = {uid: base.unit_bytes(e).decode("utf-8") for uid, e in entries.items()}
    for uid in changes.get("deleted", []):
        gone = entries.get(uid)
        if gone is not None:
            unit = parse(base.unit_bytes(gone), path=gone.path)
            prov = _declaration(gone.provenance)
            warnings = _unit_warnings(prov, retracted)
            cards.append(
                UnitView(unit, gone.path, old_texts[uid], UnitStatus.DELETED, prov, [], warnings)
            )
    return old_texts


def _comparison(
    archive: ReportArchive,
    view: ArchiveView,
    summary: SourceSummary,
    pending: Comparison,
    installation: str | None,
) -> ComparisonView:
    layout = archive.layout
    sid = pending.source_id
    local = {}
    for current in pending.current:
        f = view.files.get(current.id)
        if f is not None:
            local[current.id] = f.data.decode("utf-8")
    stale = stale_paths(layout, pending, view.carriers)
    text, note = None, None
    try:
        raw = store.load_acquisition(layout, sid, pending.acquisition)
        text = normalize(raw, pending.locator)
    except EvidenceError as exc:
        note = str(exc)
    commands = decide_commands(installation, str(layout.root), sid, pending.revision)
    return ComparisonView(summary, pending, local, text, note, stale, commands)


def _git(archive: ReportArchive) -> GitPanel:
    from evidence_tool.gitflow import git_commands

    try:
        found = git_commands(archive)
    except EvidenceError as exc:
        return GitPanel(available=False, note=str(exc))
    return GitPanel(
        available=True,
        steps=found.steps,
        commands=found.commands,
        warnings=tuple(w.message for w in found.warnings),
    )


def collect(root: str | os.PathLike[str], installation: str | None = None) -> ReportData:
    """Read the workspace for the review page: units, errors, changes, comparisons, Git."""
    archive = ReportArchive(root)
    scan = archive.scan()  # E601 when the curated tree is unavailable: nothing to show
    status = queries.status(archive)
    base, label = _base(archive, status.state)
    view = ArchiveView.load(archive)
    registry = store.read(archive.layout)
    sources = source_summaries(archive, registry, view)
    retracted = {s.source_id: note for s in sources if (note := s.warning())}
    error_paths = {d.path for d in scan.errors}
    # Before the first snapshot every working unit is new.
    changes = status.unconsolidated if status.initialized else {"added": sorted(view.files)}
    units, old_texts = _units(view, changes, status.review_items, base, retracted, error_paths)
    missing = missing_warnings(archive, view, registry)  # W151, on the page and on the cards
    cards = {c.path: c for c in units if c.status != "deleted"}
    for w in missing:
        card = cards.get(w.path)
        if card is not None:
            card.warnings.append(f"{w.code}: {w.message}")
    catalog = read_record(archive.layout)  # never a warehouse connection
    _catalog_status(catalog, view, units)
    shown = {uid: v for uid, v in record_items(catalog).items() if uid in view.files}
    damaged = unreadable_warnings(archive.layout, shown)  # W189, as status says it
    comparisons = []
    for s in sources:
        # From the one registry read above: a refresh may replace sources.json meanwhile.
        record = registry.sources.get(s.source_id)
        if record and record.comparison:
            comparisons.append(_comparison(archive, view, s, record.comparison, installation))
    ws_id, ws_name = _workspace_names(archive.layout.root)
    return ReportData(
        root=str(archive.layout.root),
        workspace_id=ws_id,
        workspace_name=ws_name,
        generated_at=now(),
        state=status.state,
        initialized=status.initialized,
        base=base.revision if base else None,
        base_label=label,
        units=units,
        errors=list(scan.errors),
        warnings=[*scan.warnings, *missing, *damaged],
        changes=status.unconsolidated,
        old_texts=old_texts,
        interrupted=len(status.journal),
        comparisons=comparisons,
        sources=sources,
        git=_git(archive),
        sources_by_id={s.source_id: s for s in sources},
        catalog=CatalogPanel.of(catalog),
        not_served=status.serving.reason,
    )


def _catalog_status(record: JsonObject, view: ArchiveView, cards: list[UnitView]) -> None:
    """Each card's catalog status as the last run left it.  A unit edited since (another
    content hash) or not valid then was not checked in its present form.

    ``record`` is the catalog run's record file as ``read_record`` returns it (catalog's
    JSON boundary): each part is narrowed before it is trusted."""
    checked = part(record.get("units"))
    items = record_items(record)
    for card in cards:
        uid = card.unit.id
        f = view.files.get(uid)
        seen = part(checked.get(uid))
        if card.status == UnitStatus.DELETED or f is None or not seen:
            continue
        if seen.get("content_hash") != f.content_hash:
            card.catalog = CatalogStatus(note="edited since the last check")
            continue
        # The narrowing status uses: an unreadable item is listed as such, never dropped.
        mine = [readable_item(i) for i in items.get(uid, [])]
        codes = sorted(
            {*(str(c) for c in _list(seen.get("codes"))), *(str(i["code"]) for i in mine if i)}
        )
        card.catalog = CatalogStatus(
            CatalogState.FINDINGS if codes or mine else CatalogState.CLEAN,
            tuple(codes),
            tuple(ReviewRow.of(i) if i else ReviewRow("unreadable", UNREADABLE_ITEM) for i in mine),
        )


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []
