"""The text of a unit that an embedder sees: title, payload fields, applies_to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def flatten(value: Any) -> Iterable[str]:
    """Every string inside ``value`` (dicts by value, lists in order)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from flatten(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from flatten(v)


def unit_text(record: dict[str, Any]) -> str:
    """One text per unit; every part of it is covered by the unit's content hash."""
    return "\n".join(
        [
            record["title"],
            *flatten(record["payload"]),
            *flatten(record["metadata"].get("applies_to", {})),
        ]
    )
