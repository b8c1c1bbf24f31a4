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
log of one *step* at a time (``undo``): ``begin_step()`` opens a step, and the
write that makes it visible (state.yaml, a journal entry, sources.json:
``write_atomic(..., commit=True)``) closes it.  When an operation fails with the
step still open, the step's writes are undone newest first, so an I/O error
before the commit point leaves the tree as it was.

Operator files are replaced with ``expected=`` (their compared sha256): see
``swap`` for how an editor's save landing meanwhile is kept.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from evidence_tool.fsio import swap as _swap
from evidence_tool.fsio._seam import (
    ANY,
    OPS,
    PARKED_NAME,
    TEMP_NAME,
    Changed,
    Hook,
    Outside,
    call,
    fsync_dir,
    fsync_fd,
    set_hook,
)
from evidence_tool.fsio.undo import (
    Transaction,
    Undo,
    begin_step,
    commit_step,
    current,
    record,
    transaction,
)

__all__ = [
    "ANY",
    "OPS",
    "PARKED_NAME",
    "TEMP_NAME",
    "Changed",
    "Hook",
    "Outside",
    "Transaction",
    "append_line",
    "begin_step",
    "commit_step",
    "discard_temp",
    "fsync_dir",
    "fsync_fd",
    "makedirs",
    "open_lock",
    "publish",
    "rewrite_fd",
    "rmdir",
    "set_hook",
    "sync_filesystem",
    "transaction",
    "unlink",
    "write_atomic",
    "write_batch",
    "write_new",
]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


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
        if _mkdir(folder):
            fsync_dir(folder.parent)


def _mkdir(folder: Path) -> bool:
    """Create one folder (undone on rollback); False when a racing writer made it first."""

    def make() -> None:
        os.mkdir(folder, 0o755)
        record(Undo("rmdir", folder))

    try:
        call("mkdir", folder, make)
    except FileExistsError:
        if not folder.is_dir() or folder.is_symlink():
            raise
        return False
    return True


