"""The units a baseline parsed, kept for its first activation (issue 20).

``init`` parses every unit but activates nothing; without this cache the first
``consolidate`` after it would parse every blob again just to index them.  The
cache maps a blob's sha256 to the typed fields of the unit those bytes parse to
(id, kind, language, title, metadata, payload): the same bytes always parse to
the same unit, so an entry never goes stale, only unused.  The file is derived
data in ``.evidence-cache`` framed like the stat cache: the sha256 of a header
(format, tool and Python version) and a marshalled payload; anything damaged or
written by another version is ignored, and the blobs are parsed as before.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from evidence_tool import __version__, fsio
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:  # a no-op reads no unit: the model stays unloaded (start-up)
    from evidence_tool.unit import Unit

NAME = "unit-records.bin"
FORMAT = 1
_PYTHON = "{}.{}".format(*sys.version_info[:2])

# (id, kind, language, title, metadata JSON, payload JSON): what an export record takes
# from the unit itself.
Fields = tuple[str, str, str, str, JsonObject, JsonObject]


def fields_of(unit: Unit) -> Fields:
    return (
        unit.id,
        unit.kind,
        unit.language,
        unit.title,
        unit.metadata.to_json(),
        unit.payload.to_json(),
    )


def _header() -> bytes:
    return json.dumps(
        {"format": FORMAT, "version": __version__, "python": _PYTHON}, separators=(",", ":")
    ).encode()


def save(layout: Layout, units: Iterable[tuple[str, Unit]]) -> None:
    """Record ``(file_hash, unit)`` pairs, replacing the previous file."""
    payload = marshal.dumps({digest: fields_of(unit) for digest, unit in units})
    body = _header() + b"\n" + payload
    data = hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    # Derived and guarded by its digest: a torn write is ignored on load, no fsync needed.
    fsio.write_atomic(ensure_cache(layout) / NAME, data, durable=False)


def _load(layout: Layout) -> dict[str, Fields]:
    try:
        data = (layout.cache / NAME).read_bytes()
    except OSError:
        return {}
    digest, _, body = data.partition(b"\n")
    header, _, payload = body.partition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != digest or header != _header():
        return {}
    try:
        records = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    return records if isinstance(records, dict) else {}


class KnownRecords:
    """The cache, read on the first lookup: activations that find every unit they need
    already parsed (a change of k units) never read it."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._records: dict[str, Fields] | None = None

    def get(self, file_hash: str) -> Fields | None:
        if self._records is None:
            self._records = _load(self.layout)
        found = self._records.get(file_hash)
        if type(found) is not tuple or len(found) != 6:
            return None
        return found
