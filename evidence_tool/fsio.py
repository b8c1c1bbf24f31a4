"""The IO seam: every managed filesystem write of the package goes through here.

Each file is written as a temp file in the target directory (exclusive create,
no symlink following), fsynced, renamed over the target, and the directory is
fsynced, so a crash leaves the old bytes or the new bytes, never a mix.  A
failed fsync aborts the operation and is never retried (after a failed fsync
the kernel may have dropped the dirty pages: a retry can report success for
data that is gone).

Fault injection reaches every write through ``set_hook``: the hook is called
with the operation name and path before (``phase="before"``) and after
(``phase="after"``) each call, and may raise or kill the process.

A ``transaction`` (the archive opens one per locked operation) keeps an undo
log of one *step* at a time: ``begin_step()`` opens a step, and the write that
makes it visible (state.yaml, a journal entry, sources.json: ``write_atomic(...,
commit=True)``) closes it.  When an operation fails with the step still open, ``rollback()`` undoes the step's writes newest first, so an I/O error
before the commit point leaves the tree as it was.  The undo never fsyncs: what
it removes is referenced by nothing durable, so any part of it reaching the
disk is a state the next run accepts, and after a failed fsync a second one
proves nothing.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ANY: Any = object()  # write_atomic/unlink without ``expected``: whatever is there
Hook = Callable[[str, str, str], None]
# The names write_atomic gives its temp files: ".<target name>.<12 hex>.tmp" (group 1: target).
TEMP_NAME = re.compile(r"\.(.+)\.[0-9a-f]{12}\.tmp")
_hook: Hook | None = None
_tx: Transaction | None = None

OPS = ("mkdir", "open", "write", "fsync", "replace", "unlink", "rmdir", "truncate")


def set_hook(hook: Hook | None) -> None:
    """Install (or clear) the fault-injection hook: ``hook(op, path, phase)``."""
    global _hook
    _hook = hook


def _call(op: str, path: str | os.PathLike[str], fn: Callable[[], object]) -> object:
    try:
        if _hook is not None:
            _hook(op, os.fspath(path), "before")
        out = fn()
    except OSError as exc:
        if exc.filename is None:  # os.fsync(fd) names no file: say which one failed
            exc.filename = os.fspath(path)
        raise
    if _hook is not None:
        _hook(op, os.fspath(path), "after")
    return out


def _then(_result: object, undo: _Undo | None) -> None:
    """Record ``undo`` the moment its call is done (inside ``_call``, before the hook's
    "after" or a later fsync can fail), so a failure from then on undoes the call."""
    if undo is not None and _tx is not None:
        _tx.record(undo)


def fsync_fd(fd: int, path: str | os.PathLike[str]) -> None:
    _call("fsync", path, lambda: os.fsync(fd))


def fsync_dir(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fsync_fd(fd, path)
    finally:
        os.close(fd)


def makedirs(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and missing parents, fsyncing each parent after a creation."""
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.is_dir():
        if probe.exists() or probe.is_symlink():
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(probe))
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            _call("mkdir", folder, lambda f=folder: _then(os.mkdir(f, 0o755), _Undo("rmdir", f)))  # type: ignore[misc]
        except FileExistsError:
            if not folder.is_dir() or folder.is_symlink():
                raise
            continue
        fsync_dir(folder.parent)


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    make_parents: bool = True,
    durable: bool = True,
    commit: bool = False,
    expected: str | None = ANY,
) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    ``commit=True``: this write is the open step's commit point; the step closes as soon
    as the rename is done (a reader may see it from then on, so it is never undone).
    ``durable=False``: no fsync, for the undo of a failed step only.
    ``expected``: replace only while the file still holds bytes with this sha256 (None:
    only while it does not exist), else raise ``Changed`` -- for operator files, which
    an editor may save at any moment (``_swap``).
    """
    path = Path(path)
    if make_parents:
        makedirs(path.parent)
    undo = _tx.before_replace(path, data) if _tx is not None and durable else None
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = _call("open", tmp, lambda: os.open(tmp, flags, 0o644))
    assert isinstance(fd, int)
    try:
        try:
            view = memoryview(data)
            while view:
                n = _call("write", tmp, lambda v=view: os.write(fd, v))  # type: ignore[misc]
                assert isinstance(n, int)
                view = view[n:]
            if durable:
                fsync_fd(fd, tmp)
        finally:
            os.close(fd)

        def rename() -> None:
            if expected is ANY:
                os.replace(tmp, path)
            else:
                _swap(tmp, path, expected, hashlib.sha256(data).hexdigest())
            if commit:
                commit_step()
            else:
                _then(None, undo)  # so a failing folder fsync undoes the rename too

        _call("replace", path, rename)
    except BaseException:
        # Leave no temp file behind; the target keeps its old bytes.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def write_new(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write a content-addressed file once; False if it already exists (same name, same bytes)."""
    path = Path(path)
    if path.exists():
        return False
    write_atomic(path, data)
    return True


