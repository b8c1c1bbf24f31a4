"""The --json bytes of the output views (results whose JSON is not their fields in order):
pinned as the hand-written ``to_json`` methods printed them before they became ``_keys``
views of ``evidence_tool.record`` (issue 32).  One-way: these are results, never read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evidence_tool.activation.evaluation import (
    Evaluation,
    ModeFigures,
    QuestionResult,
    QuestionVectors,
    Retired,
    Run,
    Unavailable,
)
from evidence_tool.activation.records import Hit, IndexRecord, Scoring, SearchResult
from evidence_tool.archive.diffing import Diff
from evidence_tool.archive.journal import FileChange, Interrupted, JournalEntry
from evidence_tool.archive.manifest import UnitEntry
from evidence_tool.archive.queries import (
    ArchiveStatus,
    PendingEntry,
    Serving,
    ShownDeleted,
    ShownUnit,
)
from evidence_tool.archive.records import ClosedBy, ClosedItem, Deletion, DeletionReason
from evidence_tool.archive.results import ConsolidateResult, ConsolidateStatus
from evidence_tool.archive.state import State
from evidence_tool.catalog.drift import Change, ChangeKind, Drift, DriftItem
from evidence_tool.catalog.fingerprint import Fingerprint
from evidence_tool.catalog.results import Outcome, Ran
from evidence_tool.catalog.review import CatalogStatus, CheckedStatus
from evidence_tool.errors import EvidenceWarning as W
from evidence_tool.errors import SourceError
from evidence_tool.migrate.plan import Plan, PlannedUnit
from evidence_tool.migrate.provenance import AcquiredSource
from evidence_tool.migrate.reading import ManifestUnit, Problem
from evidence_tool.migrate.run import MigrationResult, MigrationStatus
from evidence_tool.migrate.step import MigratedConsolidateResult
from evidence_tool.session import (
    CorpusExport,
    ReviewResolved,
    WorkspaceValidation,
    WorkspaceVerification,
)
from evidence_tool.sources.decide import DecideResult
from evidence_tool.sources.records import (
    Comparison,
    CurrentUnit,
    Decision,
    DecisionProgress,
    DecisionValue,
    DocumentFacts,
    Dropped,
    DropReason,
    Identifier,
    LineStatus,
    NotImportedItem,
    ProposedEntry,
    Retraction,
    ReviewItem,
    SourceKind,
    SourceRecord,
    SourceStatus,
)
from evidence_tool.sources.refresh import RefreshResult, SourceLine
from evidence_tool.sources.registry import CitingUnit, SourceDetail, SourceSummary
from evidence_tool.workspace.create import NewWorkspace

H = "ab" * 32
ENTRY = JournalEntry("save", "ann", "t", (FileChange("a.md", None, H),), {}, {"x": 1})
UNIT = UnitEntry.build(
    unit_id="evidence:a",
    path="evidence/curated/domain/a.md",
    kind="domain",
    content_hash=H,
    file_hash=H,
    provenance={"kind": "manual", "curator": "ann", "declared_at": "t"},
    review_items=[{"message": "look é"}],
)
DIFF = Diff("r1", "working files", {"added": ["evidence:b"], "deleted": []}, ["x.md"])
DELETED = Deletion("evidence:c", "t", "r0", "ann", DeletionReason.REMOVED, H, None)
CLOSED = ClosedItem("evidence:a", {"message": "m"}, ClosedBy.RESOLVED, None)
RESULT = ConsolidateResult(
    ConsolidateStatus.ACTIVATED, "r2", "r1", {"added": ["evidence:b"], "units": 3}, True
)
PLANNED = PlannedUnit(
    ManifestUnit("evidence:a", "units/a.yaml", 3, 4), None, "evidence/curated/domain/a.md", "write"
)
PLAN = Plan("convert", [PLANNED], [(AcquiredSource("sources/s.txt", b"x"), "write")], ["u"], {})
MIGRATION = MigrationResult(MigrationStatus.MIGRATED, False, PLAN, "r0", ["units/a.yaml"])

CHANGE = Change(ChangeKind.COLUMN_DROPPED, "public.t", "c")
ITEM = DriftItem("gone", "evidence/curated/a.md", 3, None, CHANGE, "t")
FP_OLD, FP_NEW = (
    Fingerprint(kind="postgres", relations={}),
    Fingerprint(kind="sqlite", relations={}),
)
DRIFT = Drift(
    FP_OLD,
    FP_NEW,
    [CHANGE, Change(ChangeKind.TYPE_CHANGED, "public.t", "d", "int", "text")],
    ["kind"],
    {"evidence:b": [0, 1], "evidence:a": [0]},
    {"evidence:a": [ITEM]},
)
COMPARISON = Comparison(
    "r" * 8,
    "t",
    "s" * 8,
    "import:imports/x",
    "c" * 8,
    "d" * 8,
    None,
    DocumentFacts("T", None),
    (CurrentUnit("evidence:a", "evidence/curated/a.md", "f" * 8, "h" * 8, {"kind": "manual"}),),
    (ProposedEntry("evidence:b", "glossary", "evidence/curated/b.md", "h" * 8, "# B\n", ("ex",)),),
    (ReviewItem("invalid-unit", "bad", None),),
    ("evidence:z",),
    (Dropped("evidence:q", DropReason.RESERVED),),
    {"evidence/curated/a.md": "f" * 8, "evidence/curated/b.md": None},
    not_imported=(NotImportedItem("model x", "a dbt model", "m.yml:3"),),
    skipped={"tests": 2},
)
RECORD = SourceRecord(
    "s" * 8,
    "fs:evidence/source/é.md",
    SourceKind.FS,
    "t0",
    SourceStatus.ACTIVE,
    "h" * 8,
    "T",
    Identifier("doi", "10.1/x"),
    "a" * 8,
    None,
    COMPARISON,
    Decision(DecisionValue.KEEP, "r" * 8, "c" * 8, "alice", "t", DecisionProgress.SAVED, ()),
    Retraction("gone", "carol", "t1"),
)
SUMMARY = SourceSummary(
    RECORD, True, (CitingUnit("evidence:a", "original", "evidence/curated/a.md"),)
)
PLAIN = SourceSummary(SourceRecord("s" * 8, "fs:x", SourceKind.FS, "t0"), False, ())
LINES = (
    SourceLine(
        "s" * 8, "import:imports/x", SourceKind.IMPORT, LineStatus.COMPARED, "c" * 8, COMPARISON
    ),
    SourceLine("t" * 8, "fs:y", SourceKind.FS, LineStatus.MISSING),
    SourceLine(
        "u" * 8,
        "import:z",
        SourceKind.IMPORT,
        LineStatus.FAILED,
        None,
        None,
        SourceError("no input", path="z"),
    ),
)

# eval's runs: a union of records without a tag, written and never read back.
GONE = Retired("evidence:g", "ann", "2026-01-01T00:00:00Z", "retired")
Q_SCORED = QuestionResult(3, "què?", (GONE,), 0.5, 1.0, 0.6131, ("evidence:x",))
Q_GONE = QuestionResult(5, "only gone", (GONE,))
Q_NOTE = QuestionResult(7, "the", (), 0.0, 0.0, 0.0, ("evidence:y",), "only stop words")
MODE = ModeFigures(mode="bm25", questions=(Q_SCORED, Q_GONE, Q_NOTE))
MODES = (
    MODE,
    ModeFigures(mode="dense", questions=(Q_GONE,)),
    Unavailable(mode="hybrid", reason="no vectors"),
)
RUN = Run("active", "abc", "sqlite", MODES)

# search's answers: the record rides in each hit by reference; the keys depend on the
# backend (qdrant names no rankings) and on the scoring (bm25, fused, point).
REC = IndexRecord(
    {
        "id": "evidence:a",
        "kind": "glossary",
        "language": "en",
        "title": "\u00c4 title",
        "path": "a.md",
        "provenance_kind": "manual",
        "metadata": {"purposes": ["answer", "filter"]},
        "payload": {"term": "x"},
    }
)
H_BM25 = Hit.of(REC, 1.0, ["title", "term"], Scoring.BM25, 3.25)
H_FUSED = Hit.of(REC, 0.5, [], Scoring.FUSED, None, 0.8123)
H_POINT = Hit.of(REC, 0.75, ("title",), Scoring.POINT, None)
FELL_BACK = (W("dense fell back", "x", None, "W301"),)

GOLDEN: dict[str, tuple[Any, str]] = {
    "eval-run": (
        RUN,
        '{"label": "active", "revision": "abc", "backend": "sqlite", "modes": [{"mode": "bm25", "available": true, "evaluated": 2, "retired_only": 1, "recall": 0.25, "mrr": 0.5, "ndcg": 0.3065, "questions": [{"line": 3, "question": "qu\\u00e8?", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}], "recall": 0.5, "rr": 1.0, "ndcg": 0.6131, "misses": ["evidence:x"]}, {"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}, {"line": 7, "question": "the", "retired": [], "recall": 0.0, "rr": 0.0, "ndcg": 0.0, "misses": ["evidence:y"], "note": "only stop words"}]}, {"mode": "dense", "available": true, "evaluated": 0, "retired_only": 1, "recall": null, "mrr": null, "ndcg": null, "questions": [{"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}]}, {"mode": "hybrid", "available": false, "reason": "no vectors"}]}',
    ),
    "eval-evaluation": (
        Evaluation(
            10,
            3,
            "questions.yaml",
            (RUN,),
        ),
        '{"k": 10, "questions": 3, "path": "questions.yaml", "runs": [{"label": "active", "revision": "abc", "backend": "sqlite", "modes": [{"mode": "bm25", "available": true, "evaluated": 2, "retired_only": 1, "recall": 0.25, "mrr": 0.5, "ndcg": 0.3065, "questions": [{"line": 3, "question": "qu\\u00e8?", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}], "recall": 0.5, "rr": 1.0, "ndcg": 0.6131, "misses": ["evidence:x"]}, {"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}, {"line": 7, "question": "the", "retired": [], "recall": 0.0, "rr": 0.0, "ndcg": 0.0, "misses": ["evidence:y"], "note": "only stop words"}]}, {"mode": "dense", "available": true, "evaluated": 0, "retired_only": 1, "recall": null, "mrr": null, "ndcg": null, "questions": [{"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}]}, {"mode": "hybrid", "available": false, "reason": "no vectors"}]}]}',
    ),
    "eval-evaluation-question-vectors": (
        Evaluation(5, 1, "q.yaml", (), QuestionVectors(2, 1)),
        '{"k": 5, "questions": 1, "path": "q.yaml", "runs": [], "question_vectors": {"embedded": 2, "cached": 1}}',
    ),
    "review-resolved": (
        ReviewResolved("evidence:a", [{"message": "look é", "raised_by": "catalog"}]),
        '{"id": "evidence:a", "resolved": [{"message": "look \\u00e9", "raised_by": "catalog"}]}',
    ),
    "interrupted": (
        Interrupted("x.json", ENTRY, ("a.md",)),
        '{"entry": "x.json", "op": "save", "actor": "ann", "at": "t", "files": [{"path": "a.md", "pre": null, "post": "abababababababababababababababababababababababababababababababab"}], "conflicts": ["a.md"]}',
    ),
    "diff": (
        DIFF,
        '{"from": "r1", "to": "working files", "added": ["evidence:b"], "deleted": [], "invalid": ["x.md"]}',
    ),
    "consolidate-result": (
        RESULT,
        '{"status": "activated", "revision": "r2", "previous": "r1", "changes": {"added": ["evidence:b"], "units": 3}, "wrote": true, "dry_run": false, "activation_error": null, "closed_review_items": []}',
    ),
    "consolidate-result-full": (
        ConsolidateResult(
            ConsolidateStatus.PENDING_ACTIVATION,
            "r2",
            None,
            {},
            True,
            False,
            "boom",
            [CLOSED],
            [W("w")],
            {"fingerprint": H},
        ),
        '{"status": "pending_activation", "revision": "r2", "previous": null, "changes": {}, "wrote": true, "dry_run": false, "activation_error": "boom", "closed_review_items": [{"id": "evidence:a", "item": {"message": "m"}, "closed_by": "resolved", "note": null}], "catalog": {"fingerprint": "abababababababababababababababababababababababababababababababab"}}',
    ),
    "consolidate-result-migrated": (
        MigratedConsolidateResult(
            ConsolidateStatus.WOULD_MIGRATE,
            None,
            None,
            {},
            False,
            True,
            migration=MIGRATION,  # type: ignore[arg-type]
        ),
        '{"status": "would_migrate", "revision": null, "previous": null, "changes": {}, "wrote": false, "dry_run": true, "activation_error": null, "closed_review_items": [], "migration": {"status": "migrated", "dry_run": false, "mode": "convert", "baseline": "r0", "units": [{"id": "evidence:a", "version": 3, "from": "units/a.yaml", "to": "evidence/curated/domain/a.md", "action": "write", "provenance": "migrating actor", "review_items": 0}], "sources": [{"from": "sources/s.txt", "to": "evidence/source/acquired/6f92fce03c981e52c8f49e17503d5f03e61eeecf1c18f0b2c9477f1c8707230a/2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881.md", "action": "write"}], "removed": ["units/a.yaml"], "counts": {"units": 1, "written": 1, "sources": 1, "removed": 1}}}',
    ),
    "migration-empty": (
        MigrationResult(MigrationStatus.NOTHING_TO_MIGRATE, True),
        '{"status": "nothing_to_migrate", "dry_run": true, "mode": null, "baseline": null, "units": [], "sources": [], "removed": [], "counts": {"units": 0, "written": 0, "sources": 0, "removed": 0}}',
    ),
    "problem": (
        Problem("units/a.yaml", "payload.x[1]", "lost", "evidence:a", 3, 4),
        '{"unit_id": "evidence:a", "field": "payload.x[1]", "reason": "lost", "path": "units/a.yaml", "line": 3}',
    ),
    "archive-status": (
        ArchiveStatus(
            True,
            State("r0", "r1", None),
            3,
            1,
            DIFF,
            {"evidence:a": [{"message": "m"}]},
            (PendingEntry("x.json", "save", "t"),),
            (W("id changed", "a.md", None, "W122"),),
            {"review_items": ["evidence:a"]},
            Serving("r1", 3, None),
        ),
        '{"initialized": true, "state": {"baseline": "r0", "active": "r1", "pending": null}, "units": 3, "deletions": 1, "unconsolidated": {"added": ["evidence:b"], "deleted": [], "invalid": ["x.md"]}, "review_items": {"evidence:a": [{"message": "m"}]}, "journal": [{"entry": "x.json", "op": "save", "at": "t"}], "id_changes": [{"code": "W122", "message": "id changed", "path": "a.md", "line": null}], "staged": {"review_items": ["evidence:a"]}, "serving": {"revision": "r1", "units": 3, "reason": null}}',
    ),
    "archive-status-empty": (
        ArchiveStatus(False, State(), 0, 0, None, {}, (), (), {}, Serving(None, 0, "why")),
        '{"initialized": false, "state": {"baseline": null, "active": null, "pending": null}, "units": 0, "deletions": 0, "unconsolidated": {}, "review_items": {}, "journal": [], "id_changes": [], "staged": {}, "serving": {"revision": null, "units": 0, "reason": "why"}}',
    ),
    "shown-unit": (
        ShownUnit("evidence:a", "# A\n", "r1", UNIT, imported_from=("f.csv:3",)),
        '{"id": "evidence:a", "path": "evidence/curated/domain/a.md", "text": "# A\\n", "deleted": null, "provenance": {"kind": "manual", "curator": "ann", "declared_at": "t"}, "review_items": [{"message": "look \\u00e9"}], "content_hash": "abababababababababababababababababababababababababababababababab", "file_hash": "abababababababababababababababababababababababababababababababab", "revision": "r1", "warnings": [], "imported_from": ["f.csv:3"]}',
    ),
    "shown-unit-deleted": (
        ShownDeleted("evidence:c", "", "r1", UNIT, deleted=DELETED, warnings=("w",)),
        '{"id": "evidence:c", "deleted": {"id": "evidence:c", "deleted_at": "t", "last_revision": "r0", "actor": "ann", "reason": "removed", "last_content_hash": "abababababababababababababababababababababababababababababababab", "source_id": null}, "text": "", "path": null, "provenance": {"kind": "manual", "curator": "ann", "declared_at": "t"}, "review_items": [], "revision": "r1", "warnings": ["w"]}',
    ),
    "shown-unit-deleted-no-entry": (
        ShownDeleted("evidence:c", "", "r1", None, deleted=DELETED),
        '{"id": "evidence:c", "deleted": {"id": "evidence:c", "deleted_at": "t", "last_revision": "r0", "actor": "ann", "reason": "removed", "last_content_hash": "abababababababababababababababababababababababababababababababab", "source_id": null}, "text": "", "path": null, "provenance": null, "review_items": [], "revision": "r1", "warnings": []}',
    ),
    "new-workspace": (
        NewWorkspace(Path("/w/x"), "ws", "Ws", "en", ["workspace.yaml", ".gitignore"]),
        '{"root": "/w/x", "id": "ws", "name": "Ws", "default_language": "en", "written": ["workspace.yaml", ".gitignore"]}',
    ),
    "workspace-validation": (
        WorkspaceValidation({"files": 2, "valid": 1}, 1, [], [], {"checked": 2}),
        '{"files": 2, "valid": 1, "catalog": {"checked": 2}}',
    ),
    "workspace-validation-no-catalog": (
        WorkspaceValidation({"files": 0}, 0, [], [], None),
        '{"files": 0}',
    ),
    "workspace-verification": (
        WorkspaceVerification({"checked": {"objects": 3}, "problems": 0}, [], []),
        '{"checked": {"objects": 3}, "problems": 0}',
    ),
    "corpus-export-written": (
        CorpusExport("r1", 2, "jsonl", "out.jsonl", []),
        '{"revision": "r1", "units": 2, "format": "jsonl", "output": "out.jsonl"}',
    ),
    "corpus-export-records": (
        CorpusExport(None, 1, "jsonl", None, [{"id": "evidence:a"}]),
        '{"revision": null, "units": 1, "format": "jsonl", "records": [{"id": "evidence:a"}]}',
    ),
    "corpus-export-empty": (  # an empty corpus still has its (empty) records
        CorpusExport("r1", 0, "jsonl", None, []),
        '{"revision": "r1", "units": 0, "format": "jsonl", "records": []}',
    ),
    # session 5: the catalog and sources views, printed before they became ``_keys``
    "ran": (
        Ran("evidence:a", "a.md", 3, "select 1", Outcome(2, "f" * 8)),
        '{"unit_id": "evidence:a", "path": "a.md", "line": 3, "rows": 2, "fingerprint": "ffffffff", "error": null}',
    ),
    "ran-failed": (
        Ran("evidence:a", "a.md", 4, "select x", Outcome(None, None, "no column x")),
        '{"unit_id": "evidence:a", "path": "a.md", "line": 4, "rows": null, "fingerprint": null, "error": "no column x"}',
    ),
    "drift": (
        DRIFT,
        '{"recorded": "e31b5b79aa5e28fb2373285b7f9bc168c7aee8a72a39bd190a830058229a4655", "current": "907e9876b09a44ffaa96cc906e6ff8a3bb6d0b9b0b5f6241a8203c1108a14328", "settings": ["kind"], "changes": [{"change": "column_dropped", "relation": "public.t", "column": "c", "units": ["evidence:a", "evidence:b"]}, {"change": "type_changed", "relation": "public.t", "column": "d", "old": "int", "new": "text", "units": ["evidence:b"]}], "review_items": {"evidence:a": [{"code": "E191", "message": "gone", "path": "evidence/curated/a.md", "line": 3, "column": null, "change": {"change": "column_dropped", "relation": "public.t", "column": "c"}, "raised_by": "catalog", "raised_at": "t"}]}}',
    ),
    "drift-item": (
        ITEM,
        '{"code": "E191", "message": "gone", "path": "evidence/curated/a.md", "line": 3, "column": null, "change": {"change": "column_dropped", "relation": "public.t", "column": "c"}, "raised_by": "catalog", "raised_at": "t"}',
    ),
    "catalog-status-unchecked": (
        CatalogStatus(False, {"evidence:a": [{"code": "E191"}]}),
        '{"checked": false, "review_items": {"evidence:a": [{"code": "E191"}]}}',
    ),
    "catalog-status": (
        CheckedStatus(
            True,
            {"evidence:a": [{"code": "E191"}]},
            "t",
            "f" * 8,
            None,
            "n",
            2,
            ("evidence:x",),
            (),
        ),
        '{"checked": true, "checked_at": "t", "fingerprint": "ffffffff", "base": null, "note": "n", "changes": 2, "review_items": {"evidence:a": [{"code": "E191"}]}, "deleted_since": ["evidence:x"], "edited_since": []}',
    ),
    "source-line-compared": (
        LINES[0],
        '{"source_id": "ssssssss", "locator": "import:imports/x", "kind": "import", "content_hash": "cccccccc", "status": "compared", "revision": "rrrrrrrr", "proposed": ["evidence:b"], "retire": ["evidence:z"], "dropped": [{"id": "evidence:q", "reason": "reserved by a deletion record"}], "review_items": 1, "changes": {"added": 1, "changed": 0, "identical": 0, "retired": 1}, "not_imported": 1, "skipped": {"tests": 2}}',
    ),
    "source-line-missing": (
        LINES[1],
        '{"source_id": "tttttttt", "locator": "fs:y", "kind": "fs", "status": "missing"}',
    ),
    "source-line-failed": (
        LINES[2],
        '{"source_id": "uuuuuuuu", "locator": "import:z", "kind": "import", "status": "failed", "error": {"code": "E501", "message": "no input", "path": "z", "line": null, "column": null, "unit_id": null, "hint": "Check what the message names (an import\'s path, a locator, the network policy or credentials of a remote source), then refresh again."}}',
    ),
    "refresh-result": (
        RefreshResult(False, True, LINES[1:]),
        '{"dry_run": false, "wrote": true, "sources": [{"source_id": "tttttttt", "locator": "fs:y", "kind": "fs", "status": "missing"}, {"source_id": "uuuuuuuu", "locator": "import:z", "kind": "import", "status": "failed", "error": {"code": "E501", "message": "no input", "path": "z", "line": null, "column": null, "unit_id": null, "hint": "Check what the message names (an import\'s path, a locator, the network policy or credentials of a remote source), then refresh again."}}]}',
    ),
    "decide-result": (
        DecideResult(
            "s" * 8,
            DecisionValue.REPLACE,
            "r" * 8,
            RESULT,
            ("a.md",),
            (),
            ("evidence:z",),
            True,
            False,
            (),
            ("b.md",),
            "r0",
        ),
        '{"source_id": "ssssssss", "decision": "replace", "revision": "rrrrrrrr", "written": ["a.md"], "removed": [], "retired": ["evidence:z"], "excluded": [], "overwrote_manual": ["b.md"], "already_saved": true, "initialized": "r0", "consolidation": {"status": "activated", "revision": "r2", "previous": "r1", "changes": {"added": ["evidence:b"], "units": 3}, "wrote": true, "dry_run": false, "activation_error": null, "closed_review_items": []}}',
    ),
    "decide-result-retry": (
        DecideResult("s" * 8, DecisionValue.KEEP, "r" * 8, RESULT, retry=True),
        '{"source_id": "ssssssss", "decision": "keep", "revision": "rrrrrrrr", "retry": true, "consolidation": {"status": "activated", "revision": "r2", "previous": "r1", "changes": {"added": ["evidence:b"], "units": 3}, "wrote": true, "dry_run": false, "activation_error": null, "closed_review_items": []}}',
    ),
    "source-summary": (
        SUMMARY,
        '{"source_id": "ssssssss", "locator": "fs:evidence/source/\\u00e9.md", "kind": "fs", "status": "retracted", "title": "T", "identifier": {"type": "doi", "value": "10.1/x"}, "adopted_hash": "aaaaaaaa", "acknowledged_hash": null, "pending_comparison": "rrrrrrrr", "suppressed": true, "retraction": {"actor": "carol", "at": "t1", "note": "gone"}, "decision": {"actor": "alice", "at": "t", "content_hash": "cccccccc", "decision": "keep", "retired": [], "revision": "rrrrrrrr", "status": "saved"}, "citing_units": [{"id": "evidence:a", "as": "original", "path": "evidence/curated/a.md"}]}',
    ),
    "source-summary-plain": (
        PLAIN,
        '{"source_id": "ssssssss", "locator": "fs:x", "kind": "fs", "status": "active", "title": null, "identifier": null, "adopted_hash": null, "acknowledged_hash": null, "pending_comparison": null, "suppressed": false, "retraction": null, "decision": null, "citing_units": []}',
    ),
    "source-detail": (
        SourceDetail(SUMMARY, COMPARISON),
        '{"source_id": "ssssssss", "locator": "fs:evidence/source/\\u00e9.md", "kind": "fs", "status": "retracted", "title": "T", "identifier": {"type": "doi", "value": "10.1/x"}, "adopted_hash": "aaaaaaaa", "acknowledged_hash": null, "pending_comparison": "rrrrrrrr", "suppressed": true, "retraction": {"actor": "carol", "at": "t1", "note": "gone"}, "decision": {"actor": "alice", "at": "t", "content_hash": "cccccccc", "decision": "keep", "retired": [], "revision": "rrrrrrrr", "status": "saved"}, "citing_units": [{"id": "evidence:a", "as": "original", "path": "evidence/curated/a.md"}], "comparison": {"acquisition": "dddddddd", "affected_files": {"evidence/curated/a.md": "ffffffff", "evidence/curated/b.md": null}, "base_hash": null, "content_hash": "cccccccc", "created_at": "t", "current": [{"content_hash": "hhhhhhhh", "file_hash": "ffffffff", "id": "evidence:a", "path": "evidence/curated/a.md", "provenance": {"kind": "manual"}}], "document": {"identifier": null, "title": "T"}, "dropped": [{"id": "evidence:q", "reason": "reserved by a deletion record"}], "locator": "import:imports/x", "not_imported": [{"at": "m.yml:3", "element": "model x", "what": "a dbt model"}], "proposed": [{"content_hash": "hhhhhhhh", "excerpts": ["ex"], "id": "evidence:b", "kind": "glossary", "markdown": "# B\\n", "path": "evidence/curated/b.md"}], "retire": ["evidence:z"], "review_items": [{"code": "invalid-unit", "message": "bad", "unit_id": null}], "revision": "rrrrrrrr", "skipped": {"tests": 2}, "source_id": "ssssssss"}, "changes": {"added": ["evidence:b"], "changed": [], "identical": [], "retired": ["evidence:z"], "manual": []}, "warnings": ["source fs:evidence/source/\\u00e9.md was retracted on t1 by carol: gone"]}',
    ),
    "source-detail-plain": (
        SourceDetail(PLAIN, None),
        '{"source_id": "ssssssss", "locator": "fs:x", "kind": "fs", "status": "active", "title": null, "identifier": null, "adopted_hash": null, "acknowledged_hash": null, "pending_comparison": null, "suppressed": false, "retraction": null, "decision": null, "citing_units": [], "comparison": null, "changes": null, "warnings": []}',
    ),
    "search-sqlite": (
        SearchResult(
            "rev1",
            "qu\u00e9 rate",
            "hybrid",
            (H_BM25, H_FUSED),
            ("bm25", "dense"),
            "memory",
            FELL_BACK,
        ),
        '{"revision": "rev1", "query": "qu\\u00e9 rate", "mode": "hybrid", "rankings": ["bm25", "dense"], "dense_path": "memory", "hits": [{"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "score": 1.0, "bm25": 3.25, "matched": ["title", "term"], "path": "a.md", "provenance": "manual", "purposes": ["answer", "filter"], "record": {"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "path": "a.md", "provenance_kind": "manual", "metadata": {"purposes": ["answer", "filter"]}, "payload": {"term": "x"}}}, {"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "score": 0.5, "bm25": null, "matched": [], "path": "a.md", "provenance": "manual", "purposes": ["answer", "filter"], "record": {"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "path": "a.md", "provenance_kind": "manual", "metadata": {"purposes": ["answer", "filter"]}, "payload": {"term": "x"}}, "dense": 0.8123}], "warnings": [{"code": "W301", "message": "dense fell back", "path": "x", "line": null}]}',
    ),
    "search-sqlite-no-dense": (
        SearchResult("rev1", "q", "bm25", (H_BM25,), ("bm25",)),
        '{"revision": "rev1", "query": "q", "mode": "bm25", "rankings": ["bm25"], "dense_path": null, "hits": [{"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "score": 1.0, "bm25": 3.25, "matched": ["title", "term"], "path": "a.md", "provenance": "manual", "purposes": ["answer", "filter"], "record": {"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "path": "a.md", "provenance_kind": "manual", "metadata": {"purposes": ["answer", "filter"]}, "payload": {"term": "x"}}}], "warnings": []}',
    ),
    "search-qdrant": (
        SearchResult("rev2", "q", "dense", (H_POINT,)),
        '{"revision": "rev2", "query": "q", "mode": "dense", "hits": [{"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "score": 0.75, "matched": ["title"], "path": "a.md", "provenance": "manual", "purposes": ["answer", "filter"], "record": {"id": "evidence:a", "kind": "glossary", "language": "en", "title": "\\u00c4 title", "path": "a.md", "provenance_kind": "manual", "metadata": {"purposes": ["answer", "filter"]}, "payload": {"term": "x"}}}]}',
    ),
    "search-empty": (
        SearchResult("rev3", "", "bm25", (), ()),
        '{"revision": "rev3", "query": "", "mode": "bm25", "rankings": [], "dense_path": null, "hits": [], "warnings": []}',
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_view_writes_its_golden_json(name: str) -> None:
    view, golden = GOLDEN[name]
    assert json.dumps(view.to_json()) == golden


def test_the_views_sweep_every_case() -> None:
    assert len(GOLDEN) == 43


def _subclasses(kind: type) -> list[type]:
    out = []
    for sub in kind.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_every_views_keys_name_an_attribute_of_its_class() -> None:
    """A misspelled ``_keys`` entry fails here, not in the one run that writes that view."""
    import importlib

    from evidence_tool.jsonvalue import View

    for module in ("evidence_tool.session", "evidence_tool.migrate.step"):
        importlib.import_module(module)
    checked = 0
    for cls in _subclasses(View):
        for entry in cls.__dict__.get("_keys", ()):
            attr = (entry.partition("=")[2] or entry.strip("*?")).split(".")[0]
            names = set(dir(cls)) | set(getattr(cls, "__dataclass_fields__", ()))
            assert attr in names, (cls.__name__, entry)
            checked += 1
    assert checked >= 60
