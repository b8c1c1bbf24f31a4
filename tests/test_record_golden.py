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

from evidence_tool.archive.records import (
    ClosedBy,
    ClosedItem,
    Deletion,
    DeletionReason,
    DocumentDeclaration,
    ManualDeclaration,
    declaration_from_json,
)
from evidence_tool.errors import EvidenceWarning as W
from evidence_tool.gitflow.records import GitCommands, GitFile, GitState, PartialStage
from evidence_tool.gitflow.roles import Role

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
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_record_writes_its_golden_json_and_reads_it_back(name: str) -> None:
    record, golden = GOLDEN[name]
    assert json.dumps(record.to_json()) == golden
    back = json.loads(golden)
    read = declaration_from_json(back) if "declaration" in name else type(record).from_json(back)
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
    }
    assert len(GOLDEN) == 15
