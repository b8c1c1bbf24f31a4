"""Pause the cyclic garbage collector over bulk work on many small objects.

A scan or a consolidation of 10,000 units builds hundreds of thousands of
dicts and tuples (the stat cache, the manifest, the entries) and frees them by
reference counting: none of them form cycles.  The collector still walks the
young ones every 700 allocations and the whole heap now and then, a tenth of a
no-op consolidation.  Collection resumes, as it was, when the block ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def resumed() -> Iterator[None]:
    """Collection on inside a paused block: for callbacks (index builds, clients) whose
    objects may form cycles.

    The objects made while paused were never collected: the first young collection would
    walk them all (30 ms of a one-edit consolidate at 10,000 units).  They are frozen
    (set aside, O(1)) for the block and handed back after it, unless the host froze its own
    heap (a server before forking): its frozen objects are left as they are."""
    was_enabled = gc.isenabled()
    freeze = not was_enabled and gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    gc.enable()
    try:
        yield
    finally:
        if not was_enabled:
            gc.disable()
        if freeze:
            gc.unfreeze()


@contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
