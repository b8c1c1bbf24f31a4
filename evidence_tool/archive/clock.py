"""Timestamps for declarations and events: UTC, second precision, ISO 8601 with 'Z'.

``THT_NOW`` pins the clock (tests, reproducible migrations).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

Stamp = Callable[[str], str]  # a workspace-relative path -> when it changed


def _utc(when: datetime) -> str:
    return when.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> str:
    pinned = os.environ.get("THT_NOW")
    if pinned:
        return pinned
    return _utc(datetime.now(UTC))


def changed_at(root: str | os.PathLike[str]) -> Stamp:
    """When the change at a path under ``root`` was made: a file's modification time or,
    for a file that is gone, that of the nearest folder still there (the removal changed
    its entries).  The times of a snapshot's new declarations and deletions come from
    here, not from the clock of the run, so a dry run and the real run over the same
    files derive the same manifest, hence the same revision."""
    base = Path(root)
    prefix = os.path.join(os.fspath(root), "")
    formatted: dict[int, str] = {}  # whole seconds -> text: files copied together share one

    def stamp(rel: str) -> str:
        pinned = os.environ.get("THT_NOW")
        if pinned:
            return pinned
        try:  # the common case, a file that is there, without a Path per unit
            mtime = os.stat(prefix + rel).st_mtime
        except OSError:
            mtime = -1.0
        seconds = int(mtime)
        # fromtimestamp rounds to the microsecond: within one of the next second it may
        # carry into it, and before 1970 int() is not the floor; both take the exact path.
        if mtime >= 0 and mtime - seconds < 0.999_999:
            text = formatted.get(seconds)
            if text is None:
                text = formatted[seconds] = _utc(datetime.fromtimestamp(seconds, UTC))
            return text
        path = base / rel
        while True:
            try:
                return _utc(datetime.fromtimestamp(os.stat(path).st_mtime, UTC))
            except (FileNotFoundError, NotADirectoryError):
                if path == base or base not in path.parents:
                    return now()
                path = path.parent
            except OSError:
                return now()

    return stamp
