"""``.local/sources.json`` (source identities, comparisons, decisions) and ``acquisitions/``.

sources.json is rewritten whole, atomically, through the IO seam, and only
after every acquisition and refinement of a refresh succeeded; it is pretty,
sorted JSON so an operator can review it in Git.
"""

from __future__ import annotations

import json
from typing import Any

from evidence_tool import fsio
from evidence_tool.errors import IntegrityError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.identity import Acquired
from evidence_tool.sources.records import FORMAT, RecordError, Registry
from evidence_tool.workspace.layout import Layout


class _Twice(Exception):
    """A key written twice in one object: json would keep the last value unsaid."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # found in one pass: a large map's slices were quadratic
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Twice(key)
            seen.add(key)
    return obj


def read(layout: Layout) -> Registry:
    """The registry; a hand-damaged file (not JSON, a key written twice, a record of the
    wrong shape, an entry without its ``status`` or under another source's id) is E701:
    every command that reads it stops before it writes (docs/sources.md)."""
    try:
        data = layout.sources_json.read_bytes()
    except FileNotFoundError:
        return Registry()
    try:
        value = json.loads(data, object_pairs_hook=_once)
    except _Twice as twice:
        raise IntegrityError(
            f"sources.json holds the key {twice.args[0]!r} twice in one object, so one of "
            "the two would be dropped unread; restore it from Git",
            path=layout.rel(layout.sources_json),
        ) from None
    except ValueError:
        raise IntegrityError(
            "sources.json is not valid JSON; restore it from Git",
            path=layout.rel(layout.sources_json),
        ) from None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise IntegrityError(
            "sources.json is not a format-1 source registry; restore it from Git",
            path=layout.rel(layout.sources_json),
        )
    try:
        registry = Registry.from_json(value)
        _check_entries(value, registry)
    except (RecordError, ValueError) as exc:
        raise IntegrityError(
            f"sources.json holds a malformed record ({exc}); restore it from Git",
            path=layout.rel(layout.sources_json),
        ) from None
    return registry


def _check_entries(value: JsonObject, registry: Registry) -> None:
    """What the record's types let through: ``status`` is always written (its default,
    active, would revive a missing source), and each entry is filed under its own id."""
    entries = value.get("sources")
    for sid, record in registry.sources.items():
        entry = entries.get(sid) if isinstance(entries, dict) else None
        if isinstance(entry, dict) and "status" not in entry:
            raise RecordError(f"source {sid!r} has no 'status'")
        if record.source_id != sid:
            raise RecordError(f"the entry {sid!r} holds source_id {record.source_id!r}")


def render(registry: Registry) -> bytes:
    return _pretty(registry.to_json())


def _pretty(value: JsonObject) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def write(layout: Layout, registry: Registry, rendered: bytes | None = None) -> None:
    """``rendered``: ``render(registry)`` when the caller has it already (a large comparison
    takes a second to render)."""
    # The commit point of a refresh: the acquisitions it saved are referenced from here on.
    data = rendered if rendered is not None else render(registry)
    fsio.write_atomic(layout.sources_json, data, commit=True)


def acquisition_paths(layout: Layout, sid: str, raw_hash: str) -> tuple[str, str]:
    """(original bytes, provenance) paths, workspace-relative, named by the bytes' sha256."""
    folder = layout.rel(layout.acquisitions / sid)
    return f"{folder}/{raw_hash}.orig", f"{folder}/{raw_hash}.json"


def save_acquisition(layout: Layout, doc: Acquired) -> str:
    """Keep the original bytes and their credential-free provenance; returns the bytes' hash."""
    raw_rel, meta_rel = acquisition_paths(layout, doc.source_id, doc.raw_hash)
    fsio.write_new(layout.resolve_inside(raw_rel), doc.raw)
    meta: JsonObject = {"locator": doc.locator, "content_hash": doc.content_hash, **doc.provenance}
    fsio.write_new(layout.resolve_inside(meta_rel), _pretty(meta))
    return doc.raw_hash


def load_acquisition(layout: Layout, sid: str, raw_hash: str) -> bytes:
    import hashlib

    raw_rel, _ = acquisition_paths(layout, sid, raw_hash)
    try:
        data = layout.resolve_inside(raw_rel).read_bytes()
    except FileNotFoundError:
        raise IntegrityError(
            f"the acquired bytes {raw_rel} are missing; refresh again", path=raw_rel
        ) from None
    if hashlib.sha256(data).hexdigest() != raw_hash:
        raise IntegrityError(f"{raw_rel} does not match its name; refresh again", path=raw_rel)
    return data
