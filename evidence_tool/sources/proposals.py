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
from typing import Any

from evidence_tool import __version__, fsio
from evidence_tool.sources.document import Acquired
from evidence_tool.sources.refiner import Proposal, ProposedUnit
from evidence_tool.unit import parse_unit, render, sha256_hex
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

FOLDER = "proposals"


def key_of(doc: Acquired, language: str, refiner: dict[str, Any]) -> str:
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


def _body(proposal: Proposal) -> dict[str, Any]:
    body: dict[str, Any] = {
        "units": [{"markdown": render(pu.unit), "excerpts": pu.excerpts} for pu in proposal.units],
        "review_items": proposal.review_items,
    }
    if proposal.record is not None:  # an import's: its record and comparison extras
        body |= {
            "record": proposal.record,
            "not_imported": proposal.not_imported,
            "skipped": proposal.skipped,
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
        units = []
        for item in body["units"]:
            parsed = parse_unit(item["markdown"])
            if parsed.unit is None:
                return None
            units.append(ProposedUnit(parsed.unit, list(item["excerpts"])))
        return Proposal(
            units,
            [dict(i) for i in body["review_items"]],
            record=body.get("record"),
            not_imported=[dict(n) for n in body.get("not_imported", [])],
            skipped=dict(body.get("skipped", {})),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
