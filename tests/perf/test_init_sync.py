"""`init` pays for its own writes: it ends with one sync of the filesystem, after its last
write, so the first consolidate's first fsync does not wait for the bytes init left dirty
(its derived caches, written without fsync), which ext4's ordered journal flushes at its
next commit (issue 20: the first consolidate after init <= 2x a no-op)."""

from __future__ import annotations

import sys
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate

_WRITES = ("mkdir", "open", "write", "replace", "unlink", "rmdir", "truncate")
_LOCK = ".evidence-archive.lock"  # its note is emptied at release, after the work


def _init_ops(root: Path) -> list[tuple[str, str]]:
    ops: list[tuple[str, str]] = []

    def record(op: str, path: str, phase: str) -> None:
        if phase == "after":
            ops.append((op, path))

    fsio.set_hook(record)
    try:
        assert Session.open(root, None).initialize("tester").status == "initialized"
    finally:
        fsio.set_hook(None)
    return ops


def test_init_syncs_the_filesystem_after_its_last_write(tmp_path: Path) -> None:
    root = generate(23, tmp_path / "ws", seed=3)
    ops = _init_ops(root)
    writes = [k for k, (op, path) in enumerate(ops) if op in _WRITES and not path.endswith(_LOCK)]
    syncs = [k for k, (op, _) in enumerate(ops) if op == "syncfs"]
    assert len(writes) > 23  # the run really wrote the baseline (objects, snapshot, caches)
    assert syncs, "init never synced the filesystem"
    last = ops[writes[-1]]
    assert syncs[-1] > writes[-1], f"init wrote {last} after its last sync"
    # The derived caches (written without fsync) are among the writes that sync covers.
    cached = [p for op, p in ops[: syncs[-1]] if op == "replace" and "/.evidence-cache/" in p]
    assert len(cached) >= 2, cached
