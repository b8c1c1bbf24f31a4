"""Forked helpers (parse workers, the index build ahead) that die with their parent.

A child that waits on a pipe it also holds open itself is never woken by a dead parent:
it would live on as an orphan, holding memory and, for a build, a half-written file.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with(parent: int) -> None:
    """A child's first step: exit when ``parent`` dies, even by SIGKILL.

    Linux kills the child with its parent (PDEATHSIG); elsewhere a thread watches the
    parent's pid.  A parent that died before the signal was armed is caught here.
    """
    armed = False
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
