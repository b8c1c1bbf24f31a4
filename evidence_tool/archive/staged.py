"""``.local/staged.json``: what an operation decided for the next consolidation.

Declarations staged by ``decide replace`` or ``save`` (bound to the exact
content hash they describe), review items raised since the last snapshot,
resolutions, restorations and retirements.  Merging is idempotent, so replaying
a journal or re-running an interrupted consolidation reaches the same state.

The file's object stays a JSON object (it is merged section by section, key by
key, and journaled as such); its keys are read only through the accessors here.
"""

from __future__ import annotations

import json
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.errors import IntegrityError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit.hashing import canonical_json

SECTIONS = ("declarations", "review_items", "resolutions", "restorations", "retirements")


def empty() -> JsonObject:
    return {"format": 1, **{s: {} for s in SECTIONS}}


def section(staged: JsonObject, name: str) -> JsonObject:
    """One section (unit id -> value); a missing or malformed one reads as empty."""
    value = staged.get(name)
    return value if isinstance(value, dict) else {}


def _bound(record: JsonValue, content_hash: str | None) -> JsonObject | None:
    """A staged record's provenance, if the record describes exactly ``content_hash``."""
    if not isinstance(record, dict) or record.get("content_hash") != content_hash:
        return None
    provenance = record.get("provenance")
    return provenance if isinstance(provenance, dict) else None


def declared_ids(staged: JsonObject) -> list[str]:
    """Units with a staged declaration (from 'decide replace' or 'save')."""
    return list(section(staged, "declarations"))


def declaration_for(staged: JsonObject, uid: str, content_hash: str | None) -> JsonObject | None:
    """The staged declaration of ``uid`` if it was staged for this very content."""
    return _bound(section(staged, "declarations").get(uid), content_hash)


def restoration(staged: JsonObject, uid: str) -> JsonObject | None:
    """The restore staged for ``uid``: its last content hash and provenance, or None."""
    value = section(staged, "restorations").get(uid)
    return value if isinstance(value, dict) else None


def restored_provenance(record: JsonObject, content_hash: str | None) -> JsonObject | None:
    """The restored unit's declaration, if its content is what was deleted."""
    return _bound(record, content_hash)


def raised_items(staged: JsonObject, uid: str) -> list[JsonObject]:
    """Review items raised on ``uid`` since the last snapshot."""
    items = section(staged, "review_items").get(uid)
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def is_retiring(staged: JsonObject, uid: str) -> bool:
    """Whether a retirement of ``uid`` is staged (a remove or 'decide replace')."""
    return uid in section(staged, "retirements")


def retirement(staged: JsonObject, uid: str) -> tuple[str | None, str | None]:
    """(actor, reason) of a staged retirement of ``uid`` ('decide replace'), else Nones."""
    value = section(staged, "retirements").get(uid)
    if not isinstance(value, dict):
        return None, None
    actor, reason = value.get("actor"), value.get("reason")
    return (
        actor if isinstance(actor, str) else None,
        reason if isinstance(reason, str) else None,
    )


def resolution(staged: JsonObject, uid: str) -> tuple[set[tuple[str, ...]], str | None] | None:
    """The items resolved on ``uid`` (by their keys) and the note, or None."""
    value = section(staged, "resolutions").get(uid)
    if not isinstance(value, dict):
        return None
    items = value.get("items")
    keys = {
        tuple(str(part) for part in k)
        for k in (items if isinstance(items, list) else [])
        if isinstance(k, list)
    }
    note = value.get("note")
    return keys, note if isinstance(note, str) else None


# Staged changes, built here so that no other module spells staged.json's keys.


def declaration_change(uid: str, content_hash: str, provenance: JsonObject) -> JsonObject:
    """Stage ``provenance`` for ``uid``, bound to the exact content it describes."""
    return {"declarations": {uid: {"content_hash": content_hash, "provenance": provenance}}}


def restoration_change(
    uid: str, content_hash: str, provenance: JsonObject, revision: str
) -> JsonObject:
    """Stage the restore of ``uid`` from snapshot ``revision``; any retirement is undone."""
    record: JsonObject = {
        "content_hash": content_hash,
        "provenance": provenance,
        "revision": revision,
    }
    return {"restorations": {uid: record}, "retirements": {uid: None}}


def retirement_change(uid: str, reason: str, actor: str) -> JsonObject:
    """Stage the deletion record's reason and actor for ``uid`` leaving the tree."""
    return {"retirements": {uid: {"reason": reason, "actor": actor}}}


def resolution_change(
    uid: str, note: str, actor: str, at: str, keys: list[tuple[str, str, str]]
) -> JsonObject:
    """Stage the resolution of ``uid``'s review items (by their keys) with a note."""
    items: list[JsonValue] = [list[JsonValue](k) for k in keys]
    return {"resolutions": {uid: {"note": note, "actor": actor, "at": at, "items": items}}}


def read(path: Path) -> JsonObject:
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
    # valid JSON of another shape is as damaged as invalid JSON: reading it as empty
    # would drop what an operation staged for the next consolidation
    if not isinstance(value, dict):
        where = "it is not a JSON object"
    else:
        bad = [s for s in SECTIONS if not isinstance(value.get(s, {}), dict)]
        where = f"its {bad[0]!r} is not an object" if bad else ""
    if where:
        raise IntegrityError(
            f"staged.json is damaged ({where}); restore it from Git", path=str(path)
        )
    out = empty()
    for s in SECTIONS:
        out[s] = dict(value.get(s, {}))
    return out


def merge(staged: JsonObject, change: JsonObject) -> JsonObject:
    """Apply a staged change: per section, per unit id; review items are unioned."""
    out: JsonObject = {k: (dict(v) if isinstance(v, dict) else v) for k, v in staged.items()}
    for name in SECTIONS:
        target = out.setdefault(name, {})
        assert isinstance(target, dict)  # copied above, or created here
        for uid, value in section(change, name).items():
            if name == "review_items":
                items: list[JsonValue] = list(raised_items(out, uid))
                for item in value if isinstance(value, list) else []:
                    if item not in items:
                        items.append(item)
                target[uid] = items
            elif value is None:
                target.pop(uid, None)
            else:
                target[uid] = value
    return out


def is_empty(staged: JsonObject) -> bool:
    return not any(staged.get(s) for s in SECTIONS)


def write(path: Path, staged: JsonObject) -> None:
    if is_empty(staged):
        if path.exists():  # an absent file is already empty: a no-op run writes nothing
            fsio.unlink(path)
    else:
        fsio.write_atomic(path, canonical_json(staged) + b"\n")
