"""The lock holder's note: written in place, cut only when the old note was longer.

Truncating a file to the length it already has is still a journaled metadata change: the
first one after ``init`` waited for the journal commit that flushed what init wrote (issue
20).  The note must still never keep a tail of a longer, older note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence_tool import fsio
from evidence_tool.archive.lock import ArchiveLock

_LOCK = ".evidence-archive.lock"


def _ops_while_locked(path: Path) -> tuple[list[str], list[str], bytes, bool]:
    """The seam calls on the lock file at acquire and at release, the note held meanwhile,
    and whether the lock saw an interrupted holder."""
    ops: list[str] = []

    def record(op: str, where: str, phase: str) -> None:
        if phase == "after" and where == str(path):
            ops.append(op)

    fsio.set_hook(record)
    try:
        lock = ArchiveLock(path, "consolidate").acquire()
        at_acquire = list(ops)
        held = path.read_bytes()
        lock.release()
    finally:
        fsio.set_hook(None)
    return at_acquire, ops[len(at_acquire) :], held, lock.interrupted


def test_a_note_written_over_an_empty_one_is_not_truncated(tmp_path: Path) -> None:
    path = tmp_path / _LOCK
    path.write_bytes(b"")  # the last holder finished cleanly
    acquired, released, held, interrupted = _ops_while_locked(path)
    assert not interrupted
    assert json.loads(held)["command"] == "consolidate"
    assert "write" in acquired and "fsync" in acquired
    assert "truncate" not in acquired
    assert released == ["write", "truncate"]  # emptied: "finished cleanly"
    assert path.read_bytes() == b""


@pytest.mark.parametrize("old_size", [3, 4000])
def test_a_killed_holders_note_is_replaced_whole(tmp_path: Path, old_size: int) -> None:
    path = tmp_path / _LOCK
    old = (b'{"pid": 1, "command": "migrate", "argv": "' + b"x" * old_size)[:old_size]
    path.write_bytes(old)
    acquired, _, held, interrupted = _ops_while_locked(path)
    assert interrupted
    assert json.loads(held)["command"] == "consolidate"  # no tail of the old note left
    assert ("truncate" in acquired) == (old_size > len(held))
    assert path.read_bytes() == b""
