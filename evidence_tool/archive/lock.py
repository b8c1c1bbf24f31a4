"""``.evidence-archive.lock``: an OS lock (flock) held for a whole operation.

Writers exclude each other; readers never take it.  The holder writes its pid,
command and start time into the file so a refused operation can name it.  The
kernel releases a flock when its holder dies, even by SIGKILL, so a stale lock
cannot outlive its process.
"""

from __future__ import annotations

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
        self.interrupted = False

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
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
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

    def acquire(self) -> ArchiveLock:
        fd = self._open()
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    who = self.holder()
                    os.close(fd)
                    raise LockHeldError(
                        f"the archive is locked by {who}; wait for it or pass --wait SECONDS",
                        path=self.path.name,  # it lives at the workspace root
                        details={"result": {"holder": who}},
                    ) from None
                time.sleep(0.05)
        self.fd = fd
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
            os.close(fd)
            raise AvailabilityError(
                f"cannot write the lock file {self.path.name}: {exc.strerror}; nothing was "
                "changed: free disk space or fix permissions, then run the command again",
                code="E604",
                path=self.path.name,
            ) from None
        return self

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                fsio.rewrite_fd(fd, self.path, b"")  # "finished cleanly", for the next holder
            except OSError:
                pass  # the next holder then sweeps for nothing: harmless
            finally:
                os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> ArchiveLock:
        return self.acquire()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