def unlink(
    path: str | os.PathLike[str], *, missing_ok: bool = False, expected: str | None = ANY
) -> None:
    """Remove ``path``; with ``expected`` (a sha256), only while it still holds those bytes."""
    path = Path(path)
    undo = _tx.before_unlink(path) if _tx is not None else None
    remove = os.unlink if expected is ANY else functools.partial(_unlink_if, expected=expected)
    try:
        _call("unlink", path, lambda: _then(remove(path), undo))
    except FileNotFoundError:
        if not missing_ok:
            raise
        return
    fsync_dir(path.parent)


def rmdir(path: str | os.PathLike[str]) -> None:
    path = Path(path)
    _call("rmdir", path, lambda: _then(os.rmdir(path), _Undo("mkdir", path)))
    fsync_dir(path.parent)


def append_line(path: str | os.PathLike[str], line: bytes) -> None:
    """Append one line durably (the event log). A torn last line is skipped by readers."""
    path = Path(path)
    makedirs(path.parent)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = _call("open", path, lambda: os.open(path, flags, 0o644))
    assert isinstance(fd, int)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            # A crash tore the last line: end it, or this line would be glued to it and lost.
            line = b"\n" + line
        if _tx is not None:
            _tx.record(_Undo("truncate", path, size=size))
        _call("write", path, lambda: os.write(fd, line))
        fsync_fd(fd, path)
    finally:
        os.close(fd)


