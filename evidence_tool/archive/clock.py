"""Timestamps for declarations and events: UTC, second precision, ISO 8601 with 'Z'.

``THT_NOW`` pins the clock (tests, reproducible migrations).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime


def now() -> str:
    pinned = os.environ.get("THT_NOW")
    if pinned:
        return pinned
    return datetime.now(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
