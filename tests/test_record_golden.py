"""Golden JSON of the typed records: the bytes each ``to_json`` wrote before the records
moved onto one serializer (evidence_tool/record.py), and the record each reads back.

The expected strings were printed by the hand-written ``to_json`` methods they replace;
a record whose keys change order, or that writes ``null`` where it left a key out (or
the other way round), fails here before any golden file of a workspace does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evidence_tool.activation.adopt import Adoption, Figures
from evidence_tool.activation.citations import CitationCheck, CitationFlag, Flag
from evidence_tool.activation.drift import IndexDrift
from evidence_tool.activation.evaluation import (
    ModeFigures,
    QuestionResult,
    Retired,
    Unavailable,
)
from evidence_tool.activation.fusion import Fusion
from evidence_tool.activation.vec import DenseStatus
from evidence_tool.archive.local import ConsolidateStatus
from evidence_tool.archive.manifest import SourceBlob
from evidence_tool.archive.queries import PendingEntry, Serving
from evidence_tool.archive.records import (
    ClosedBy,
    ClosedItem,
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
    declaration_from_json,
)
from evidence_tool.catalog.check import TypeResult
from evidence_tool.catalog.drift import Change, ChangeKind, DriftItem
from evidence_tool.catalog.fingerprint import RelationPrint
from evidence_tool.catalog.review import CheckedUnit
from evidence_tool.errors import EvidenceWarning as W
from evidence_tool.gitflow.records import GitCommands, GitFile, GitState, PartialStage
from evidence_tool.gitflow.roles import Role
from evidence_tool.migrate.provenance import CarriedDeclaration, CarriedItem
from evidence_tool.publish.model import NotExported
from evidence_tool.publish.write import Changes, PublishResult
from evidence_tool.report.collect import ComparisonRef, WrittenReport
from evidence_tool.sources.decide import DecidePlan, Staged
from evidence_tool.sources.import_add import AddResult
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
    NotImportedItem,
    ProposalChanges,
    ProposedEntry,
    Retraction,
    ReviewItem,
    SourceKind,
    SourceRecord,
    SourceStatus,
)
from evidence_tool.sources.refiner import (
    RefinerRequest,
    RefinerResponse,
    RequestUnit,
    ResponseItem,
    ResponseUnit,
)
from evidence_tool.sources.registry import CitingUnit, RetractResult

CURATED, OTHER = Role("curated"), Role("other")
MANUAL = {"kind": "manual", "by": "x"}
w1, w2, w3 = W("m é", "p", 3, "W801"), W("note"), W("col", "q", 1, "W804", 7)

GONE = Retired("evidence:g", "ann", "2026-01-01T00:00:00Z", "retired")
Q_SCORED = QuestionResult(3, "què?", (GONE,), 0.5, 1.0, 0.6131, ("evidence:x",))
Q_GONE = QuestionResult(5, "only gone", (GONE,))
Q_NOTE = QuestionResult(7, "the", (), 0.0, 0.0, 0.0, ("evidence:y",), "only stop words")
MODE = ModeFigures(mode="bm25", questions=(Q_SCORED, Q_GONE, Q_NOTE))

HYBRID = {"mode": "hybrid", "fusion": {"method": "rrf", "weight": 0.7}}

GOLDEN: dict[str, tuple[Any, str]] = {
    "git-file-untracked": (
        GitFile("a/b.md", CURATED),
        '{"path": "a/b.md", "role": "curated"}',
    ),
    "git-file-changed": (
        GitFile("a/é.md", OTHER, "M"),
        '{"path": "a/\\u00e9.md", "role": "other", "change": "M"}',
    ),
    "partial-stage": (
        PartialStage(("x", "y"), ()),
        '{"not_staged": ["x", "y"], "not_consolidated": []}',
    ),
    "git-state-unavailable": (
        GitState.unavailable("no git"),
        '{"available": false, "note": "no git", "repository": null, "workspace_path": null, "branch": null, "head": null, "staged": [], "modified": [], "untracked": [], "conflicted": [], "ignored": [], "partial_stage": null, "clean": null, "warnings": []}',
    ),
    "git-state-full": (
        GitState(
            True,
            None,
            "/r",
            "ws",
            "main",
            "abc",
            (GitFile("s", CURATED, "A"),),
            (GitFile("m", CURATED, "M"),),
            (GitFile("u", OTHER),),
            ("c",),
            ("i",),
            PartialStage(("n",), ("k",)),
            False,
            (w1, w2, w3),
        ),
        '{"available": true, "note": null, "repository": "/r", "workspace_path": "ws", "branch": "main", "head": "abc", "staged": [{"path": "s", "role": "curated", "change": "A"}], "modified": [{"path": "m", "role": "curated", "change": "M"}], "untracked": [{"path": "u", "role": "other"}], "conflicted": ["c"], "ignored": ["i"], "partial_stage": {"not_staged": ["n"], "not_consolidated": ["k"]}, "clean": false, "warnings": [{"code": "W801", "message": "m \\u00e9", "path": "p", "line": 3}, {"code": null, "message": "note", "path": null, "line": null}, {"code": "W804", "message": "col", "path": "q", "line": 1, "column": 7}]}',
    ),
    "git-commands": (
        GitCommands("/r", ("a", "b c"), None, "rev", "msg", ("s1",), ("git add a",), (w1,)),
        '{"repository": "/r", "paths": ["a", "b c"], "revision": null, "pending": "rev", "message": "msg", "steps": ["s1"], "commands": ["git add a"], "warnings": [{"code": "W801", "message": "m \\u00e9", "path": "p", "line": 3}]}',
    ),
    "document-declaration": (
        DocumentDeclaration("s" * 4, "source/a.md", "h" * 4, ("one", "twö")),
        '{"kind": "document", "source_id": "ssss", "source_path": "source/a.md", "source_hash": "hhhh", "excerpts": ["one", "tw\\u00f6"]}',
    ),
    "document-declaration-migrated": (
        DocumentDeclaration("s", "p", "h", (), "2024-01-01T00:00:00Z", "ann"),
        '{"kind": "document", "source_id": "s", "source_path": "p", "source_hash": "h", "excerpts": [], "declared_at": "2024-01-01T00:00:00Z", "actor": "ann"}',
    ),
    "manual-declaration": (
        ManualDeclaration("ann", "2024-01-01T00:00:00Z"),
        '{"kind": "manual", "curator": "ann", "declared_at": "2024-01-01T00:00:00Z"}',
    ),
    "manual-declaration-original": (
        ManualDeclaration(
            "ann", "2024-01-01T00:00:00Z", DocumentDeclaration("s", "p", "h", ("e",))
        ),
        '{"kind": "manual", "curator": "ann", "declared_at": "2024-01-01T00:00:00Z", "original": {"kind": "document", "source_id": "s", "source_path": "p", "source_hash": "h", "excerpts": ["e"]}}',
    ),
    "deletion": (
        Deletion("evidence:a", "2024", "r", "bob", DeletionReason.RETIRED, "c", None),
        '{"id": "evidence:a", "deleted_at": "2024", "last_revision": "r", "actor": "bob", "reason": "retired-by-replace", "last_content_hash": "c", "source_id": null}',
    ),
    "deletion-sourced": (
        Deletion("evidence:a", "2024", "r", "bob", DeletionReason.REMOVED, "c", "src"),
        '{"id": "evidence:a", "deleted_at": "2024", "last_revision": "r", "actor": "bob", "reason": "removed", "last_content_hash": "c", "source_id": "src"}',
    ),
    "closed-retired": (
        ClosedItem("evidence:a", {"k": [1, None]}, ClosedBy.RETIREMENT),
        '{"id": "evidence:a", "item": {"k": [1, null]}, "closed_by": "retirement"}',
    ),
    "closed-resolved": (
        ClosedItem("evidence:a", {"k": "v"}, ClosedBy.RESOLVED, "done"),
        '{"id": "evidence:a", "item": {"k": "v"}, "closed_by": "resolved", "note": "done"}',
    ),
    "closed-resolved-no-note": (
        ClosedItem("evidence:a", {}, ClosedBy.RESOLVED),
        '{"id": "evidence:a", "item": {}, "closed_by": "resolved", "note": null}',
    ),
    "catalog-change-dropped": (
        Change(ChangeKind.RELATION_DROPPED, "lab.results"),
        '{"change": "relation_dropped", "relation": "lab.results"}',
    ),
    "catalog-change-type": (
        Change(ChangeKind.TYPE_CHANGED, "lab.results", "välue", "integer", "numeric"),
        '{"change": "type_changed", "relation": "lab.results", "column": "v\\u00e4lue", "old": "integer", "new": "numeric"}',
    ),
    "catalog-change-renamed": (
        Change(ChangeKind.COLUMN_RENAMED, "lab.r", "a", None, None, "b"),
        '{"change": "column_renamed", "relation": "lab.r", "column": "a", "renamed_to": "b"}',
    ),
    "catalog-drift-item": (
        DriftItem(
            "dropped",
            "evidence/curated/a.md",
            3,
            None,
            Change(ChangeKind.COLUMN_DROPPED, "lab.r", "x"),
            "2026-01-01T00:00:00Z",
        ),
        '{"code": "E191", "message": "dropped", "path": "evidence/curated/a.md", "line": 3, "column": null, "change": {"change": "column_dropped", "relation": "lab.r", "column": "x"}, "raised_by": "catalog", "raised_at": "2026-01-01T00:00:00Z"}',
    ),
    "catalog-checked-unit": (
        CheckedUnit("evidence/curated/a.md", None, ("E191", "W801")),
        '{"path": "evidence/curated/a.md", "content_hash": null, "codes": ["E191", "W801"]}',
    ),
    "sources-review-item": (
        ReviewItem("excerpt-not-found", "the excerpt is gone", "evidence:a"),
        '{"code": "excerpt-not-found", "message": "the excerpt is gone", "unit_id": "evidence:a"}',
    ),
    "sources-not-imported": (
        NotImportedItem("model x", "a dbt model", "models/x.yml:3"),
        '{"element": "model x", "what": "a dbt model", "at": "models/x.yml:3"}',
    ),
    "sources-not-imported-incomplete": (
        NotImportedItem(
            "enum y", "values without meanings", None, "incomplete-enum", None, "write the meanings"
        ),
        '{"element": "enum y", "what": "values without meanings", "at": null, "reason": "incomplete-enum", "unit_id": null, "fix": "write the meanings"}',
    ),
    "sources-document-facts": (
        DocumentFacts("Lab handbook", Identifier("doi", "10.1/x")),
        '{"title": "Lab handbook", "identifier": {"type": "doi", "value": "10.1/x"}}',
    ),
    "sources-document-facts-empty": (
        DocumentFacts(),
        '{"title": null, "identifier": null}',
    ),
    "sources-current-unit": (
        CurrentUnit(
            "evidence:a", "evidence/curated/a.md", "f", "c", {"kind": "manual", "curator": "ann"}
        ),
        '{"id": "evidence:a", "path": "evidence/curated/a.md", "file_hash": "f", "content_hash": "c", "provenance": {"kind": "manual", "curator": "ann"}}',
    ),
    "sources-proposed-entry": (
        ProposedEntry("evidence:a", "glossary", "evidence/curated/a.md", "c", "# A\n", ("x", "ÿ")),
        '{"id": "evidence:a", "kind": "glossary", "path": "evidence/curated/a.md", "content_hash": "c", "markdown": "# A\\n", "excerpts": ["x", "\\u00ff"]}',
    ),
    "sources-dropped": (
        Dropped("evidence:a", DropReason.RESERVED),
        '{"id": "evidence:a", "reason": "reserved by a deletion record"}',
    ),
    "sources-retraction": (
        Retraction("gone", "ann", "2026-01-01T00:00:00Z"),
        '{"note": "gone", "actor": "ann", "at": "2026-01-01T00:00:00Z"}',
    ),
    "sources-proposal-changes": (
        ProposalChanges(("a",), (), ("b",), ("c",), ()),
        '{"added": ["a"], "changed": [], "identical": ["b"], "retired": ["c"], "manual": []}',
    ),
    "citation-flag": (
        CitationFlag("evidence:a", Flag.RETIRED),
        '{"id": "evidence:a", "flag": "retired"}',
    ),
    "citation-flag-retracted": (
        CitationFlag("evidence:b", Flag.SOURCE_RETRACTED, "s" * 8),
        '{"id": "evidence:b", "flag": "source-retracted", "source_id": "ssssssss"}',
    ),
    "citation-check": (
        CitationCheck(
            "r",
            ("evidence:a",),
            ("evidence:x",),
            (),
            ("evidence:u",),
            (CitationFlag("evidence:x", Flag.UNKNOWN),),
        ),
        '{"revision": "r", "grounded": ["evidence:a"], "ungrounded": ["evidence:x"], "inactive": [], "unused": ["evidence:u"], "flags": [{"id": "evidence:x", "flag": "unknown"}], "ok": false}',
    ),
    "citation-check-no-revision": (
        CitationCheck(None, ("evidence:a",), (), (), (), ()),
        '{"revision": null, "grounded": ["evidence:a"], "ungrounded": [], "inactive": [], "unused": [], "flags": [], "ok": true}',
    ),
    "carried-declaration": (
        CarriedDeclaration("c" * 8, {"kind": "manual", "curator": "ann", "declared_at": "t"}),
        '{"content_hash": "cccccccc", "provenance": {"kind": "manual", "curator": "ann", "declared_at": "t"}}',
    ),
    "carried-item": (
        CarriedItem("E140", "look at ü", "legacy", "2025-01-01T00:00:00Z", "c" * 8),
        '{"code": "E140", "message": "look at \\u00fc", "raised_by": "legacy", "raised_at": "2025-01-01T00:00:00Z", "content_hash": "cccccccc"}',
    ),
    "pending-entry": (
        PendingEntry("0001-save.json", "save", "2026-01-01T00:00:00Z"),
        '{"entry": "0001-save.json", "op": "save", "at": "2026-01-01T00:00:00Z"}',
    ),
    "serving-active": (
        Serving("r" * 8, 12, None),
        '{"revision": "rrrrrrrr", "units": 12, "reason": null}',
    ),
    "serving-nothing": (
        Serving(None, 0, "run consolidate"),
        '{"revision": null, "units": 0, "reason": "run consolidate"}',
    ),
    "index-drift-unchecked": (
        IndexDrift("qdrant", None, False, note="keeps no index"),
        '{"backend": "qdrant", "active": null, "checked": false, "note": "keeps no index"}',
    ),
    "index-drift-checked": (
        IndexDrift("sqlite", "r" * 8, True, 3, 0, 1, "index file missing"),
        '{"backend": "sqlite", "active": "rrrrrrrr", "checked": true, "expected": 3, "held": 0, "drift": 1, "note": "index file missing"}',
    ),
    "index-drift-clean": (
        IndexDrift("sqlite", "r" * 8, True, 3, 3, 0),
        '{"backend": "sqlite", "active": "rrrrrrrr", "checked": true, "expected": 3, "held": 3, "drift": 0}',
    ),
    "adopt-figures": (
        Figures(0.5, 0.25, 1.0),
        '{"recall": 0.5, "mrr": 0.25, "ndcg": 1.0}',
    ),
    "eval-retired": (
        Retired("evidence:a", None, None, None),
        '{"id": "evidence:a", "actor": null, "deleted_at": null, "reason": null}',
    ),
    "eval-retired-full": (
        Retired("evidence:a", "ann", "2026", "removed"),
        '{"id": "evidence:a", "actor": "ann", "deleted_at": "2026", "reason": "removed"}',
    ),
    "publish-not-exported": (
        NotExported("evidence:a", "no SQL in a glossary"),
        '{"unit_id": "evidence:a", "reason": "no SQL in a glossary"}',
    ),
    "refiner-request": (
        RefinerRequest(
            "s" * 8,
            "fs:evidence/source/a.md",
            "fs",
            "c" * 8,
            "it",
            "testo è",
            DocumentFacts("T", Identifier("doi", "10.1/x")),
            (RequestUnit("evidence:a", "evidence/curated/a.md", "# A\n"),),
        ),
        '{"protocol": 1, "source_id": "ssssssss", "locator": "fs:evidence/source/a.md", "kind": "fs", "content_hash": "cccccccc", "language": "it", "text": "testo \\u00e8", "document": {"title": "T", "identifier": {"type": "doi", "value": "10.1/x"}}, "current_units": [{"id": "evidence:a", "path": "evidence/curated/a.md", "markdown": "# A\\n"}]}',
    ),
    "refiner-request-import": (
        RefinerRequest("s", "import:vanna:x", "import", "c", "en", "", DocumentFacts()),
        '{"protocol": 1, "source_id": "s", "locator": "import:vanna:x", "kind": "import", "content_hash": "c", "language": "en", "text": "", "document": {"title": null, "identifier": null}, "current_units": []}',
    ),
    "publish-changes": (
        Changes(("a/é.md",), ("b",), (), 2, 5),
        '{"added": ["a/\\u00e9.md"], "changed": ["b"], "removed": [], "restamped": 2, "unchanged": 5}',
    ),
    "publish-changes-none": (
        Changes(),
        '{"added": [], "changed": [], "removed": [], "restamped": 0, "unchanged": 0}',
    ),
    "publish-result": (
        PublishResult(
            "jsonl",
            "r" * 8,
            "out/x.jsonl",
            True,
            3,
            Changes(("a/é.md",), ("b",), (), 2, 5),
            Changes(("evidence:a",)),
            (NotExported("evidence:b", "no SQL"),),
        ),
        '{"format": "jsonl", "revision": "rrrrrrrr", "output": "out/x.jsonl", "dry_run": true, "units": 3, "files": {"added": ["a/\\u00e9.md"], "changed": ["b"], "removed": [], "restamped": 2, "unchanged": 5}, "entries": {"added": ["evidence:a"], "changed": [], "removed": [], "restamped": 0, "unchanged": 0}, "not_exported": [{"unit_id": "evidence:b", "reason": "no SQL"}]}',
    ),
    "publish-result-tree": (
        PublishResult("dbt", "r" * 8, "out", False, 0, Changes(), None, ()),
        '{"format": "dbt", "revision": "rrrrrrrr", "output": "out", "dry_run": false, "units": 0, "files": {"added": [], "changed": [], "removed": [], "restamped": 0, "unchanged": 0}, "entries": null, "not_exported": []}',
    ),
    "catalog-type-result": (
        TypeResult("evidence:a", "evidence/curated/a.md", "numeric"),
        '{"unit_id": "evidence:a", "path": "evidence/curated/a.md", "type": "numeric"}',
    ),
    "catalog-type-result-refused": (
        TypeResult("evidence:a", "a.md", None),
        '{"unit_id": "evidence:a", "path": "a.md", "type": null}',
    ),
    "report-written-opened": (
        WrittenReport(
            "/ws/é.html", 10, 2, 0, (ComparisonRef("s" * 8, "r" * 8),), True, "a" * 8, None, True
        ),
        '{"path": "/ws/\\u00e9.html", "bytes": 10, "units": 2, "file_errors": 0, "comparisons": [{"source_id": "ssssssss", "revision": "rrrrrrrr"}], "initialized": true, "active": "aaaaaaaa", "pending": null, "opened": true}',
    ),
    "report-written": (
        WrittenReport("/ws/p.html", 10, 2, 1, (), False, None, None),
        '{"path": "/ws/p.html", "bytes": 10, "units": 2, "file_errors": 1, "comparisons": [], "initialized": false, "active": null, "pending": null}',
    ),
    # issue 32 part 2, round 2: the registry's records and the views that became records
    "comparison-import": (
        Comparison(
            "r" * 8,
            "2026-01-01T00:00:00Z",
            "s" * 8,
            "fs:evidence/source/é.md",
            "c" * 8,
            "d" * 8,
            None,
            DocumentFacts("T", None),
            (CurrentUnit("evidence:a", "evidence/curated/a.md", "f" * 8, "h" * 8, MANUAL),),
            (
                ProposedEntry(
                    "evidence:b", "glossary", "evidence/curated/b.md", "h" * 8, "# B\n", ("ex",)
                ),
            ),
            (ReviewItem("invalid-unit", "bad", None),),
            ("evidence:z",),
            (Dropped("evidence:q", DropReason.RESERVED),),
            {"evidence/curated/a.md": "f" * 8, "evidence/curated/b.md": None},
            not_imported=(
                NotImportedItem("model x", "a dbt model", "m.yml:3"),
                NotImportedItem(
                    "enum y", "values", None, "incomplete-enum", "evidence:y", "fix it"
                ),
            ),
            skipped={"tests": 2},
        ),
        '{"revision": "rrrrrrrr", "created_at": "2026-01-01T00:00:00Z", "source_id": "ssssssss", "locator": "fs:evidence/source/\\u00e9.md", "content_hash": "cccccccc", "acquisition": "dddddddd", "base_hash": null, "document": {"title": "T", "identifier": null}, "current": [{"id": "evidence:a", "path": "evidence/curated/a.md", "file_hash": "ffffffff", "content_hash": "hhhhhhhh", "provenance": {"kind": "manual", "by": "x"}}], "proposed": [{"id": "evidence:b", "kind": "glossary", "path": "evidence/curated/b.md", "content_hash": "hhhhhhhh", "markdown": "# B\\n", "excerpts": ["ex"]}], "review_items": [{"code": "invalid-unit", "message": "bad", "unit_id": null}], "retire": ["evidence:z"], "dropped": [{"id": "evidence:q", "reason": "reserved by a deletion record"}], "affected_files": {"evidence/curated/a.md": "ffffffff", "evidence/curated/b.md": null}, "not_imported": [{"element": "model x", "what": "a dbt model", "at": "m.yml:3"}, {"element": "enum y", "what": "values", "at": null, "reason": "incomplete-enum", "unit_id": "evidence:y", "fix": "fix it"}], "skipped": {"tests": 2}}',
    ),
    "comparison-document": (
        Comparison(
            "r" * 8,
            "t",
            "s" * 8,
            "fs:x",
            "c" * 8,
            "d" * 8,
            "b" * 8,
            DocumentFacts(),
            (),
            (),
            (),
            (),
            (),
            {},
        ),
        '{"revision": "rrrrrrrr", "created_at": "t", "source_id": "ssssssss", "locator": "fs:x", "content_hash": "cccccccc", "acquisition": "dddddddd", "base_hash": "bbbbbbbb", "document": {"title": null, "identifier": null}, "current": [], "proposed": [], "review_items": [], "retire": [], "dropped": [], "affected_files": {}}',
    ),
    "decision-saved": (
        Decision(DecisionValue.KEEP, "r" * 8, "c" * 8, "alice", "t", DecisionProgress.SAVED, ()),
        '{"decision": "keep", "revision": "rrrrrrrr", "content_hash": "cccccccc", "actor": "alice", "at": "t", "status": "saved", "retired": []}',
    ),
    "decision-consolidated": (
        Decision(
            DecisionValue.REPLACE,
            "r" * 8,
            "c" * 8,
            "bob",
            "t",
            ConsolidateStatus.PENDING_ACTIVATION,
            ("evidence:z",),
            ("evidence:x",),
            "n" * 8,
            "down",
        ),
        '{"decision": "replace", "revision": "rrrrrrrr", "content_hash": "cccccccc", "actor": "bob", "at": "t", "status": "pending_activation", "retired": ["evidence:z"], "excluded": ["evidence:x"], "snapshot": "nnnnnnnn", "activation_error": "down"}',
    ),
    "source-missing": (
        SourceRecord(
            "s" * 8,
            "fs:evidence/source/x.md",
            SourceKind.FS,
            "t0",
            SourceStatus.MISSING,
            "h" * 8,
            "T",
            Identifier("doi", "10.1/x"),
            "a" * 8,
            None,
            None,
            Decision(
                DecisionValue.KEEP, "r" * 8, "c" * 8, "alice", "t", DecisionProgress.SAVED, ()
            ),
            Retraction("gone", "carol", "t1"),
            "t2",
        ),
        '{"source_id": "ssssssss", "locator": "fs:evidence/source/x.md", "kind": "fs", "first_seen_at": "t0", "status": "missing", "last_hash": "hhhhhhhh", "title": "T", "identifier": {"type": "doi", "value": "10.1/x"}, "adopted_hash": "aaaaaaaa", "acknowledged_hash": null, "comparison": null, "decision": {"decision": "keep", "revision": "rrrrrrrr", "content_hash": "cccccccc", "actor": "alice", "at": "t", "status": "saved", "retired": []}, "retraction": {"note": "gone", "actor": "carol", "at": "t1"}, "missing_since": "t2"}',
    ),
    "source-new": (
        SourceRecord("s" * 8, "import:imports/x", SourceKind.IMPORT, "t0"),
        '{"source_id": "ssssssss", "locator": "import:imports/x", "kind": "import", "first_seen_at": "t0", "status": "active", "last_hash": null, "title": null, "identifier": null, "adopted_hash": null, "acknowledged_hash": null, "comparison": null, "decision": null, "retraction": null}',
    ),
    "staged-keep": (
        Staged({"evidence:a": {"kind": "manual"}}),
        '{"declarations": {"evidence:a": {"kind": "manual"}}}',
    ),
    "staged-replace": (
        Staged({}, {"evidence:z": {"reason": "retired"}}),
        '{"declarations": {}, "retirements": {"evidence:z": {"reason": "retired"}}}',
    ),
    "citing-unit": (
        CitingUnit("evidence:a", "original", "evidence/curated/a.md"),
        '{"id": "evidence:a", "as": "original", "path": "evidence/curated/a.md"}',
    ),
    "retract-result": (
        RetractResult("s" * 8, Retraction("gone", "carol", "t1"), ("evidence:a",)),
        '{"source_id": "ssssssss", "retraction": {"note": "gone", "actor": "carol", "at": "t1"}, "review_items_raised": ["evidence:a"]}',
    ),
    "source-blob": (
        SourceBlob("evidence/source/é.md", "b" * 8),
        '{"path": "evidence/source/\\u00e9.md", "blob": "bbbbbbbb"}',
    ),
    "relation-print": (
        RelationPrint(
            kind="table",
            columns=(("id", "integer"), ("name", "text")),
            hash="h" * 8,
            schema="public",
            name="t",
        ),
        '{"schema": "public", "name": "t", "kind": "table", "columns": [["id", "integer"], ["name", "text"]], "hash": "hhhhhhhh"}',
    ),
    "relation-print-unnamed": (
        RelationPrint(kind="view", columns=(), hash="h" * 8),
        '{"kind": "view", "columns": [], "hash": "hhhhhhhh"}',
    ),
    "decide-plan": (
        DecidePlan(
            source_id="a" * 8,
            decision=DecisionValue.REPLACE,
            revision="b" * 8,
            changes=ProposalChanges(("evidence:n",), ("evidence:c",), (), ("evidence:r",), ()),
            excluded=("evidence:x",),
            overwrites_manual=("evidence:c",),
            write=("evidence/curated/n.md",),
            remove=("evidence/curated/r.md",),
        ),
        '{"source_id": "aaaaaaaa", "decision": "replace", "revision": "bbbbbbbb", "dry_run": true, "changes": {"added": ["evidence:n"], "changed": ["evidence:c"], "identical": [], "retired": ["evidence:r"], "manual": []}, "excluded": ["evidence:x"], "overwrites_manual": ["evidence:c"], "would_write": ["evidence/curated/n.md"], "would_remove": ["evidence/curated/r.md"]}',
    ),
    "dense-status-none": (
        DenseStatus(None, None, None),
        '{"model": null, "dense_path": null, "sqlite_vec": null}',
    ),
    "dense-status-vec": (
        DenseStatus("m-é", "vec", "0.1.6"),
        '{"model": "m-\\u00e9", "dense_path": "vec", "sqlite_vec": "0.1.6"}',
    ),
    "eval-question-scored": (
        Q_SCORED,
        '{"line": 3, "question": "qu\\u00e8?", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}], "recall": 0.5, "rr": 1.0, "ndcg": 0.6131, "misses": ["evidence:x"]}',
    ),
    "eval-question-retired-only": (
        Q_GONE,
        '{"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}',
    ),
    "eval-question-with-note": (
        Q_NOTE,
        '{"line": 7, "question": "the", "retired": [], "recall": 0.0, "rr": 0.0, "ndcg": 0.0, "misses": ["evidence:y"], "note": "only stop words"}',
    ),
    "eval-mode-figures": (
        MODE,
        '{"mode": "bm25", "available": true, "evaluated": 2, "retired_only": 1, "recall": 0.25, "mrr": 0.5, "ndcg": 0.3065, "questions": [{"line": 3, "question": "qu\\u00e8?", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}], "recall": 0.5, "rr": 1.0, "ndcg": 0.6131, "misses": ["evidence:x"]}, {"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}, {"line": 7, "question": "the", "retired": [], "recall": 0.0, "rr": 0.0, "ndcg": 0.0, "misses": ["evidence:y"], "note": "only stop words"}]}',
    ),
    "eval-mode-figures-nothing-scored": (
        ModeFigures(mode="dense", questions=(Q_GONE,)),
        '{"mode": "dense", "available": true, "evaluated": 0, "retired_only": 1, "recall": null, "mrr": null, "ndcg": null, "questions": [{"line": 5, "question": "only gone", "retired": [{"id": "evidence:g", "actor": "ann", "deleted_at": "2026-01-01T00:00:00Z", "reason": "retired"}]}]}',
    ),
    "adoption-hybrid": (
        Adoption(mode="hybrid", fusion=Fusion("rrf", 0.7), reason="better é", retrieval=HYBRID),
        '{"mode": "hybrid", "fusion": {"method": "rrf", "weight": 0.7}, "reason": "better \\u00e9", "descriptor": "workspace.yaml", "retrieval": {"mode": "hybrid", "fusion": {"method": "rrf", "weight": 0.7}}}',
    ),
    "adoption-bm25": (
        Adoption(mode="bm25", fusion=None, reason="no model", retrieval={"mode": "bm25"}),
        '{"mode": "bm25", "fusion": null, "reason": "no model", "descriptor": "workspace.yaml", "retrieval": {"mode": "bm25"}}',
    ),
    "eval-unavailable": (
        Unavailable(mode="dense", reason="no vectors"),
        '{"mode": "dense", "available": false, "reason": "no vectors"}',
    ),
    "refiner-response": (
        RefinerResponse(
            (ResponseUnit("# A\n", ("é",)),),
            (ResponseItem("look"), ResponseItem("fix", "evidence:a")),
        ),
        '{"units": [{"markdown": "# A\\n", "excerpts": ["\\u00e9"]}], "review_items": [{"message": "look", "unit_id": null}, {"message": "fix", "unit_id": "evidence:a"}]}',
    ),
    "sources-add-result": (
        AddResult(
            source_id="s" * 8,
            locator="import:imports/x",
            key="evidence.sources[2]",
            entry={"import": "imports/x", "format": "dbt"},
            rewritten=True,
        ),
        '{"source_id": "ssssssss", "locator": "import:imports/x", "key": "evidence.sources[2]", "entry": {"import": "imports/x", "format": "dbt"}, "descriptor": "workspace.yaml", "rewritten": true}',
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_record_writes_its_golden_json_and_reads_it_back(name: str) -> None:
    record, golden = GOLDEN[name]
    assert json.dumps(record.to_json()) == golden
    back = json.loads(golden)
    tagged = isinstance(record, DocumentDeclaration | ManualDeclaration)
    read = declaration_from_json(back) if tagged else type(record).from_json(back)
    assert read == record
    assert read.to_json() == back


def test_every_record_class_has_a_golden_case() -> None:
    classes = {type(r).__name__ for r, _ in GOLDEN.values()}
    assert classes == {
        "GitFile",
        "PartialStage",
        "GitState",
        "GitCommands",
        "DocumentDeclaration",
        "ManualDeclaration",
        "Deletion",
        "ClosedItem",
        "Change",
        "DriftItem",
        "CheckedUnit",
        "ReviewItem",
        "NotImportedItem",
        "DocumentFacts",
        "CurrentUnit",
        "ProposedEntry",
        "Dropped",
        "Retraction",
        "ProposalChanges",
        "CitationFlag",
        "CitationCheck",
        "CarriedDeclaration",
        "CarriedItem",
        "PendingEntry",
        "Serving",
        "IndexDrift",
        "Figures",
        "Retired",
        "NotExported",
        "RefinerRequest",
        "Changes",
        "PublishResult",
        "TypeResult",
        "WrittenReport",
        "Comparison",
        "Decision",
        "SourceRecord",
        "Staged",
        "CitingUnit",
        "RetractResult",
        "SourceBlob",
        "RelationPrint",
        "DecidePlan",
        "Unavailable",
        "RefinerResponse",
        "AddResult",
        "DenseStatus",
        "QuestionResult",
        "ModeFigures",
        "Adoption",
    }
    assert len(GOLDEN) == 82
