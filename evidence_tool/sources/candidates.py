"""A discovered source: identity now, bytes later (fetching is the expensive part)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evidence_tool.sources.document import Acquired


@dataclass(frozen=True)
class Candidate:
    source_id: str
    locator: str
    kind: str  # fs | http | s3 | import
    fetch: Callable[[], Acquired]
