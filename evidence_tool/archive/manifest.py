"""Snapshot manifests: canonical JSON, the revision, and the YAML mirror ``local-manifest.yaml``.

A manifest names no revision of its own; its revision is the sha256 of its
canonical JSON, so consolidating unchanged files yields the same revision.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evidence_tool.unit.hashing import canonical_json, sha256_hex
from evidence_tool.unit.yaml_strict import dump, load, scalar

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


_RANK = {k: i for i, k in enumerate(_ORDER)}
_ORDER_CACHE: dict[tuple[str, ...], list[str]] = {}


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        keys = tuple(value)
        order = _ORDER_CACHE.get(keys)
        if order is None:  # entries share a handful of key sets: sort each set once
            order = sorted(keys, key=lambda k: (_RANK.get(k, len(_ORDER)), k))
            _ORDER_CACHE[keys] = order
        return {k: _ordered(value[k]) for k in order}
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


# A sha256 hex digest is a plain YAML scalar unless it reads as a number (all digits,
# digits with one exponent, a YAML 1.1 binary): then the general emitter quotes it.
_PLAIN_HEX = re.compile(r"(?![0-9]+(?:[eE][0-9]+)?$|0b[01]+$)[0-9a-f]{64}")
_MANUAL_UNIT = {"id", "path", "kind", "content_hash", "file_hash", "provenance", "review_items"}
_MANUAL_DECL = {"kind", "curator", "declared_at"}
_STRINGS = ("id", "path", "kind", "content_hash", "file_hash")


# Valid ids and curated paths are always plain (they start with 'e' and hold no indicator).
_PLAIN_ID = re.compile(r"evidence:[a-z0-9._-]+(?::[a-z0-9._-]+)*")
_PLAIN_PATH = re.compile(r"evidence/curated/[a-z]+/[a-z0-9][a-z0-9._-]*\.md")


def _hex(value: str) -> str:
    return value if _PLAIN_HEX.fullmatch(value) else scalar(value)


def _fast_unit(e: dict[str, Any], memo: dict[str, str]) -> str | None:
    """The common entry (a manual declaration, no review items) without the general emitter:
    the same bytes ``dump`` writes, at a fraction of the cost for 10,000-unit manifests."""
    p = e.get("provenance")
    if (
        e.keys() != _MANUAL_UNIT
        or e["review_items"]
        or not isinstance(p, dict)
        or p.keys() != _MANUAL_DECL
        or p["kind"] != "manual"
    ):
        return None
    if (
        not all(type(e[k]) is str for k in _STRINGS)
        or type(p["curator"]) is not str
        or type(p["declared_at"]) is not str
    ):
        return None

    def m(value: str) -> str:
        out = memo.get(value)
        if out is None:
            out = memo[value] = scalar(value)
        return out

    uid = e["id"] if _PLAIN_ID.fullmatch(e["id"]) else scalar(e["id"])
    path = e["path"] if _PLAIN_PATH.fullmatch(e["path"]) else scalar(e["path"])
    return (
        f"- id: {uid}\n  path: {path}\n  kind: {m(e['kind'])}\n"
        f"  content_hash: {_hex(e['content_hash'])}\n  file_hash: {_hex(e['file_hash'])}\n"
        f"  provenance:\n    kind: manual\n    curator: {m(p['curator'])}\n"
        f"    declared_at: {m(p['declared_at'])}\n  review_items: []\n"
    )


@dataclass(frozen=True)
class PreviousYaml:
    """The local-manifest.yaml written last time, known (by its hash) to be exactly what
    was rendered for ``entries``: the blocks of entries that did not change are reused."""

    text: str
    entries: dict[str, dict[str, Any]]  # id -> the entry object that block was rendered from

    def blocks(self) -> dict[str, str]:
        start = self.text.find("\nunits:\n- id: ")
        end = self.text.find("\ndeletions:", start)
        if start < 0 or end < 0:
            return {}
        out = {}
        for chunk in self.text[start + len("\nunits:\n- id: ") : end + 1].split("\n- id: "):
            uid, _, _ = chunk.partition("\n")
            out[uid] = "- id: " + (chunk if chunk.endswith("\n") else chunk + "\n")
        return out


def _units_yaml(units: list[dict[str, Any]], previous: PreviousYaml | None = None) -> str:
    if not units:
        return "units: []\n"
    memo: dict[str, str] = {}
    old = previous.blocks() if previous else {}
    before = previous.entries if previous else {}
    parts = ["units:\n"]
    for e in units:
        block = old.get(e["id"]) if before.get(e["id"]) is e else None
        if block is None:
            block = _fast_unit(e, memo) or dump([_ordered(e)], flow_keys=_FLOW_KEYS)
        parts.append(block)
    return "".join(parts)


def render_local_manifest(
    manifest: dict[str, Any], revision: str, previous: PreviousYaml | None = None
) -> bytes:
    """``local-manifest.yaml``: the manifest plus its revision, sorted by id, for Git review."""
    head = dump({"format": FORMAT, "revision": revision})
    tail = {
        key: _ordered(manifest.get(key, []))
        for key in ("deletions", "suppressed_sources", "sources")
    }
    header = (
        "# Derived by evidence-tool from snapshot " + revision + ".\n"
        "# Do not edit: 'tht workspace evidence verify' fails on hand edits.\n"
    )
    body = (
        head + _units_yaml(manifest.get("units", []), previous) + dump(tail, flow_keys=_FLOW_KEYS)
    )
    return (header + body).encode("utf-8")


def render_local_manifest_generic(manifest: dict[str, Any], revision: str) -> bytes:
    """The same document through the general emitter only (the fast path's reference)."""
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
