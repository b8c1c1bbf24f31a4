"""The refiner's proposals, kept by (source, content hash, refiner identity) (SPEC 6.2).

A source nobody has decided on is refreshed again and again; while its bytes
and the refiner stay the same, so does the proposal, and a refiner may be slow
or paid per call.  Each proposal is kept in the derived cache
(``.evidence-cache/proposals/<key>.json``), written atomically; an entry is
checked on reading, and a missing, torn or hand-edited one is refined again,
never trusted.  Losing the folder costs refinements, never data.
"""

from __future__ import annotations

import json

from msgspec.structs import replace

from evidence_tool import __version__, fsio
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import UNSET, Record, UnsetType
from evidence_tool.sources.identity import Acquired
from evidence_tool.sources.records import NotImportedItem, ReviewItem
from evidence_tool.sources.refiner import Proposal, ProposedUnit
from evidence_tool.unit import parse_unit, render, sha256_hex
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

FOLDER = "proposals"


def key_of(doc: Acquired, language: str, refiner: JsonObject) -> str:
    """Everything the refiner is asked, except the current units (context, not input:
    the comparison is rebuilt against the files as they are on every refresh)."""
    return sha256_hex(
        canonical_json(
            {
                "tool": __version__,
                "source_id": doc.source_id,
                "content_hash": doc.content_hash,
                "language": language,
                "refiner": refiner,
            }
        )
    )


class _Unit(Record, frozen=True):
    markdown: str
    excerpts: tuple[str, ...]


class _Body(Record, frozen=True):
    """The proposal as the cache entry holds it (the cache file)."""

    units: tuple[_Unit, ...]
    review_items: tuple[ReviewItem, ...]
    # An import's only: its record and comparison extras.
    record: str | UnsetType = UNSET
    not_imported: tuple[NotImportedItem, ...] | UnsetType = UNSET
    skipped: dict[str, int] | UnsetType = UNSET


def _body(proposal: Proposal) -> JsonObject:
    # An import's unit already holds its canonical text: not rendered a second time.
    units = tuple(
        _Unit(pu.markdown if pu.markdown is not None else render(pu.unit), tuple(pu.excerpts))
        for pu in proposal.units
    )
    body = _Body(units, tuple(proposal.review_items))
    if proposal.record is not None:
        body = replace(
            body,
            record=proposal.record,
            not_imported=tuple(proposal.not_imported),
            skipped=dict(proposal.skipped),
        )
    return body.to_json()


def save(layout: Layout, key: str, proposal: Proposal) -> None:
    """Keep the refiner's own answer (before the excerpt check, which is re-run each time)."""
    body = _body(proposal)
    entry = {"key": key, "digest": sha256_hex(canonical_json(body)), "proposal": body}
    path = ensure_cache(layout) / FOLDER / f"{key}.json"
    fsio.write_atomic(path, canonical_json(entry), durable=False)


def load(layout: Layout, key: str) -> Proposal | None:
    """The kept proposal, or None when there is none or it does not check out."""
    try:
        entry = json.loads((layout.cache / FOLDER / f"{key}.json").read_bytes())
        body = entry["proposal"]
        if entry["key"] != key or entry["digest"] != sha256_hex(canonical_json(body)):
            return None
        return _proposal(body)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # a record's ValidationError is a ValueError: refined again


def _proposal(data: JsonValue) -> Proposal | None:
    """The proposal of a cache entry whose digest checked out (None: a unit no longer
    parses, as after a change of the unit format)."""
    body = _Body.from_json(data)
    units = []
    for cached in body.units:
        parsed = parse_unit(cached.markdown)
        if parsed.unit is None:
            return None
        units.append(ProposedUnit(parsed.unit, list(cached.excerpts)))
    return Proposal(
        units,
        list(body.review_items),
        record=body.record if isinstance(body.record, str) else None,
        not_imported=list(body.not_imported or ()),
        skipped=dict(body.skipped or {}),
    )