def open_lock(path: str | os.PathLike[str]) -> int:
    """Open (creating) the archive's lock file for flock: read-write, never through a
    symlink, non-blocking so that a FIFO planted there cannot hang the open."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = _call("open", path, lambda: os.open(path, flags, 0o644))
    assert isinstance(fd, int)
    return fd


def rewrite_fd(fd: int, path: str | os.PathLike[str], data: bytes) -> None:
    """Overwrite an open, locked bookkeeping file in place (the lock holder's note).

    Not atomic and not fsynced on purpose: the note only names the holder for
    error messages, and the flock, not the file content, is the lock.
    """
    _call("truncate", path, lambda: os.ftruncate(fd, 0))
    _call("write", path, lambda: os.pwrite(fd, data, 0))


def publish(tmp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Durably move a finished file (built by a library that writes it itself) into place."""
    fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fsync_fd(fd, tmp)
    finally:
        os.close(fd)
    _call("replace", path, lambda: os.replace(tmp, path))
    fsync_dir(Path(path).parent)


# -- compare and swap, for files an editor may save at any moment ----------------------


class Changed(Exception):
    """The file no longer holds the bytes the caller checked: someone else saved it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(os.fspath(path))
        self.path = os.fspath(path)


_RENAME_EXCHANGE = 2
_exchange_fn: Any = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names atomically (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    global _exchange_fn
    if _exchange_fn is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = getattr(libc, "renameat2", False)
        if fn:
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
            fn.argtypes += [ctypes.c_uint]
        _exchange_fn = fn
    if not _exchange_fn:
        return False
    at_cwd = -100
    if _exchange_fn(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False  # this file system cannot exchange: the checked window stays
    raise OSError(code, os.strerror(code), os.fspath(b))


def _swap(tmp: Path, path: Path, expected: str | None, ours: str) -> None:
    """Rename ``tmp`` over ``path`` only if ``path`` holds ``expected``, else ``Changed``.

    Absent expected: a hard link creates the name only if nothing holds it.  Otherwise
    the check is repeated right before an atomic exchange, and the bytes taken out are
    checked again: an editor that saved in between gets its bytes put back (and any
    newer save of theirs that landed meanwhile stays).  An editor writing in place into
    the old file between the two is the one race no rename can see.
    """
    if expected is None:
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise Changed(path) from None
        os.unlink(tmp)
        return
    if _sha256(path) != expected:
        raise Changed(path)
    if not _exchange(tmp, path):
        os.replace(tmp, path)
        return
    seen = {_sha256(tmp)}
    if expected in seen:
        os.unlink(tmp)  # the bytes we replaced are the ones we checked
        return
    while True:  # give their save back; keep whichever of theirs is newest
        _exchange(tmp, path)
        out = _sha256(tmp)
        if out == ours or out in seen:
            os.unlink(tmp)
            raise Changed(path)
        seen.add(out)


def _unlink_if(path: Path, *, expected: str | None) -> None:
    """Remove ``path`` only if it holds ``expected``: move it aside, check, or give it back."""
    aside = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    os.rename(path, aside)
    if _sha256(aside) != expected:
        with contextlib.suppress(FileExistsError):  # a newer save of theirs stays
            os.link(aside, path)
        os.unlink(aside)
        raise Changed(path)
    os.unlink(aside)


# -- the undo log of one step ------------------------------------------------------


class _Undo:
    """One undo action: ``restore`` a replaced file's ``old`` bytes (None: the step created
    it, remove it), ``mkfile`` (re-create a removed file), ``rmdir``/``mkdir`` (a folder the
    step created/removed), ``truncate`` (an appended file back to ``size``).  ``new`` is the
    sha256 of what the step wrote: a file that no longer holds it was changed by someone
    else since, and is left alone."""

    def __init__(
        self,
        kind: str,
        path: Path,
        old: bytes | None = None,
        new: str | None = None,
        size: int = 0,
    ) -> None:
        self.kind, self.path, self.old, self.new, self.size = kind, path, old, new, size

    def apply(self) -> None:
        path = self.path
        if self.kind == "rmdir":
            if path.is_dir() and not any(path.iterdir()):
                _call("rmdir", path, lambda: os.rmdir(path))
        elif self.kind == "mkdir":
            if not os.path.lexists(path):
                _call("mkdir", path, lambda: os.mkdir(path, 0o755))
        elif self.kind == "truncate":
            if path.is_file() and path.stat().st_size > self.size:
                _call("truncate", path, lambda: os.truncate(path, self.size))
        elif self.kind == "mkfile":
            if not os.path.lexists(path):
                write_atomic(path, self.old or b"", make_parents=False, durable=False)
        elif self.kind == "restore":
            if _sha256(path) != self.new:
                return  # changed again since the step wrote it: not ours to undo
            if self.old is None:
                _call("unlink", path, lambda: os.unlink(path))
            else:
                write_atomic(path, self.old, make_parents=False, durable=False)


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _old_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


class Transaction:
    """The undo log of the open step of one operation (see the module docstring)."""

    def __init__(self) -> None:
        self.steps: list[_Undo] = []
        self.recording = False

    def record(self, undo: _Undo) -> None:
        if self.recording:
            self.steps.append(undo)

    def before_replace(self, path: Path, data: bytes) -> _Undo | None:
        if not self.recording:
            return None
        return _Undo("restore", path, _old_bytes(path), hashlib.sha256(data).hexdigest())

    def before_unlink(self, path: Path) -> _Undo | None:
        if not self.recording or not path.is_file():
            return None
        old = _old_bytes(path)
        return _Undo("mkfile", path, old) if old is not None else None

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


@contextlib.contextmanager
def transaction() -> Iterator[Transaction]:
    """An undo log for the enclosed operation; steps are opened with ``begin_step()``."""
    global _tx
    outer, _tx = _tx, Transaction()
    try:
        yield _tx
    finally:
        _tx = outer


def begin_step() -> None:
    """Open a step: its writes are undone if the operation fails before ``commit_step()``."""
    if _tx is not None:
        _tx.steps, _tx.recording = [], True


def commit_step() -> None:
    """Close the open step: its commit point is written; from here the next run rolls forward."""
    if _tx is not None:
        _tx.steps, _tx.recording = [], False
