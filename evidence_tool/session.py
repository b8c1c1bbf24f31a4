"""One command's view of a workspace: root, installation, actor, archive and backends.

This is wiring, not behaviour: it picks the configured activation backend,
refiner and network policy for the library calls the CLI makes.  It is also the
library's one face for a host (docs/api.md): every ``tht workspace evidence``
command is one call here, so a host gets what the CLI gets (the catalog step,
W151 and the legacy migration of consolidate included).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from evidence_tool.errors import (
    DescriptorError,
    Diagnostic,
    EvidenceError,
    EvidenceWarning,
    UsageError,
    with_warnings_refused,
)
from evidence_tool.jsonvalue import JsonObject, View
from evidence_tool.workspace.descriptor import (
    Installation,
    load_installation,
    load_workspace_descriptor,
    resolve_actor,
)
from evidence_tool.workspace.locate import require_workspace
from evidence_tool.workspace.scan import Progress, ValidationReport

if TYPE_CHECKING:  # imported where used: a command pays only for what it runs
    from evidence_tool.activation.citations import CitationContext
    from evidence_tool.activation.records import SearchResult
    from evidence_tool.activation.sqlite_index import Filters
    from evidence_tool.activation.vec import DenseStatus
    from evidence_tool.archive.diffing import Diff
    from evidence_tool.archive.journal import Interrupted
    from evidence_tool.archive.local import (
        Activate,
        CatalogRecord,
        ConsolidateResult,
        LocalEvidenceArchive,
    )
    from evidence_tool.archive.port import ActivationPort
    from evidence_tool.archive.queries import ArchiveStatus, ShownUnit
    from evidence_tool.catalog.review import CatalogRun, CatalogStatus
    from evidence_tool.catalog.step import StepOutcome
    from evidence_tool.gitflow.records import GitCommands, GitState
    from evidence_tool.migrate.run import MigrationResult
    from evidence_tool.publish import PublishResult
    from evidence_tool.sources import NetworkPolicy
    from evidence_tool.sources.decide import DecidePlan, DecideResult
    from evidence_tool.sources.import_add import AddResult
    from evidence_tool.sources.refiner import CommandRefiner, UnitsRefiner
    from evidence_tool.sources.refresh import RefreshResult
    from evidence_tool.sources.registry import RetractResult, SourceDetail, SourceSummary
    from evidence_tool.workspace.create import NewWorkspace
    from evidence_tool.workspace.fmt import FormatReport
    from evidence_tool.workspace.layout import Layout

__all__ = [
    "CorpusExport",
    "ReviewResolved",
    "Session",
    "WorkspaceStatus",
    "WorkspaceValidation",
    "WorkspaceVerification",
]


@dataclass(frozen=True, slots=True)
class WorkspaceStatus(View):
    """``status``: the archive's status, the last catalog run's part, the Git state and
    the warnings about missing sources (W151)."""

    archive: ArchiveStatus
    catalog: CatalogStatus
    git: GitState
    warnings: tuple[EvidenceWarning, ...]
    search_index: DenseStatus  # the sqlite index's vectors and which path ranks them
    _keys = ("*archive", "catalog", "git", "search_index", "warnings")


@dataclass(frozen=True, slots=True)
class WorkspaceValidation(View):
    """``validate``: the curated files' counts and findings, with the catalog step's
    when the installation configures one (``catalog`` is then its summary)."""

    counts: JsonObject  # files, valid, invalid, by_kind (refused warnings count invalid)
    file_errors: int  # the errors of the files' own checks (the catalog step's not counted)
    errors: list[Diagnostic]
    warnings: list[EvidenceWarning]
    catalog: JsonObject | None
    _keys = ("*counts", "catalog?")


@dataclass(frozen=True, slots=True)
class WorkspaceVerification(View):
    """``verify_report``: what was checked and the problems found (``result`` is the
    CLI's --json result), with the catalog step's findings under ``strict``."""

    result: JsonObject
    errors: list[Diagnostic]
    warnings: list[EvidenceWarning]
    _keys = ("*result",)


@dataclass(frozen=True, slots=True)
class CorpusExport(View):
    """``export``: the active corpus as JSON lines, written to ``output`` or returned
    (``lines()``) for the caller to print."""

    revision: str | None
    units: int
    format: str
    output: str | None  # the file written, None when nothing was
    records: list[JsonObject]  # each unit's export object (IndexRecord.to_json); [] if written
    _keys = ("revision", "units", "format", "output?", "records?=shown")

    @property
    def shown(self) -> list[JsonObject] | None:
        """The records, in the result when nothing was written."""
        return self.records if self.output is None else None

    def lines(self) -> list[str]:
        """One JSON object per unit, as ``tht workspace evidence export`` prints them."""
        import json

        return [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in self.records]


@dataclass(frozen=True, slots=True)
class ReviewResolved(View):
    """``review resolve``: the unit and the review items its note closed."""

    id: str
    resolved: list[JsonObject]
    _keys = ("id", "resolved")


def _validation(scanned: ValidationReport, warnings_as_errors: bool) -> WorkspaceValidation:
    """The files' counts and findings; with ``warnings_as_errors`` every coded warning is
    error E190 (and its file counts as invalid)."""
    errors, warnings = list(scanned.errors), list(scanned.warnings)
    if warnings_as_errors:
        errors, warnings = with_warnings_refused(errors, warnings)
    # summary() holds ints and a str -> int dict: JSON as it stands.
    counts = cast(JsonObject, dataclasses.replace(scanned, errors=errors).summary())
    return WorkspaceValidation(counts, len(errors), errors, warnings, None)


@dataclass
class Session:
    """A workspace with its installation: the library's one face (docs/api.md).

    ``Session.open(".")`` and then one call per operation; the CLI makes the same calls.
    """

    root: Path
    installation: Installation
    archive: LocalEvidenceArchive

    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str] = ".",
        installation: str | None = None,
        wait: float = 0.0,
        progress: Progress | None = None,
    ) -> Session:
        inst = load_installation(installation)
        # A workspace has a descriptor: without one, readers would report an empty
        # archive as "ok" and writers would start one in the wrong folder (E603).
        root = require_workspace(root)
        from evidence_tool.archive.local import LocalEvidenceArchive

        return cls(root, inst, LocalEvidenceArchive(root, wait=wait, progress=progress))

    @staticmethod
    def migrate(
        root: str | os.PathLike[str],
        installation: str | None = None,
        actor: str | None = None,
        *,
        dry_run: bool = False,
    ) -> MigrationResult:
        """``tht evidence migrate``: legacy units to v4 and the baseline, never activating.
        Not an instance method: the folder's checks are migrate's own, in its order (a Git
        worktree, then a workspace).  ``consolidate`` runs it on a legacy workspace too."""
        from evidence_tool.migrate import migrate

        who = resolve_actor(actor, load_installation(installation))
        return migrate(root, who, dry_run=dry_run)

    @staticmethod
    def create(
        directory: str | os.PathLike[str],
        workspace_id: str,
        language: str,
        *,
        name: str | None = None,
        example: bool = False,
    ) -> NewWorkspace:
        """``tht workspace new``: a workspace in ``directory`` (refused where one is, E903).
        Not an instance method: there is no workspace to open yet."""
        from evidence_tool.workspace.create import create_workspace

        return create_workspace(directory, workspace_id, language, name=name, example=example)

    @staticmethod
    def validate_files(
        paths: Sequence[str | os.PathLike[str]],
        *,
        warnings_as_errors: bool = False,
        progress: Progress | None = None,
    ) -> WorkspaceValidation:
        """``tht evidence validate PATHS``: unit files or folders, no archive needed (a
        workspace root means its curated tree); with ``warnings_as_errors`` every coded
        warning is error E190 and its file counts as invalid."""
        from evidence_tool.archive.validation import validate_paths

        return _validation(validate_paths(paths, progress), warnings_as_errors)

    @staticmethod
    def format_files(
        paths: Sequence[str | os.PathLike[str]], *, check: bool = False, diff: bool = False
    ) -> FormatReport:
        """``tht evidence fmt``: valid units rewritten canonically; with ``check`` or
        ``diff`` nothing is written (``diff`` keeps each change as a unified diff)."""
        from evidence_tool.workspace.fmt import format_paths

        return format_paths(paths, check=check, diff=diff)

    def actor(self, explicit: str | None = None) -> str:
        return resolve_actor(explicit, self.installation)

    def activation(self) -> ActivationPort | None:
        from evidence_tool.activation import backend_for

        inst = self.installation
        return backend_for(
            inst.section("activation"), self.archive.layout, inst.section("embedding")
        )

    def initialize(self, actor: str) -> ConsolidateResult:
        """Record the baseline; the configured backend readies its activation if it can
        (the sqlite index of the baseline, adopted by the first consolidate)."""
        try:
            backend = self.activation()
        except DescriptorError:
            backend = None  # init activates nothing: consolidate reports the descriptor
        prepare = backend.capabilities.prepare if backend is not None else None
        return self.archive.initialize(actor, prepare=prepare.prepare if prepare else None)

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
        from evidence_tool.archive.port import as_port

        port = as_port(activate)
        step = self.catalog_step()
        if step is not None:
            from evidence_tool.catalog.step import finish, refuse_blocked

            refuse_blocked(step)  # block: true and findings: nothing is written
        # W151 before any write, so --warnings-as-errors refuses it like the files' warnings.
        missing = self._missing_sources()
        found = [*missing, *(step.warnings if step else [])]
        result = self._consolidate_migrated(
            actor,
            port,
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
        reports = port.capabilities.warnings if port is not None and not dry_run else None
        if reports is not None:
            result.warnings += reports.warnings()  # W702: sqlite-vec installed, not loading
        return result

    def _consolidate_migrated(
        self,
        actor: str,
        port: ActivationPort | None,
        dry_run: bool,
        *,
        warnings_as_errors: bool,
        extra_warnings: list[EvidenceWarning],
        catalog: CatalogRecord | None,
    ) -> ConsolidateResult:
        """The archive's consolidate; while the workspace still holds evidence/manifest.yaml
        (legacy), the migration step runs first and the result reports it (SPEC.md 7)."""
        from evidence_tool.migrate.reading import has_legacy_manifest

        def plain() -> ConsolidateResult:
            return self.archive.consolidate(
                actor,
                port,
                dry_run,
                warnings_as_errors=warnings_as_errors,
                extra_warnings=extra_warnings,
                catalog=catalog,
            )

        if not has_legacy_manifest(self.archive.layout.root):
            return plain()
        from evidence_tool.migrate.step import migrate_first, planned, with_migration, would_migrate

        migration = migrate_first(self.archive, actor, dry_run)
        if would_migrate(migration, dry_run):
            return planned(self.archive, migration)
        try:
            result = plain()
        except EvidenceError as exc:
            # The conversion stands (it is the baseline); say so next to the validation errors.
            exc.add_result(migration=migration.to_json())
            raise
        return with_migration(result, migration)

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

    def validate(self, *, warnings_as_errors: bool = False) -> WorkspaceValidation:
        """Validate every curated unit with the workspace rules (kind/folder, unique ids),
        then run the catalog step when configured; with ``warnings_as_errors`` every coded
        warning is error E190 (and its file counts as invalid)."""
        from evidence_tool.archive.validation import validate_workspace

        files = validate_workspace(self.root, self.archive.progress)
        done = _validation(files, warnings_as_errors)
        step = self.catalog_step()  # opt-in: evidence.catalog
        if step is None:
            return done
        from evidence_tool.catalog.step import merged

        errors, warnings = merged(step, done.errors, done.warnings, warnings_as_errors)
        return dataclasses.replace(done, errors=errors, warnings=warnings, catalog=step.summary())

    def export(
        self, output: str | None = None, *, force: bool = False, fmt: str = "jsonl"
    ) -> CorpusExport:
        """The active corpus (typed units with provenance) as JSON lines: written to
        ``output`` under the output-path rule (workspace.outputs), else returned."""
        from evidence_tool.activation.reader import export_corpus, open_active_corpus

        if fmt != "jsonl":
            raise UsageError(f"export format {fmt!r} is not one of: jsonl")

        corpus = open_active_corpus(self.root)
        units = len(corpus.records)
        if output:
            written = str(export_corpus(self.root, corpus, output, force=force))
            return CorpusExport(corpus.revision, units, fmt, written, [])
        records = [r.to_json() for r in corpus.records]
        return CorpusExport(corpus.revision, units, fmt, None, records)

    def catalog_run(
        self,
        kind: str | None = None,
        ddl: tuple[str, ...] = (),
        sqlite: tuple[str, ...] = (),
        *,
        sample_values: bool = False,
        execute: bool = False,
    ) -> CatalogRun:
        """``check`` and ``catalog diff``: the units against the warehouse catalog the
        arguments name (else the installation's evidence.catalog), and its drift since
        the active snapshot's."""
        from evidence_tool.catalog.review import run_catalog
        from evidence_tool.catalog.settings import catalog_settings

        settings = catalog_settings(self.installation, kind=kind, ddl=ddl, sqlite=sqlite)
        return run_catalog(
            self.root,
            settings,
            self.archive.progress,
            sample_values=sample_values,
            execute=execute,
        )

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
        from evidence_tool.workspace.misplaced import misplaced_units
        from evidence_tool.workspace.scan import left_temp_files

        # W151, and W153 for a decision whose consolidation was never recorded.
        warnings = (*missing_warnings(self.archive), *unfinished_decisions(self.archive))
        warnings += tuple(misplaced_units(self.archive.layout))  # W108
        # Temp files a killed fmt or workspace new left (verify fails on them: E108).
        warnings += tuple(
            EvidenceWarning(d.message, d.path) for d in left_temp_files(self.archive.layout)
        )
        dense, vec_warning = dense_status(self.archive.layout.cache / INDEX_NAME)
        # The working units, so items of units deleted since the catalog run are dropped
        # (the scan is the stat-cached one diff makes; only when there are items at all).
        working = None
        if review_items(self.archive.layout):
            working = {uid: e[0] for uid, e in working_entries(self.archive)[0].items()}
        catalog = catalog_status(self.archive.layout, working)
        return WorkspaceStatus(
            queries.status(self.archive),
            catalog,
            git_state(self.archive),
            (*warnings, *catalog.warnings, *([vec_warning] if vec_warning else [])),  # W189, W702
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
            imported_from(self.archive.layout, declaration, shown.id),
        )

    # -- sources (SPEC 6): the installation's refiner and network policy -------
    def refiner(self) -> UnitsRefiner | CommandRefiner:
        from evidence_tool.sources import refiner_for

        return refiner_for(self.installation.section("refiner"), str(self.root))

    def network(self) -> NetworkPolicy:
        from evidence_tool.sources import NetworkPolicy

        return NetworkPolicy.from_settings(self.installation.section("network"))

    def refresh(
        self, actor: str, only: str | None = None, dry_run: bool = False, progress: Any = None
    ) -> RefreshResult:
        from evidence_tool.sources import refresh

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
        self,
        source_id: str,
        revision: str,
        decision: str,
        actor: str,
        allow_mass_retire: bool = False,
        exclude: tuple[str, ...] = (),
        overwrite_manual: bool = False,
    ) -> DecideResult:
        from evidence_tool.sources import decide

        baseline = None
        if not self.archive.state().initialized:
            # A workspace 'new' made has no baseline yet: the decide line refresh printed
            # works as printed (issue 28); the result says the baseline was recorded.
            baseline = self.initialize(actor).revision
        steps: list[StepOutcome] = []
        result = decide(
            self.archive,
            source_id,
            revision,
            decision,
            actor,
            self.activation(),
            allow_mass_retire=allow_mass_retire,
            exclude=exclude,
            overwrite_manual=overwrite_manual,
            catalog=self._decide_catalog(steps),
        )
        self._finish_catalog(steps, result)
        if baseline is not None:
            result = dataclasses.replace(result, initialized=baseline)
        return result

    def decide_plan(
        self,
        source_id: str,
        revision: str,
        decision: str,
        actor: str,
        allow_mass_retire: bool,
        exclude: tuple[str, ...] = (),
    ) -> DecidePlan:
        from evidence_tool.sources.decide import plan

        return plan(
            self.archive,
            source_id,
            revision,
            decision,
            actor,
            allow_mass_retire=allow_mass_retire,
            exclude=exclude,
        )

    def _decide_catalog(
        self, steps: list[StepOutcome]
    ) -> Callable[[], CatalogRecord | None] | None:
        """decide's catalog hook: the step on the files as the decision wrote them, like
        consolidate's (None when the installation configures no step)."""
        if "catalog" not in self.installation.evidence:
            return None

        def catalog() -> CatalogRecord | None:
            step = self.catalog_step()
            if step is None:
                return None
            from evidence_tool.catalog.step import refuse_blocked

            refuse_blocked(step)
            steps.append(step)
            return step.record()

        return catalog

    def _finish_catalog(self, steps: list[StepOutcome], result: DecideResult) -> None:
        """Record the step's run once the decision's lock is released, as consolidate does."""
        if not steps:
            return
        from evidence_tool.catalog.step import finish

        finish(steps[-1], self.archive)
        result.consolidation.catalog = steps[-1].summary()
        result.consolidation.warnings = [*result.consolidation.warnings, *steps[-1].warnings]

    def decide_retry(self, source_id: str, actor: str) -> DecideResult:
        from evidence_tool.sources import retry

        steps: list[StepOutcome] = []
        result = retry(
            self.archive, source_id, actor, self.activation(), self._decide_catalog(steps)
        )
        self._finish_catalog(steps, result)
        return result

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

    def diff(self, revisions: tuple[str, ...]) -> Diff:
        from evidence_tool.archive.diffing import diff

        return diff(self.archive, *revisions)

    def events(self) -> list[JsonObject]:
        return self.archive.events()

    def verify_report(
        self, *, strict: bool = False, index: bool = False, warnings_as_errors: bool = False
    ) -> WorkspaceVerification:
        """``verify``: integrity of objects, snapshots, pointers and managed files; with
        ``strict`` also the unit files, unconsolidated edits, hand-edited managed files and
        the catalog step when configured; with ``index`` the backend against the active
        snapshot (E702)."""
        if warnings_as_errors and not strict:
            # Only --strict reads the unit files, so without it there are no warnings to refuse.
            raise UsageError("--warnings-as-errors needs --strict")
        warnings: list[EvidenceWarning]
        if strict:
            from evidence_tool.gitflow import verify_strict

            rep = verify_strict(self.archive)
            problems = list(rep.problems)
            result: JsonObject = {
                "checked": {k: v for k, v in rep.checked.items()},
                "problems": len(problems),
                "notes": [*rep.notes],
            }
            warnings = [*rep.warnings, *(EvidenceWarning(note) for note in rep.notes)]
            if warnings_as_errors:
                problems, warnings = with_warnings_refused(problems, warnings)
            step = self.catalog_step()  # the opt-in catalog step (evidence.catalog)
            if step is not None:
                from evidence_tool.catalog.step import merged

                problems, warnings = merged(step, problems, warnings, warnings_as_errors)
                result["catalog"] = step.summary()
        else:
            from evidence_tool.archive.integrity import verify

            problems, counts = verify(self.archive)
            result = {"checked": {**counts}, "problems": len(problems)}
            warnings = []
        if index:
            from evidence_tool.activation.drift import index_drift

            # E702 per index entry that differs from the active snapshot
            settings = self.installation.section("activation")
            backend = self.activation() if settings.get("kind") == "qdrant" else None
            drift, facts = index_drift(self.archive, settings, backend)
            problems = problems + drift
            result["index"] = facts.to_json()
        result["problems"] = len(problems)  # its place is kept: after "checked"
        return WorkspaceVerification(result, problems, warnings)

    def git_commands(self) -> GitCommands:
        from evidence_tool.gitflow import git_commands

        return git_commands(self.archive)

    def restore(self, unit_id: str, actor: str) -> ConsolidateResult:
        from evidence_tool.archive.edits import ArchiveEditor

        return ArchiveEditor(self.archive).restore(unit_id, actor, self.activation())

    def resolve_review(self, unit_id: str, note: str, actor: str) -> ReviewResolved:
        from evidence_tool.archive.edits import ArchiveEditor

        items = ArchiveEditor(self.archive).resolve_review(unit_id, note, actor)
        return ReviewResolved(unit_id, items)

    def recover(self, abandon: bool, actor: str) -> list[Interrupted]:
        from evidence_tool.archive.edits import ArchiveEditor

        return ArchiveEditor(self.archive).recover(abandon, actor)

    def search(
        self, query: str, filters: Filters | None = None, limit: int = 10, mode: str | None = None
    ) -> SearchResult:
        from evidence_tool.activation.search import search_active
        from evidence_tool.activation.sqlite_index import Filters

        inst = self.installation
        return search_active(
            self.layout,
            inst.section("activation"),
            inst.section("embedding"),
            query,
            filters or Filters(),
            limit,
            mode,
            retrieval=self.retrieval(),
            schemas=self.search_schemas(),
        )

    def search_schemas(self) -> tuple[str, ...]:
        """The search path an unqualified table name is resolved through: the catalog's
        (``evidence.catalog.search_path``), else PostgreSQL's default."""
        given = self.installation.section("catalog").get("search_path")
        if isinstance(given, list) and all(isinstance(x, str) for x in given):
            return tuple(str(x) for x in given)
        return ("public",)

    def retrieval(self) -> JsonObject | None:
        """The workspace's adopted search settings (workspace.yaml ``retrieval``)."""
        return load_workspace_descriptor(self.root).retrieval

    def evaluate_gate(
        self,
        questions: str,
        k: int,
        modes: tuple[str, ...],
        compare: str | None,
        *,
        adopt: bool = False,
        min_recall: float | None = None,
        min_mrr: float | None = None,
        fail_on_drop: bool = False,
    ) -> tuple[JsonObject, list[Diagnostic]]:
        """Measure retrieval on a question set.  With ``adopt`` the best mode and fusion on
        these questions are written into workspace.yaml first (the figures are then those of
        the adopted settings); with a threshold or ``fail_on_drop`` it is a gate: a ``gate``
        object, and the thresholds missed (E171) or the metrics worse than on ``compare``
        (E172) as findings."""
        from evidence_tool.activation.evaluation import evaluate, gate

        gated = min_recall is not None or min_mrr is not None or fail_on_drop
        if fail_on_drop and compare is None:
            raise UsageError("--fail-on-drop compares with a revision: add --compare REV")
        inst = self.installation
        sections = {
            "activation": inst.section("activation"),
            "embedding": inst.section("embedding"),
        }
        adopted: JsonObject | None = None
        if adopt:
            from evidence_tool.activation.adopt import adopt as choose

            adopted = choose(self.archive, questions, k=k, **sections).to_json()
        done = evaluate(
            self.archive,
            questions,
            k=k,
            modes=modes,
            compare=compare,
            retrieval=self.retrieval(),
            **sections,
        )
        out = done.to_json()
        if adopted is not None:
            out["adopted"] = adopted
        if not gated:
            return out, []
        summary, found = gate(
            done, min_recall=min_recall, min_mrr=min_mrr, fail_on_drop=fail_on_drop
        )
        return {**out, "gate": summary}, found

    def citation_context(self) -> CitationContext:
        from evidence_tool.activation.citations import citation_context

        return citation_context(self.archive)

    def publish(
        self, fmt: str, output: str, *, dry_run: bool, force: bool, database: str | None
    ) -> PublishResult:
        from evidence_tool.publish import publish

        return publish(self.root, fmt, output, dry_run=dry_run, force=force, database=database)