def _write_temp(path: Path, data: bytes, *, sync: bool) -> Path:
    """A new temp file next to ``path`` holding ``data``, fsynced if ``sync``."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    _write_new_file(tmp, data, sync=sync)
    return tmp


def _write_new_file(tmp: str | Path, data: bytes, *, sync: bool = False) -> None:
    """Create ``tmp`` (never an existing name) holding ``data``; removed if that fails."""
    created: list[int] = []

    def create() -> int:
        created.append(os.open(tmp, _CREATE, 0o644))
        return created[0]

    try:
        call("open", tmp, create)
    except BaseException:
        # Created, then interrupted before the file was ours to clean (an exception or
        # Ctrl-C right after the open): nobody else knows this temp file, remove it.
        if created:
            os.close(created[0])
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    fd = created[0]
    try:
        try:
            view = memoryview(data)
            while view:
                n = call("write", tmp, lambda v=view: os.write(fd, v))  # type: ignore[misc]
                assert isinstance(n, int)
                view = view[n:]
            if sync:
                fsync_fd(fd, tmp)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fsync_fd(fd, path)
    finally:
        os.close(fd)


def write_atomic(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    make_parents: bool = True,
    durable: bool = True,
    commit: bool = False,
    expected: str | None = ANY,
    digest: str | None = None,
) -> str:
    """Replace ``path`` with ``data`` atomically and durably; the sha256 of ``data``.

    ``durable=False`` is for derived caches only: still atomic (old or new bytes),
    but not synced, since losing them costs a recomputation, never data.
    ``commit=True``: this write is the open step's commit point; the step closes as soon
    as the rename is done (a reader may see it from then on, so it is never undone).
    ``expected``: replace only while the file still holds bytes with this sha256 (None:
    only while it does not exist), else raise ``Changed`` -- for operator files.
    ``digest``: the sha256 of ``data`` when the caller has it (megabyte manifests).
    """
    path = Path(path)
    if make_parents:
        makedirs(path.parent)
    ours = digest or hashlib.sha256(data).hexdigest()
    tx = current()
    undo = tx.before_replace(path, ours) if tx is not None and durable else None
    tmp = _write_temp(path, data, sync=durable)
    try:

        def rename() -> None:
            if expected is ANY:
                os.replace(tmp, path)
            else:
                _swap.swap(tmp, path, expected, ours)
            if commit:
                commit_step()
            else:
                record(undo)  # so a failing folder fsync undoes the rename too

        call("replace", path, rename)
    except BaseException:
        # Leave no temp file behind; the target keeps its old bytes.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)
    return ours


def write_new(path: str | os.PathLike[str], data: bytes, *, digest: str | None = None) -> bool:
    """Write a content-addressed file once; False if it already exists (same name, same bytes)."""
    path = Path(path)
    if path.exists():
        return False
    write_atomic(path, data, digest=digest)
    return True


def sync_filesystem(path: str | os.PathLike[str]) -> None:
    """Flush every dirty page of the filesystem holding the folder ``path`` (one call for a
    batch): a command that wrote derived files without fsync pays for them here, once, not
    the next command's first fsync (ext4's ordered journal flushes them at its next commit)."""
    import ctypes

    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = getattr(libc, "syncfs", None)
        if syncfs is None:  # not Linux: fall back to a global sync
            call("syncfs", path, os.sync)
            return

        def sync() -> None:
            if syncfs(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, os.strerror(err), os.fspath(path))

        call("syncfs", path, sync)
    finally:
        os.close(fd)


_FSYNC_EACH_UP_TO = 16


def _make_folders(folders: set[Path]) -> set[Path]:
    """Create the missing ``folders`` (siblings, e.g. the object store's 256) and fsync
    each parent once after all of them, not after each: the new folders; none is used
    before that fsync, so a crash keeps what ``makedirs`` would."""
    new = sorted(f for f in folders if not os.path.isdir(f))
    parents = dict.fromkeys(f.parent for f in new)
    for parent in parents:
        makedirs(parent)
    made = {folder for folder in new if _mkdir(folder)}
    for parent in parents:
        fsync_dir(parent)
    return made


def write_batch(items: Sequence[tuple[str | os.PathLike[str], bytes, str]]) -> None:
    """Write many new files durably with one filesystem sync instead of one fsync each.

    ``items``: (path, bytes, their sha256) -- the name of a content-addressed file.
    All temp files are written first, then one syncfs makes their bytes durable,
    then each is renamed into place and every touched folder is fsynced once.  A
    crash leaves either nothing at a target or its complete bytes; stray temp
    files are swept by the next locked operation.  For content-addressed files
    only (a target that exists is skipped: same name, same bytes).
    """
    # Plain strings and one random tag per batch: a first consolidate writes 10,000 blobs,
    # and Path objects and a getrandom call per file were a fifth of its write time.  Each
    # target name is distinct (it is the content's hash), so each temp name is too.
    tag = secrets.token_hex(6)
    pending: list[tuple[str, str, str]] = []  # temp, target, digest
    renamed = 0  # pending[:renamed] are in place: no temp file left to clean up
    folders: dict[str, None] = {}  # touched folders, in order: fsynced once
    try:
        targets = [(os.fspath(path), data, digest) for path, data, digest in items]
        split = os.path.split
        wanted = {split(t)[0] for t, _, _ in targets}
        made = {os.fspath(f) for f in _make_folders({Path(f) for f in wanted})}
        for target, data, digest in targets:
            folder, name = split(target)
            # A folder made just now is empty: no target in it to look for.
            if folder not in made and os.path.exists(target):
                continue
            folders[folder] = None
            tmp = f"{folder}/.{name}.{tag}.tmp"
            _write_new_file(tmp, data)
            pending.append((tmp, target, digest))
        if not pending:
            return
        if len(pending) <= _FSYNC_EACH_UP_TO:
            # A few files: fsync each; syncfs would also wait for every other writer's data.
            for tmp, _, _ in pending:
                _fsync_path(Path(tmp))
        else:
            sync_filesystem(split(pending[0][1])[0])
        for tmp, target, digest in pending:

            def rename(tmp: str = tmp, target: str = target, digest: str = digest) -> None:
                os.replace(tmp, target)
                record(Undo("restore", target, None, digest))

            call("replace", target, rename)
            renamed += 1
        for folder in folders:
            fsync_dir(folder)
    except BaseException:
        for tmp, _, _ in pending[renamed:]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise


def unlink(
    path: str | os.PathLike[str], *, missing_ok: bool = False, expected: str | None = ANY
) -> None:
    """Remove ``path``; with ``expected`` (a sha256), only while it still holds those bytes."""
    path = Path(path)
    tx = current()
    undo = tx.before_unlink(path) if tx is not None else None

    def remove() -> None:
        if expected is ANY:
            os.unlink(path)
        else:
            _swap.unlink_if(path, expected)
        record(undo)

    try:
        call("unlink", path, remove)
    except FileNotFoundError:
        if not missing_ok:
            raise
        return
    fsync_dir(path.parent)


def discard_temp(path: str | os.PathLike[str]) -> None:
    """Remove an unpublished temp file (a build given up): nothing durable names it, so
    neither a folder fsync (none may follow a refused write) nor an undo record."""
    with contextlib.suppress(FileNotFoundError):
        call("unlink", path, lambda: os.unlink(path))


def rmdir(path: str | os.PathLike[str]) -> None:
    path = Path(path)

    def remove() -> None:
        os.rmdir(path)
        record(Undo("mkdir", path))

    call("rmdir", path, remove)
    fsync_dir(path.parent)


def append_line(path: str | os.PathLike[str], line: bytes) -> None:
    """Append one line durably (the event log). A torn last line is skipped by readers."""
    path = Path(path)
    makedirs(path.parent)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = call("open", path, lambda: os.open(path, flags, 0o644))
    assert isinstance(fd, int)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            # A crash tore the last line: end it, or this line would be glued to it and lost.
            line = b"\n" + line
        record(Undo("truncate", path, size=size))
        call("write", path, lambda: os.write(fd, line))
        fsync_fd(fd, path)
    finally:
        os.close(fd)


def open_lock(path: str | os.PathLike[str]) -> int:
    """Open (creating) the archive's lock file for flock: read-write, never through a
    symlink, non-blocking so that a FIFO planted there cannot hang the open.  A new
    lock file's folder is fsynced: the file carries the "last holder was killed" note."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = call("open", path, lambda: os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        fd = call("open", path, lambda: os.open(path, flags))
    else:
        try:
            fsync_dir(Path(path).parent)
        except BaseException:
            os.close(fd)  # type: ignore[arg-type]
            raise
    assert isinstance(fd, int)
    return fd


def rewrite_fd(
    fd: int, path: str | os.PathLike[str], data: bytes, *, durable: bool = False
) -> None:
    """Overwrite an open, locked bookkeeping file in place (the lock holder's note).

    Not atomic: the note names the holder for error messages and says whether the
    last holder finished; the flock is the lock.  ``durable``: fsync it too.
    """
    # Write, then cut: a write that fails (a full disk) leaves the old note, never none.
    old_size = os.fstat(fd).st_size
    call("write", path, lambda: os.pwrite(fd, data, 0))
    # Cut only a longer old note: a truncate to the length written is still a journaled
    # change (the first one after init waited for the flush of init's writes, issue 20).
    if old_size > len(data):
        call("truncate", path, lambda: os.ftruncate(fd, len(data)))
    if durable:
        fsync_fd(fd, path)


def publish(tmp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Durably move a finished file (built by a library that writes it itself) into place."""
    _fsync_path(Path(tmp))
    call("replace", path, lambda: os.replace(tmp, path))
    fsync_dir(Path(path).parent)
