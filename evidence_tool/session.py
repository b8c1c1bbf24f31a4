"""One command's view of a workspace: root, installation, actor, archive and backends.

This is wiring, not behaviour: it picks the configured activation backend,
refiner and network policy for the library calls the CLI makes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evidence_tool.activation import backend_for
from evidence_tool.archive.local import Activate, ConsolidateResult, LocalEvidenceArchive
from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.descriptor import Installation, load_installation, resolve_actor
from evidence_tool.workspace.locate import require_workspace
from evidence_tool.workspace.scan import Progress

if TYPE_CHECKING:  # imported where used: a command pays only for what it runs
    from evidence_tool.activation.citations import CitationContext
    from evidence_tool.activation.sqlite_index import Filters
    from evidence_tool.activation.vec import DenseStatus
    from evidence_tool.archive.queries import ArchiveStatus, ShownUnit
    from evidence_tool.catalog.review import CatalogStatus
    from evidence_tool.catalog.step import StepOutcome
    from evidence_tool.gitflow.records import GitCommands, GitState
    from evidence_tool.gitflow.strict import StrictReport
    from evidence_tool.sources import NetworkPolicy
    from evidence_tool.sources.decide import DecideResult
    from evidence_tool.sources.import_add import AddResult
    from evidence_tool.sources.refiner import CommandRefiner, UnitsRefiner
    from evidence_tool.sources.refresh import RefreshResult
    from evidence_tool.sources.registry import RetractResult, SourceDetail, SourceSummary
    from evidence_tool.workspace.layout import Layout


@dataclass(frozen=True, slots=True)
class WorkspaceStatus:
    """``status``: the archive's status, the last catalog run's part, the Git state and
    the warnings about missing sources (W151)."""

    archive: ArchiveStatus
    catalog: CatalogStatus
    git: GitState
    warnings: tuple[EvidenceWarning, ...]
    search_index: DenseStatus  # the sqlite index's vectors and which path ranks them

    def to_json(self) -> JsonObject:
        return {
            **self.archive.to_json(),
            "catalog": self.catalog.to_json(),
            "git": self.git.to_json(),
            "search_index": self.search_index.to_json(),
            "warnings": [w.to_dict() for w in self.warnings],
        }


@dataclass
class Session:
    root: Path
    installation: Installation
    archive: LocalEvidenceArchive

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        installation: str | None,
        wait: float = 0.0,
        progress: Progress | None = None,
    ) -> Session:
        inst = load_installation(installation)
        # A workspace has a descriptor: without one, readers would report an empty
        # archive as "ok" and writers would start one in the wrong folder (E603).
        root = require_workspace(root)
        return cls(root, inst, LocalEvidenceArchive(root, wait=wait, progress=progress))

    def actor(self, explicit: str | None = None) -> str:
        return resolve_actor(explicit, self.installation)

    def activation(self) -> Activate | None:
        inst = self.installation
        return backend_for(
            inst.section("activation"), self.archive.layout, inst.section("embedding")
        )

    def initialize(self, actor: str) -> ConsolidateResult:
        """Record the baseline; the configured backend readies its activation if it can
        (the sqlite index of the baseline, adopted by the first consolidate)."""
        from evidence_tool.errors import DescriptorError

        try:
            backend = self.activation()
        except DescriptorError:
            backend = None  # init activates nothing: consolidate reports the descriptor
        return self.archive.initialize(actor, prepare=getattr(backend, "prepare", None))

    def index_drift(self) -> tuple[list[Diagnostic], JsonObject]:
        """E702 per index entry that differs from the active snapshot, and the --json facts."""
        from evidence_tool.activation.drift import index_drift

        settings = self.installation.section("activation")
        backend = self.activation() if settings.get("kind") == "qdrant" else None
        problems, drift = index_drift(self.archive, settings, backend)
        return problems, drift.to_json()

    def consolidate(
        self,
        actor: str,
        activate: Activate | None,
        dry_run: bool = False,
        *,
        warnings_as_errors: bool = False,
    ) -> ConsolidateResult:
        """Consolidate the working files; the first one on a legacy workspace (one still
        holding evidence/manifest.yaml) converts it to v4 first (SPEC.md 7).  With the
        catalog step configured, the units are checked first, and the snapshot records
        the catalog they were checked against."""
        from evidence_tool.migrate import consolidate

        step = self.catalog_step()
        if step is not None:
            from evidence_tool.catalog.step import finish, refuse_blocked

            refuse_blocked(step)  # block: true and findings: nothing is written
        # W151 before any write, so --warnings-as-errors refuses it like the files' warnings.
        missing = self._missing_sources()
        found = [*missing, *(step.warnings if step else [])]
        result = consolidate(
            self.archive,
            actor,
            activate,
            dry_run,
            warnings_as_errors=warnings_as_errors,
            extra_warnings=found,
            catalog=step.record() if step else None,
        )
        if step is not None:
            if not dry_run:
                finish(step, self.archive)
            result.catalog = step.summary()
        result.warnings = [*result.warnings, *missing, *(step.warnings if step else [])]
        if activate is not None and not dry_run:
            from evidence_tool.activation.sqlite_index import SqliteBackend  # loaded if in use

            if isinstance(activate, SqliteBackend):
                result.warnings += activate.warnings()  # W702: sqlite-vec installed, not loading
        return result

    def _missing_sources(self) -> list[EvidenceWarning]:
        """W151s; without a source registry no source can be missing, and the sources
        package (its record types) stays unloaded (start-up, docs/performance.md)."""
        if not self.archive.layout.sources_json.exists():
            return []
        from evidence_tool.sources import missing_warnings

        return missing_warnings(self.archive)

    def catalog_step(self) -> StepOutcome | None:
        """The catalog step's outcome, or None when the installation configures none."""
        if "catalog" not in self.installation.evidence:
            return None  # without loading the catalog package (start-up, docs/performance.md)
        from evidence_tool.catalog.step import catalog_step

        return catalog_step(self.root, self.installation, self.archive.progress)

    def status(self) -> JsonObject:
        """``status_report`` as the --json result."""
        return self.status_report().to_json()

    def status_report(self) -> WorkspaceStatus:
        """The archive's status plus the Git state of the evidence tree (a note outside Git)
        and the last catalog run's review items (never a warehouse connection)."""
        from evidence_tool.activation.sqlite_index import INDEX_NAME
        from evidence_tool.activation.vec import dense_status
        from evidence_tool.archive import queries
        from evidence_tool.archive.diffing import working_entries
        from evidence_tool.catalog.review import catalog_status, review_items
        from evidence_tool.gitflow import git_state
        from evidence_tool.sources import missing_warnings, unfinished_decisions

        # W151, and W153 for a decision whose consolidation was never recorded.
        warnings = (*missing_warnings(self.archive), *unfinished_decisions(self.archive))
        dense, vec_warning = dense_status(self.archive.layout.cache / INDEX_NAME)
        # The working units, so items of units deleted since the catalog run are dropped
        # (the scan is the stat-cached one diff makes; only when there are items at all).
        working = None
        if review_items(self.archive.layout):
            working = {uid: e[0] for uid, e in working_entries(self.archive)[0].items()}
        return WorkspaceStatus(
            queries.status(self.archive),
            catalog_status(self.archive.layout, working),
            git_state(self.archive),
            (*warnings, *([vec_warning] if vec_warning else [])),  # W702
            dense,
        )

    def show(self, unit_id: str) -> ShownUnit:
        """The unit as the newest snapshot holds it (``show --json``), with the warnings
        about its sources and, for an imported unit, where each excerpt came from."""
        from evidence_tool.archive import queries
        from evidence_tool.sources import imported_from, unit_warnings

        shown = queries.show(self.archive, unit_id)
        declaration = shown.declaration
        return shown.extended(
            unit_warnings(self.archive, declaration),
            imported_from(self.archive.layout, declaration),
        )

    # -- sources (SPEC 6): the installation's refiner and network policy -------
    def refiner(self) -> UnitsRefiner | CommandRefiner:
        from evidence_tool.sources import refiner_for

        return refiner_for(self.installation.section("refiner"), str(self.root))

    def network(self) -> NetworkPolicy:
        from evidence_tool.sources import NetworkPolicy

        return NetworkPolicy.from_settings(self.installation.section("network"))

    def refresh(
        self, actor: str, only: str | None, dry_run: bool, progress: Any = None
    ) -> RefreshResult:
        from evidence_tool.sources import refresh
        from evidence_tool.workspace.descriptor import load_workspace_descriptor

        descriptor = load_workspace_descriptor(self.root)
        return refresh(
            self.archive,
            descriptor.sources,
            self.network(),
            self.refiner(),
            descriptor.default_language,
            actor,
            only=only,
            dry_run=dry_run,
            progress=progress,
        )

    def decide(
        self, source_id: str, revision: str, decision: str, actor: str, allow_mass_retire: bool
    ) -> DecideResult:
        from evidence_tool.sources import decide

        return decide(
            self.archive,
            source_id,
            revision,
            decision,
            actor,
            self.activation(),
            allow_mass_retire=allow_mass_retire,
        )

    def decide_retry(self, source_id: str, actor: str) -> DecideResult:
        from evidence_tool.sources import retry

        return retry(self.archive, source_id, actor, self.activation())

    def sources_list(self) -> list[SourceSummary]:
        from evidence_tool.sources.registry import source_summaries

        return source_summaries(self.archive)

    def sources_show(self, source_id: str) -> SourceDetail:
        from evidence_tool.sources import show_source

        return show_source(self.archive, source_id)

    def sources_add(
        self, fmt: str, path: str, language: str | None, options: list[str]
    ) -> AddResult:
        from evidence_tool.sources import add_import, parse_options

        return add_import(self.root, fmt, path, language, parse_options(options), Path.cwd())

    def sources_retract(self, source_id: str, note: str, actor: str) -> RetractResult:
        from evidence_tool.sources import retract

        return retract(self.archive, source_id, note, actor)

    # -- one call per CLI command (issue 18: a body never reaches past the Session) --
    # Results typed JsonObject are the command's --json result as the library builds it.
    @property
    def layout(self) -> Layout:
        return self.archive.layout

    def diff(self, revisions: tuple[str, ...]) -> JsonObject:
        from evidence_tool.archive.diffing import diff

        return diff(self.archive, *revisions).to_json()

    def events(self) -> list[JsonObject]:
        return self.archive.events()

    def verify(self) -> tuple[list[Diagnostic], JsonObject]:
        from evidence_tool.archive.integrity import verify

        problems, counts = verify(self.archive)
        return problems, {k: v for k, v in counts.items()}

    def verify_strict(self) -> StrictReport:
        from evidence_tool.gitflow import verify_strict

        return verify_strict(self.archive)

    def git_commands(self) -> GitCommands:
        from evidence_tool.gitflow import git_commands

        return git_commands(self.archive)

    def restore(self, unit_id: str, actor: str) -> ConsolidateResult:
        from evidence_tool.archive.edits import ArchiveEditor

        return ArchiveEditor(self.archive).restore(unit_id, actor, self.activation())

    def resolve_review(self, unit_id: str, note: str, actor: str) -> list[JsonObject]:
        from evidence_tool.archive.edits import ArchiveEditor

        return ArchiveEditor(self.archive).resolve_review(unit_id, note, actor)

    def recover(self, abandon: bool, actor: str) -> list[JsonObject]:
        from evidence_tool.archive.edits import ArchiveEditor

        return [e.to_json() for e in ArchiveEditor(self.archive).recover(abandon, actor)]

    def search(self, query: str, filters: Filters, limit: int, mode: str | None) -> JsonObject:
        from evidence_tool.activation.search import search_active

        inst = self.installation
        activation, embedding = inst.section("activation"), inst.section("embedding")
        found = search_active(self.layout, activation, embedding, query, filters, limit, mode)
        return found.to_json()

    def evaluate(
        self, questions: str, k: int, modes: tuple[str, ...], compare: str | None
    ) -> JsonObject:
        from evidence_tool.activation.evaluation import evaluate

        inst = self.installation
        return evaluate(
            self.archive,
            questions,
            k=k,
            modes=modes,
            compare=compare,
            activation=inst.section("activation"),
            embedding=inst.section("embedding"),
        ).to_json()

    def citation_context(self) -> CitationContext:
        from evidence_tool.activation.citations import citation_context

        return citation_context(self.archive)
