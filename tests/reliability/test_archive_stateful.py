"""A Hypothesis state machine over the archive API, checked against a simple model.

Random operator edits, deletions, renames, new units, reused (reserved) ids, saves,
removes, restores and consolidations whose activation fails at random.  After
every step:

- every curated file holds exactly the bytes the model says (no byte lost);
- ``active`` is a complete snapshot that ``verify`` accepts;

and after every consolidation the newest snapshot matches the model: the live
ids, deletion records for every id ever deleted (reserved forever: a new file
using one is E121), and declarations by SPEC 5.1 -- a new id is manual by the
consolidating actor (or by the saver, for ``save``), unchanged content carries
its declaration, changed content is manual by the actor keeping the former
documentary lineage under ``original``, a rename keeps it, a restore brings the
last one back.

CI runs 200 examples of 30 steps.  ``os.fsync`` is a no-op in this test only:
it checks what the archive decides and writes, not what the disk keeps (the
crash and power-loss tests do that), and 6,000 steps of real fsyncs would take
minutes on this class of disk.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import crash_workload as W
import crashkit as K
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from evidence_tool.archive.edits import ArchiveEditor
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.errors import InvalidFilesError
from evidence_tool.unit import parse

SOURCE_TEXT = "# Handbook\n\nUnit zero is defined here.\n"
ACTORS = ("alice", "bob")
BASE: dict[str, Path] = {}
COUNTER = itertools.count()
TALLY: collections.Counter[str] = collections.Counter()  # examples and rules run, for the figures


def unit_text(uid: str, title: str) -> bytes:
    return (
        f"---\nschema_version: 4\nid: {uid}\nkind: glossary\nlanguage: en\n"
        f"purposes: [disambiguation]\n---\n\n# {title}\n\n## Definition\n\n"
        "Unit zero is defined here.\n"
    ).encode()


def lineage(decl: dict[str, Any]) -> dict[str, Any] | None:
    """SPEC 5.1: the documentary lineage a visible change keeps under ``original``."""
    if decl["kind"] == "document":
        keys = ("kind", "source_id", "source_path", "source_hash", "excerpts")
        return {k: decl[k] for k in keys if k in decl}
    return decl.get("original")


def _comparable(snap: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Declarations without their times and the actor that staged a document one."""
    drop = {"declared_at", "actor"}
    return {u: (c, {k: v for k, v in d.items() if k not in drop}) for u, (c, d) in snap.items()}


class ActivationDown(Exception):
    pass


