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
    objects may form cycles."""
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was_enabled:
            gc.disable()


@contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
