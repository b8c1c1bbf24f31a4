"""The descriptor's ``evidence.sources`` entries (workspace.yaml), as the adapters read them.

The descriptor is checked against its schema when it is loaded; here each entry meets
JSON once and becomes a ``SourceSpec``, so an adapter reads typed fields, not keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evidence_tool.jsonvalue import JsonObject, JsonValue


def _text(value: JsonValue, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _maybe(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One entry; fields a kind does not use keep their defaults."""

    index: int  # its place in evidence.sources: messages name it
    kind: str  # http | s3 | import (filesystem sources need no entry)
    url: str = ""
    safe_query_params: tuple[str, ...] = ()
    bucket: str = ""
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    format: str = ""
    path: str = ""
    # An importer's options as written (a JSON boundary: each importer checks its own).
    options: JsonObject = field(default_factory=dict)
    language: str | None = None
    title: str | None = None

    @property
    def key(self) -> str:
        return f"evidence.sources[{self.index}]"

    @classmethod
    def from_json(cls, index: int, value: Mapping[str, JsonValue]) -> SourceSpec:
        params = value.get("safe_query_params")
        options = value.get("options")
        return cls(
            index,
            _text(value.get("kind")),
            url=_text(value.get("url")),
            safe_query_params=tuple(_text(p) for p in params) if isinstance(params, list) else (),
            bucket=_text(value.get("bucket")),
            prefix=_text(value.get("prefix")),
            endpoint_url=_maybe(value.get("endpoint_url")),
            region=_maybe(value.get("region")),
            format=_text(value.get("format")),
            path=_text(value.get("path")),
            options=dict(options) if isinstance(options, dict) else {},
            language=_maybe(value.get("language")),
            title=_maybe(value.get("title")),
        )


def specs_of(entries: Iterable[Mapping[str, JsonValue]]) -> list[SourceSpec]:
    """Every entry of ``evidence.sources``, in order."""
    return [SourceSpec.from_json(n, e) for n, e in enumerate(entries)]