class ArchiveMachine(RuleBasedStateMachine):
    @initialize()
    def workspace(self) -> None:
        TALLY["examples"] += 1
        self.ws = BASE["root"] / f"ws{next(COUNTER)}"
        for rel in ("workspace.yaml", ".gitignore"):
            (self.ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.ws / rel).write_bytes((W.FIXTURE / rel).read_bytes())
        self.archive = LocalEvidenceArchive(self.ws)
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (path, bytes): the model
        self.ids = itertools.count()
        self.reserved: set[str] = set()
        self.deleted: dict[str, tuple[str, bytes, dict[str, Any]]] = {}
        self.snap: dict[str, tuple[str, dict[str, Any]]] = {}  # id -> (content hash, decl)
        self.saved: dict[str, tuple[str, str]] = {}  # id -> (content hash, saver)
        self.restoring: set[str] = set()
        for _ in range(2):
            self._write_new()
        self._stage_document(next(iter(self.files)))
        result = self.archive.initialize("alice")
        assert result.status == "initialized"
        self._expect_consolidated("alice")
        self._check_newest(result.revision)

    # -- helpers -------------------------------------------------------------------------

    def _write_new(self, uid: str | None = None) -> str:
        uid = uid or f"evidence:h:u{next(self.ids)}"
        rel = f"evidence/curated/glossary/{uid.rsplit(':', 1)[1]}-{next(COUNTER)}.md"
        self._put(uid, rel, unit_text(uid, f"Unit {uid}"))
        return uid

    def _put(self, uid: str, rel: str, data: bytes) -> None:
        (self.ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.ws / rel).write_bytes(data)
        self.files[uid] = (rel, data)

    def _stage_document(self, uid: str) -> None:
        data = SOURCE_TEXT.encode()
        digest = hashlib.sha256(data).hexdigest()
        sid = hashlib.sha256(b"handbook").hexdigest()
        rel = f"evidence/source/acquired/{sid}/{digest}.md"
        (self.ws / rel).parent.mkdir(parents=True)
        (self.ws / rel).write_bytes(data)
        decl = {"kind": "document", "source_id": sid, "source_path": rel}
        decl |= {"source_hash": digest, "excerpts": ["Unit zero is defined here."]}
        self.archive.merge_staged(
            {"declarations": {uid: {"content_hash": self._content(uid), "provenance": decl}}}
        )
        self.document = (uid, decl)

    def _content(self, uid: str) -> str:
        return parse(self.files[uid][1]).content_hash

    def _expect_consolidated(self, actor: str) -> None:
        """Move the model to the snapshot a consolidation by ``actor`` must have made."""
        snap: dict[str, tuple[str, dict[str, Any]]] = {}
        for uid in self.files:
            content = self._content(uid)
            old = self.snap.get(uid)
            saver = self.saved.get(uid)
            if uid in self.restoring:
                decl = self.deleted.pop(uid)[2]
            elif old is not None and old[0] == content:
                decl = old[1]
            elif saver is not None and saver[0] == content:
                decl = {"kind": "manual", "curator": saver[1]}
                if old is not None and lineage(old[1]):
                    decl["original"] = lineage(old[1])
            elif old is None and getattr(self, "document", (None,))[0] == uid:
                decl = self.document[1]
            else:
                decl = {"kind": "manual", "curator": actor}
                if old is not None and lineage(old[1]):
                    decl["original"] = lineage(old[1])
            snap[uid] = (content, decl)
        for uid, (_content, decl) in self.snap.items():
            if uid not in self.files and uid not in self.deleted:
                path = self.last_paths[uid]
                self.deleted[uid] = (path, self.last_bytes[uid], decl)
                self.reserved.add(uid)
        self.snap = snap
        self.last_paths = {uid: self.files[uid][0] for uid in self.files}
        self.last_bytes = {uid: self.files[uid][1] for uid in self.files}
        self.saved.clear()
        self.restoring.clear()
        self.reserved -= set(self.files)

    # -- operator edits (no lock: what an editor does) -------------------------------------

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        TALLY["edit"] += 1
        uid = data.draw(st.sampled_from(sorted(self.files)))
        rel, old = self.files[uid]
        self._put(uid, rel, old.replace(b"\n# ", b"\n# Edited ", 1))

    @rule()
    def add(self) -> None:
        TALLY["add"] += 1
        self._write_new()

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        TALLY["delete"] += 1
        uid = data.draw(st.sampled_from(sorted(self.files)))
        (self.ws / self.files.pop(uid)[0]).unlink()

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def rename(self, data: st.DataObject) -> None:
        TALLY["rename"] += 1
        uid = data.draw(st.sampled_from(sorted(self.files)))
        rel, body = self.files.pop(uid)
        new = rel.replace(".md", f"-m{next(COUNTER)}.md")
        (self.ws / rel).rename(self.ws / new)
        self.files[uid] = (new, body)

    @precondition(lambda self: self.reserved - set(self.files))
    @rule(data=st.data())
    def reuse_a_reserved_id(self, data: st.DataObject) -> None:
        TALLY["reuse_a_reserved_id"] += 1
        uid = data.draw(st.sampled_from(sorted(self.reserved - set(self.files))))
        rel = f"evidence/curated/glossary/again-{next(COUNTER)}.md"
        (self.ws / rel).write_bytes(unit_text(uid, "Back from the dead"))
        with pytest.raises(InvalidFilesError) as refused:
            self.archive.consolidate("alice")
        assert "E121" in [d.code for d in refused.value.diagnostics]
        (self.ws / rel).unlink()

    # -- the archive API -----------------------------------------------------------------

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def save(self, data: st.DataObject) -> None:
        TALLY["save"] += 1
        uid = data.draw(st.sampled_from(sorted(self.files)))
        editor = ArchiveEditor(self.archive)
        working = editor.get(uid)
        assert working.unit is not None
        unit = dataclasses.replace(working.unit, title=working.unit.title + " saved")
        saved = editor.save(unit, working.file_hash, "carol")
        self.files[uid] = (saved.path, (self.ws / saved.path).read_bytes())
        snap = self.snap.get(uid)
        if snap is None or snap[0] != unit.content_hash:
            self.saved[uid] = (unit.content_hash, "carol")

    @precondition(lambda self: self.files)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        TALLY["remove"] += 1
        uid = data.draw(st.sampled_from(sorted(self.files)))
        editor = ArchiveEditor(self.archive)
        editor.remove(uid, editor.get(uid).file_hash, "carol")
        self.files.pop(uid)

    @precondition(lambda self: self.deleted.keys() - self.files.keys() - self.restoring)
    @rule(data=st.data(), fails=st.booleans())
    def restore(self, data: st.DataObject, fails: bool) -> None:
        TALLY["restore"] += 1
        uid = data.draw(st.sampled_from(sorted(self.deleted.keys() - self.files.keys())))
        path, body, _decl = self.deleted[uid]
        self.restoring.add(uid)
        self.files[uid] = (path, body)
        result = ArchiveEditor(self.archive).restore(uid, "bob", self._activation(fails))
        self._after_consolidation(result, "bob", fails)

    def _activation(self, fails: bool) -> Any:
        def activate(snapshot: Any) -> None:
            assert K.complete_snapshots(self.ws) == []
            if fails:
                raise ActivationDown("index unavailable")

        return activate

    @rule(actor=st.sampled_from(ACTORS), fails=st.booleans())
    def consolidate(self, actor: str, fails: bool) -> None:
        TALLY["consolidate"] += 1
        result = self.archive.consolidate(actor, self._activation(fails))
        self._after_consolidation(result, actor, fails)

    def _after_consolidation(self, result: Any, actor: str, fails: bool) -> None:
        self._expect_consolidated(actor)
        self._check_newest(result.revision)
        state = self.archive.state()
        if fails:
            assert state.pending == result.revision or state.active == result.revision
        else:
            assert state.active == result.revision and state.pending is None

    def _check_newest(self, revision: str) -> None:
        """The newest snapshot holds the model's units, declarations and deletions."""
        newest = self.archive.newest_snapshot()
        assert newest is not None and newest.revision == revision
        got = {e.id: (e.content_hash, e.provenance) for e in newest.entries()}
        assert _comparable(got) == _comparable(self.snap)
        assert {d.id for d in newest.deletions} == set(self.deleted)
        self.snap = got  # carry the exact declarations (times included) from here

    @rule(actor=st.sampled_from(ACTORS))
    def dry_run(self, actor: str) -> None:
        TALLY["dry_run"] += 1
        before = K.files(self.ws)
        with contextlib.suppress(InvalidFilesError):
            self.archive.consolidate(actor, dry_run=True)
        assert K.files(self.ws) == before

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def no_byte_lost(self) -> None:
        TALLY["checks"] += 1
        curated = {
            rel: data
            for rel, data in K.files(self.ws).items()
            if rel.startswith("evidence/curated/")
        }
        assert curated == {rel: data for rel, data in self.files.values()}

    @invariant()
    def active_is_complete_and_verified(self) -> None:
        assert K.complete_snapshots(self.ws) == []
        assert K.verify(self.ws) == []

    def teardown(self) -> None:
        shutil.rmtree(self.ws, ignore_errors=True)


# README's run keeps the suite in its time budget; THT_SOAK=1 runs five times as many.
EXAMPLES = 600 if K.SOAK else 120
ArchiveMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=30,
    deadline=None,
    # Shrinking a 30-step run of real file operations can outlast the per-test timeout; a
    # failure is reported unshrunk unless THT_SHRINK=1 asks for the minimal example.
    phases=[p for p in Phase if p is not Phase.shrink or os.environ.get("THT_SHRINK") == "1"],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_the_archive_keeps_its_promises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    BASE["root"] = tmp_path
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # see the module docstring
    monkeypatch.delenv("THT_NOW", raising=False)
    TALLY.clear()
    ArchiveMachine.TestCase().runTest()
    assert TALLY["examples"] >= EXAMPLES
    print(f"\nstateful archive test: {dict(sorted(TALLY.items()))}")
