"""Snapshot manifests: canonical JSON, the revision, and the YAML mirror ``local-manifest.yaml``.

A manifest names no revision of its own; its revision is the sha256 of its
canonical JSON, so consolidating unchanged files yields the same revision.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evidence_tool.unit.hashing import canonical_json, sha256_hex
from evidence_tool.unit.yaml_strict import dump, load

FORMAT = 1
# Lists that read better in flow style in the YAML mirror, as SPEC.md 5 shows.
_FLOW_KEYS = frozenset({"excerpts", "suppressed_sources"})


def empty_manifest() -> dict[str, Any]:
    return {"format": FORMAT, "units": [], "deletions": [], "suppressed_sources": [], "sources": []}


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return canonical_json(manifest)


def revision_of(manifest: dict[str, Any]) -> str:
    return sha256_hex(manifest_bytes(manifest))


def parse_manifest(data: bytes) -> dict[str, Any]:
    value = json.loads(data)
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ValueError("not a snapshot manifest of format 1")
    return value


# Key order of the YAML mirror, for people reading it in a diff (JSON manifests sort keys).
_ORDER = (
    "id",
    "path",
    "kind",
    "content_hash",
    "file_hash",
    "provenance",
    "review_items",
    "curator",
    "declared_at",
    "actor",
    "source_id",
    "source_path",
    "source_hash",
    "excerpts",
    "original",
    "code",
    "message",
    "raised_by",
    "raised_at",
    "deleted_at",
    "last_revision",
    "reason",
    "last_content_hash",
    "blob",
)


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (_ORDER.index(k) if k in _ORDER else len(_ORDER), k))
        return {k: _ordered(value[k]) for k in keys}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def render_local_manifest(manifest: dict[str, Any], revision: str) -> bytes:
    """``local-manifest.yaml``: the manifest plus its revision, sorted by id, for Git review."""
    doc = {"format": FORMAT, "revision": revision}
    for key in ("units", "deletions", "suppressed_sources", "sources"):
        doc[key] = _ordered(manifest.get(key, []))
    header = (
        "# Derived by evidence-tool from snapshot " + revision + ".\n"
        "# Do not edit: 'tht workspace evidence verify' fails on hand edits.\n"
    )
    return (header + dump(doc, flow_keys=_FLOW_KEYS)).encode("utf-8")


def load_local_manifest(data: bytes) -> tuple[str, dict[str, Any]]:
    """(revision, manifest) from ``local-manifest.yaml`` bytes."""
    value = load(data.decode("utf-8")).value
    if not isinstance(value, dict) or "revision" not in value:
        raise ValueError("local-manifest.yaml has no revision")
    revision = value.pop("revision")
    return revision, value


@dataclass(frozen=True)
class UnitEntry:
    """A read-only view of one unit entry of a manifest."""

    raw: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def path(self) -> str:
        return str(self.raw["path"])

    @property
    def content_hash(self) -> str:
        return str(self.raw["content_hash"])

    @property
    def file_hash(self) -> str:
        return str(self.raw["file_hash"])

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self.raw["provenance"])

    @property
    def review_items(self) -> list[dict[str, Any]]:
        return list(self.raw.get("review_items", []))
