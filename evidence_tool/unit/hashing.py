"""Identity: ``content_hash`` (what a unit says) and ``file_hash`` (what is on disk)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol


class Canonical(Protocol):
    """What a content hash reads: a unit's canonical JSON shape (``Unit.to_json``).  A
    protocol, not the Unit class, so that model.py may import this module."""

    def to_json(self) -> Any: ...


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8: equal values give equal bytes."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(unit: Canonical) -> str:
    return sha256_hex(canonical_json(unit.to_json()))


def file_hash(data: bytes) -> str:
    return sha256_hex(data)
