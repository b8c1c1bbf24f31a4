"""The undo log of one step of an operation (see the package docstring).

The undo never fsyncs: what it removes is referenced by nothing durable, so
any part of it reaching the disk is a state the next run accepts, and after a
failed fsync a second one proves nothing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from evidence_tool.fsio._seam import call, contained, sha256_of


class Undo:
    """One undo action: ``restore`` a replaced file's ``old`` bytes (None: the step created
    it, remove it), ``mkfile`` (re-create a removed file), ``rmdir``/``mkdir`` (a folder the
    step created/removed), ``truncate`` (an appended file back to ``size``).  ``new`` is the
    sha256 of what the step wrote: a file that no longer holds it was changed by someone
    else since, and is left alone."""

    def __init__(
        self,
        kind: str,
        path: str | os.PathLike[str],  # a plain string from write_batch: made a Path if used
        old: bytes | None = None,
        new: str | None = None,
        size: int = 0,
    ) -> None:
        self.kind, self.path, self.old, self.new, self.size = kind, path, old, new, size

    def apply(self) -> None:
        path = Path(self.path)
        if self.kind == "rmdir":
            if path.is_dir() and not any(path.iterdir()):
                call("rmdir", path, lambda: os.rmdir(path))
        elif self.kind == "mkdir":
            if not os.path.lexists(path):
                call("mkdir", path, lambda: os.mkdir(path, 0o755))
        elif self.kind == "truncate":
            if path.is_file() and path.stat().st_size > self.size:
                call("truncate", path, lambda: os.truncate(path, self.size))
        elif self.kind == "mkfile":
            if not os.path.lexists(path):
                _put_unsynced(path, self.old or b"")
        elif self.kind == "restore" and sha256_of(path) == self.new:
            if self.old is None:
                call("unlink", path, lambda: os.unlink(path))
            else:
                _put_unsynced(path, self.old)


def _put_unsynced(path: Path, data: bytes) -> None:
    """Temp file and rename, without fsync (see the module docstring)."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        call("replace", path, lambda: os.replace(tmp, path))
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _old_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


class Transaction:
    """The undo log of the open step of one operation."""

    def __init__(self) -> None:
        self.steps: list[Undo] = []
        self.recording = False

    def record(self, undo: Undo | None) -> None:
        if undo is not None and self.recording:
            self.steps.append(undo)

    def before_replace(self, path: Path, new: str) -> Undo | None:
        if not self.recording:
            return None
        return Undo("restore", path, _old_bytes(path), new)

    def before_unlink(self, path: Path) -> Undo | None:
        if not self.recording or not path.is_file():
            return None
        old = _old_bytes(path)
        return Undo("mkfile", path, old) if old is not None else None

    def rollback(self) -> list[str]:
        """Undo the open step, newest write first; the paths that could not be undone."""
        failed = []
        steps, self.steps, self.recording = self.steps, [], False
        for undo in reversed(steps):
            try:
                undo.apply()
            except OSError:
                failed.append(os.fspath(undo.path))
        return failed


_tx: Transaction | None = None


def current() -> Transaction | None:
    return _tx


def record(undo: Undo | None) -> None:
    """Record ``undo`` the moment its call is done (inside ``call``, before the hook's
    "after" or a later fsync can fail), so a failure from then on undoes the call."""
    if _tx is not None:
        _tx.record(undo)


@contextlib.contextmanager
def transaction(root: str | os.PathLike[str] | None = None) -> Iterator[Transaction]:
    """An undo log for the enclosed operation; steps are opened with ``begin_step()``.
    With ``root``, every write must land inside it (``Outside`` otherwise)."""
    global _tx
    outer, _tx = _tx, Transaction()
    try:
        with contained(root):
            yield _tx
    finally:
        _tx = outer


def begin_step() -> None:
    """Open a step: its writes are undone if the operation fails before its commit point."""
    if _tx is not None:
        _tx.steps, _tx.recording = [], True


def commit_step() -> None:
    """Close the open step: its commit point is written; from here the next run rolls forward."""
    if _tx is not None:
        _tx.steps, _tx.recording = [], False
