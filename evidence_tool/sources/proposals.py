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

from evidence_tool import __version__, fsio
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.sources.document import Acquired
from evidence_tool.sources.records import NotImportedItem, RecordError, ReviewItem
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


def _body(proposal: Proposal) -> JsonObject:
    """The proposal as the cache entry holds it (a JSON boundary: the cache file)."""
    body: JsonObject = {
        "units": [
            # An import's unit already holds its canonical text: not rendered a second time.
            {
                "markdown": pu.markdown if pu.markdown is not None else render(pu.unit),
                "excerpts": list(pu.excerpts),
            }
            for pu in proposal.units
        ],
        "review_items": [i.to_json() for i in proposal.review_items],
    }
    if proposal.record is not None:  # an import's: its record and comparison extras
        body |= {
            "record": proposal.record,
            "not_imported": [n.to_json() for n in proposal.not_imported],
            "skipped": dict(proposal.skipped),
        }
    return body


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
        return None  # RecordError is a ValueError: a hand-edited entry is refined again


def _proposal(body: JsonValue) -> Proposal | None:
    """The proposal of a cache entry whose digest checked out (None: a unit no longer
    parses, as after a change of the unit format)."""
    if not isinstance(body, dict):
        raise RecordError("the proposal is not an object")
    units = []
    for item in _items(body, "units"):
        markdown, excerpts = item["markdown"], item["excerpts"]
        if not isinstance(markdown, str) or not isinstance(excerpts, list):
            raise RecordError("a cached unit is malformed")
        parsed = parse_unit(markdown)
        if parsed.unit is None:
            return None
        units.append(ProposedUnit(parsed.unit, [str(e) for e in excerpts]))
    record = body.get("record")
    skipped = body.get("skipped", {})
    if not isinstance(skipped, dict):
        raise RecordError("'skipped' is not an object")
    return Proposal(
        units,
        [ReviewItem.from_json(i) for i in _items(body, "review_items")],
        record=record if isinstance(record, str) else None,
        not_imported=[NotImportedItem.from_json(n) for n in _items(body, "not_imported")],
        skipped={k: int(str(v)) for k, v in skipped.items()},
    )


def _items(body: JsonObject, key: str) -> list[JsonObject]:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise RecordError(f"{key!r} is not a list of objects")
    return [v for v in value if isinstance(v, dict)]
