"""``.evidence-archive.lock``: an OS lock (flock) held for a whole operation.

Writers exclude each other; readers never take it.  The holder writes its pid,
command and start time into the file so a refused operation can name it.  The
kernel releases a flock when the last descriptor of it closes, so a stale lock
cannot outlive its process -- as long as no other process shares the descriptor:
a forked child closes every lock descriptor at once (``os.register_at_fork``).

A flock belongs to a file, not to a name: the file at the path can be replaced
(renamed over, deleted) while it is held, and a second writer would then lock the
new file.  So the holder also locks the folder holding the lock file (a folder
cannot be renamed over by a file), and a lock is kept only while the path still
names the very file locked (checked after the flock, as Git and SQLite do).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import sys
import time
from pathlib import Path
from types import TracebackType

from evidence_tool import fsio
from evidence_tool.archive.clock import now
from evidence_tool.errors import AvailabilityError, LockHeldError

# The file system refuses to write, as opposed to something planted at the lock path.
_CANNOT_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO}
# A file system without flock on folders (some network mounts): the file lock alone.
_NO_FOLDER_LOCK = {errno.EBADF, errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP, errno.EACCES}
# Each attempt that finds the path replaced after locking starts over; a path replaced
# this many times in a row is being attacked, not raced.
_ATTEMPTS = 50

# Every lock descriptor open in this process: a forked child closes them at once, so that
# no child (a parse worker, say) keeps the lock alive after its parent dies.
_open_fds: set[int] = set()


def _close_inherited() -> None:
    for fd in _open_fds:
        with contextlib.suppress(OSError):
            os.close(fd)  # a close, never an unlock: the parent's lock stays
    _open_fds.clear()


os.register_at_fork(after_in_child=_close_inherited)


def _close(fd: int) -> None:
    _open_fds.discard(fd)
    os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    """The path still names the file open as ``fd`` (a symlink there is another file)."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


class ArchiveLock:
    def __init__(self, path: Path, command: str, wait: float = 0.0) -> None:
        self.path = path
        self.command = command
        self.wait = wait
        self.fd: int | None = None
        self.folder_fd: int | None = None
        self.interrupted = False
        # Leave the note at release, so the next holder still sweeps a killed run's temp
        # files (for a holder that does not sweep them itself: recover).
        self.pass_on = False
        self._owner = 0  # the pid that acquired: a forked copy of this object must not release

    def _open(self) -> int:
        try:
            fd = fsio.open_lock(self.path)
        except OSError as exc:
            if exc.errno in _CANNOT_WRITE:
                raise AvailabilityError(
                    f"cannot create the lock file {self.path.name}: {exc.strerror}; "
                    "the workspace is not writable",
                    code="E604",
                    path=self.path.name,
                ) from None
            raise LockHeldError(
                f"cannot open the lock file {self.path.name}: {exc.strerror} "
                "(a symlink, folder or special file there is refused; "
                "remove it)",
                path=self.path.name,
            ) from None
        _open_fds.add(fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _close(fd)
            raise LockHeldError(
                f"{self.path.name} is not a regular file; remove it", path=self.path.name
            )
        return fd

    def holder(self) -> str:
        try:
            info = json.loads(self.path.read_bytes() or b"{}")
        except (OSError, ValueError):
            return "another process"
        pid = info.get("pid") if isinstance(info, dict) else None
        if not isinstance(pid, int) or not _alive(pid):
            # A note left by an earlier holder: the current one (not evidence-tool,
            # e.g. flock(1)) wrote none, so naming that pid would mislead.
            return "another process"
        return (
            f"pid {info.get('pid', '?')} ({info.get('command', '?')}, "
            f"since {info.get('since', '?')})"
        )

    def _refused(self) -> LockHeldError:
        who = self.holder()
        return LockHeldError(
            f"the archive is locked by {who}; wait for it or pass --wait SECONDS",
            path=self.path.name,  # it lives at the workspace root
            details={"result": {"holder": who}},
        )

    @staticmethod
    def _flock(fd: int, deadline: float) -> bool:
        """flock ``fd`` exclusively, polling until ``deadline``; False if still held then."""
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.05)

    def _lock_file(self, deadline: float) -> int:
        """The lock file, flocked, and still the file the path names."""
        for _ in range(_ATTEMPTS):
            fd = self._open()
            if not self._flock(fd, deadline):
                error = self._refused()
                _close(fd)
                raise error
            if _same_file(fd, self.path):
                return fd
            _close(fd)  # replaced between our open and our flock: lock the new one
        raise LockHeldError(
            f"{self.path.name} is being replaced over and over by another program; stop it, "
            "then run the command again",
            path=self.path.name,
        )

    def _lock_folder(self, deadline: float) -> int | None:
        """The folder holding the lock file, flocked; None where folders cannot be locked."""
        try:
            fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno in _NO_FOLDER_LOCK:  # a folder it may not read: the file lock alone
                return None
            raise
        _open_fds.add(fd)
        try:
            locked = self._flock(fd, deadline)
        except OSError as exc:
            _close(fd)
            if exc.errno in _NO_FOLDER_LOCK:
                return None
            raise
        if not locked:
            # The file lock was free, the folder's is not: the lock file was replaced or
            # deleted under a running holder.  It still holds the lock.
            _close(fd)
            raise self._refused()
        return fd

    def acquire(self) -> ArchiveLock:
        deadline = time.monotonic() + self.wait
        fd = self._lock_file(deadline)
        try:
            self.folder_fd = self._lock_folder(deadline)
        except BaseException:
            _close(fd)
            raise
        self.fd = fd
        self._owner = os.getpid()
        # A holder that finished cleanly emptied its note (see release): a note still
        # here means it was killed mid-operation and may have left temp files behind.
        self.interrupted = bool(os.pread(fd, 1, 0))
        info = {
            "pid": os.getpid(),
            "command": self.command,
            "since": now(),
            "argv": " ".join(sys.argv[:3]),
        }
        # Durable before anything else is written: after a power cut the next holder must
        # still find it, or it would skip the sweep and leave this run's temp files.
        try:
            fsio.rewrite_fd(fd, self.path, json.dumps(info).encode(), durable=True)
        except OSError as exc:
            # Close without emptying the note: a killed holder's note must stay for the
            # next holder's sweep (rewrite_fd writes before it truncates).
            self.fd = None
            self._close_all(fd)
            raise AvailabilityError(
                f"cannot write the lock file {self.path.name}: {exc.strerror}; nothing was "
                "changed: free disk space or fix permissions, then run the command again",
                code="E604",
                path=self.path.name,
            ) from None
        return self

    def _close_all(self, fd: int) -> None:
        _close(fd)  # closing the last descriptor releases the flock
        if self.folder_fd is not None:
            folder, self.folder_fd = self.folder_fd, None
            _close(folder)

    def release(self) -> None:
        if self.fd is not None and self._owner == os.getpid():
            fd, self.fd = self.fd, None
            try:
                if not (self.pass_on and self.interrupted):
                    fsio.rewrite_fd(fd, self.path, b"")  # "finished cleanly", for the next holder
            except OSError:
                pass  # the next holder then sweeps for nothing: harmless
            finally:
                self._close_all(fd)
        self.fd = None

    def __enter__(self) -> ArchiveLock:
        return self.acquire()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
