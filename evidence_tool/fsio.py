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
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path

Hook = Callable[[str, str, str], None]
_hook: Hook | None = None

OPS = ("mkdir", "open", "write", "fsync", "replace", "unlink", "rmdir", "truncate")


def set_hook(hook: Hook | None) -> None:
    """Install (or clear) the fault-injection hook: ``hook(op, path, phase)``."""
    global _hook
    _hook = hook


def _call(op: str, path: str | os.PathLike[str], fn: Callable[[], object]) -> object:
    if _hook is not None:
        _hook(op, os.fspath(path), "before")
    out = fn()
    if _hook is not None:
        _hook(op, os.fspath(path), "after")
    return out


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
            _call("mkdir", folder, lambda f=folder: os.mkdir(f, 0o755))  # type: ignore[misc]
        except FileExistsError:
            if not folder.is_dir() or folder.is_symlink():
                raise
            continue
        fsync_dir(folder.parent)


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, make_parents: bool = True, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    ``durable=False`` is for derived caches only: still atomic (old or new bytes),
    but not synced, since losing them costs a recomputation, never data.
    """
    path = Path(path)
    if make_parents:
        makedirs(path.parent)
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
        _call("replace", path, lambda: os.replace(tmp, path))
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


def unlink(path: str | os.PathLike[str], *, missing_ok: bool = False) -> None:
    path = Path(path)
    try:
        _call("unlink", path, lambda: os.unlink(path))
    except FileNotFoundError:
        if not missing_ok:
            raise
        return
    fsync_dir(path.parent)


def rmdir(path: str | os.PathLike[str]) -> None:
    path = Path(path)
    _call("rmdir", path, lambda: os.rmdir(path))
    fsync_dir(path.parent)


def append_line(path: str | os.PathLike[str], line: bytes) -> None:
    """Append one line durably (the event log). A torn last line is skipped by readers."""
    path = Path(path)
    makedirs(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = _call("open", path, lambda: os.open(path, flags, 0o644))
    assert isinstance(fd, int)
    try:
        _call("write", path, lambda: os.write(fd, line))
        fsync_fd(fd, path)
    finally:
        os.close(fd)


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


def _syncfs(path: str | os.PathLike[str]) -> None:
    """Flush every dirty page of the filesystem holding ``path`` (one call for a batch)."""
    import ctypes

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = getattr(libc, "syncfs", None)
        if syncfs is None:  # not Linux: fall back to a global sync
            _call("syncfs", path, os.sync)
            return

        def call() -> None:
            if syncfs(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), os.fspath(path))

        _call("syncfs", path, call)
    finally:
        os.close(fd)


_FSYNC_EACH_UP_TO = 16


def write_batch(items: list[tuple[Path, bytes]]) -> None:
    """Write many new files durably with one filesystem sync instead of one fsync each.

    All temp files are written first, then one syncfs makes their bytes durable,
    then each is renamed into place and every touched folder is fsynced once.  A
    crash leaves either nothing at a target or its complete bytes; stray temp
    files are swept by the next locked operation.  For content-addressed files
    only (a target that exists is skipped: same name, same bytes).
    """
    pending: list[tuple[Path, Path]] = []
    try:
        for path, data in items:
            if path.exists():
                continue
            makedirs(path.parent)
            tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
            flags = (
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
            )
            fd = _call("open", tmp, lambda t=tmp, f=flags: os.open(t, f, 0o644))  # type: ignore[misc]
            assert isinstance(fd, int)
            pending.append((tmp, path))
            try:
                view = memoryview(data)
                while view:
                    n = _call("write", tmp, lambda v=view, d=fd: os.write(d, v))  # type: ignore[misc]
                    assert isinstance(n, int)
                    view = view[n:]
            finally:
                os.close(fd)
        if not pending:
            return
        if len(pending) <= _FSYNC_EACH_UP_TO:
            # A few files: fsync each; syncfs would also wait for every other writer's data.
            for tmp, _ in pending:
                fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW)
                try:
                    fsync_fd(fd, tmp)
                finally:
                    os.close(fd)
        else:
            _syncfs(pending[0][1].parent)
        folders: dict[Path, None] = {}
        while pending:
            tmp, path = pending[0]
            _call("replace", path, lambda t=tmp, p=path: os.replace(t, p))  # type: ignore[misc]
            pending.pop(0)
            folders[path.parent] = None
        for folder in folders:
            fsync_dir(folder)
    except BaseException:
        for tmp, _ in pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
