"""The descriptor's ``evidence.sources`` entries (workspace.yaml), as the adapters read them.

The descriptor is checked against its schema when it is loaded; here each entry meets
JSON once and becomes a ``SourceSpec``, so an adapter reads typed fields, not keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonValue
from evidence_tool.record import AnyObject, Record, field, field_of

KEY = "evidence.sources"


class SourceSpec(Record, frozen=True):
    """One entry; fields a kind does not use keep their defaults."""

    index: int  # its place in evidence.sources: messages name it
    kind: str = ""  # http | s3 | import (filesystem sources need no entry)
    url: str = ""
    safe_query_params: tuple[str, ...] = ()
    bucket: str = ""
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    format: str = ""
    path: str = ""
    # An importer's options as written (a JSON boundary: each importer checks its own).
    options: AnyObject = field(default_factory=dict)
    language: str | None = None
    title: str | None = None

    @property
    def key(self) -> str:
        return f"{KEY}[{self.index}]"


def specs_of(entries: Iterable[Mapping[str, JsonValue]]) -> list[SourceSpec]:
    """Every entry of ``evidence.sources``, in order (the descriptor's schema checked
    their shapes)."""
    return [
        field_of(SourceSpec, {f"{KEY}[{n}]": {**e, "index": n}}, f"{KEY}[{n}]", DescriptorError)
        for n, e in enumerate(entries)
    ]
