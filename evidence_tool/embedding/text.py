"""The text of a unit that an embedder sees: title, payload fields, applies_to."""

from __future__ import annotations

from collections.abc import Iterable

from evidence_tool.jsonvalue import JsonObject, JsonValue


def flatten(value: JsonValue) -> Iterable[str]:
    """Every string inside ``value`` (dicts by value, lists in order)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from flatten(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from flatten(v)


# JSON boundary: the unit record as the search index stores it (json.loads of its row).
def unit_text(record: JsonObject) -> str:
    """One text per unit; every part of it is covered by the unit's content hash."""
    metadata = record["metadata"]
    applies_to = metadata.get("applies_to", {}) if isinstance(metadata, dict) else {}
    return "\n".join([str(record["title"]), *flatten(record["payload"]), *flatten(applies_to)])
