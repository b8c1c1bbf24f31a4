"""``.local/staged.json``: what an operation decided for the next consolidation.

Declarations staged by ``decide replace`` or ``save`` (bound to the exact
content hash they describe), review items raised since the last snapshot,
resolutions, restorations and retirements.  Merging is idempotent, so replaying
a journal or re-running an interrupted consolidation reaches the same state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evidence_tool import fsio
from evidence_tool.errors import IntegrityError
from evidence_tool.unit.hashing import canonical_json

SECTIONS = ("declarations", "review_items", "resolutions", "restorations", "retirements")


def empty() -> dict[str, Any]:
    return {"format": 1, **{s: {} for s in SECTIONS}}


def read(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return empty()
    try:
        value = json.loads(data)
    except ValueError:
        raise IntegrityError(
            "staged.json is not valid JSON; restore it from Git", path=str(path)
        ) from None
    out = empty()
    for s in SECTIONS:
        out[s] = dict(value.get(s, {}))
    return out


def merge(staged: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """Apply a staged change: per section, per unit id; review items are unioned."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in staged.items()}
    for section in SECTIONS:
        for uid, value in change.get(section, {}).items():
            if section == "review_items":
                items = list(out[section].get(uid, []))
                for item in value:
                    if item not in items:
                        items.append(item)
                out[section][uid] = items
            elif value is None:
                out[section].pop(uid, None)
            else:
                out[section][uid] = value
    return out


def is_empty(staged: dict[str, Any]) -> bool:
    return not any(staged.get(s) for s in SECTIONS)


def write(path: Path, staged: dict[str, Any]) -> None:
    if is_empty(staged):
        if path.exists():  # an absent file is already empty: a no-op run writes nothing
            fsio.unlink(path)
    else:
        fsio.write_atomic(path, canonical_json(staged) + b"\n")
