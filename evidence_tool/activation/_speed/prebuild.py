"""A full index build in a forked child, while the parent writes the snapshot (issue 20).

The first consolidate of a large workspace builds its index from scratch: CPU work
(records, stems, inserts) that needs nothing but the candidate snapshot, held in
memory.  The parent starts it here, in a child that inherits the snapshot (nothing
is transferred), then writes the objects and the manifest on its own core, and joins
the child only where the activation would have built the index (``join``).

Nothing changes about what is published, or when: the child writes one unpublished
temp file and nothing else (no managed write: the parent's writes are the whole of
the operation's), the parent fsyncs and renames it as before.  The child dies with
the parent (PDEATHSIG), and any failure of the child (an exception, a kill, no fork
to be had) makes the parent build the index itself, which gives the error the
in-process build gives.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from evidence_tool.workspace.children import die_with


class Prebuild:
    """One child building the file ``tmp`` for ``revision``."""

    def __init__(self, pid: int, tmp: Path, revision: str) -> None:
        self.pid, self.tmp, self.revision = pid, tmp, revision
        self._status: int | None = None  # the child's exit code, once reaped

    @classmethod
    def start(cls, tmp: Path, revision: str, build: Callable[[], object]) -> Prebuild | None:
        """Fork a child that runs ``build`` (which writes ``tmp``); None when no child can
        be had here (the caller builds in-process, as without a prebuild)."""
        if not hasattr(os, "fork"):
            return None
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            return None
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            _child(parent, build)
        return cls(pid, tmp, revision)

    def join(self) -> bool:
        """Wait for the child: True when it wrote ``tmp`` completely."""
        return self._reap() == 0

    def cancel(self) -> None:
        """Stop the child if it still runs (the build is not wanted any more)."""
        if self._status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> int | None:
        if self._status is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped elsewhere: its outcome is unknown
                self._status = -1
            else:
                self._status = os.waitstatus_to_exitcode(status)
        return self._status


def _child(parent: int, build: Callable[[], object]) -> None:  # pragma: no cover
    """The child's whole life: build, then leave without running the parent's exit code
    (atexit handlers, buffered output, the lock's release belong to the parent)."""
    code = 1
    try:
        die_with(parent)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it with the parent
        build()
        code = 0
    except BaseException:
        pass
    finally:
        os._exit(code)
