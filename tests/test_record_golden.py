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

from evidence_tool.activation.adopt import Figures
from evidence_tool.activation.citations import CitationCheck, CitationFlag, Flag
from evidence_tool.activation.drift import IndexDrift
from evidence_tool.activation.evaluation import Retired
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
from evidence_tool.catalog.drift import Change, ChangeKind, DriftItem
from evidence_tool.catalog.review import CheckedUnit
from evidence_tool.catalog.typecheck import TypeResult
from evidence_tool.errors import EvidenceWarning as W
from evidence_tool.gitflow.records import GitCommands, GitFile, GitState, PartialStage
from evidence_tool.gitflow.roles import Role
from evidence_tool.migrate.provenance import CarriedDeclaration, CarriedItem
from evidence_tool.publish.model import NotExported
from evidence_tool.publish.write import Changes, PublishResult
from evidence_tool.report.model import ComparisonRef, WrittenReport
from evidence_tool.sources.records import (
    CurrentUnit,
    DocumentFacts,
    Dropped,
    DropReason,
    Identifier,
    NotImportedItem,
    ProposalChanges,
    ProposedEntry,
    Retraction,
    ReviewItem,
)
from evidence_tool.sources.refiner import RefinerRequest, RequestUnit

CURATED, OTHER = Role("curated"), Role("other")
w1, w2, w3 = W("m é", "p", 3, "W801"), W("note"), W("col", "q", 1, "W804", 7)

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
    }
    assert len(GOLDEN) == 56
