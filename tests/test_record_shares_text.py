"""``Record.to_json`` hands out the record's own strings, never copies of them: a refresh
holds every unit text of a source in records, and a serializer that copied them (an
encode and decode round trip did) doubled that memory (issue 28's dbt bench: 123 MiB
peak, 135 MiB with the copies).  Arrays come back as lists, nested records as objects."""

from __future__ import annotations

from typing import Any

from evidence_tool.record import Record


class _Part(Record, frozen=True):
    text: str


class _Whole(Record, frozen=True):
    body: str
    parts: tuple[_Part, ...]
    tags: tuple[str, ...] = ()


def test_to_json_shares_every_string_and_gives_lists() -> None:
    body = "".join(["the unit's text, ", "built at run time so that it is its own object"])
    part = "".join(["an excerpt ", "of it"])
    tag = "".join(["t", "ag"])
    out: Any = _Whole(body, (_Part(part),), (tag,)).to_json()
    assert out == {"body": body, "parts": [{"text": part}], "tags": [tag]}
    assert out["body"] is body
    assert out["parts"][0]["text"] is part
    assert out["tags"][0] is tag
    assert type(out["parts"]) is list and type(out["tags"]) is list
