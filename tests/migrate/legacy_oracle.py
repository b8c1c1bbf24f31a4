"""An independent reader of the legacy formats, written from docs/legacy-formats.md.

It shares no code with ``evidence_tool.migrate``: ruamel.yaml's own safe loader
(YAML 1.2), stdlib base64 and json.  Tests compare what migration wrote against
what this reader says the legacy data means.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

# Markdown-valued fields: a trailing line break is not part of the value.
TEXT_FIELDS = {
    "rule",
    "definition",
    "question",
    "interpretation",
    "input",
    "output",
    "sql",
    "description",
}
LIST_FIELDS = {"synonyms", "variants", "tables", "columns"}


def _yaml(text: str) -> Any:
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    return yaml.load(text)


def read_manifest(root: Path) -> dict[str, Any]:
    return _yaml((root / "evidence" / "manifest.yaml").read_text(encoding="utf-8"))


def read_stored(root: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """The unit's data as stored: v1 the whole file, v2/v3 the frontmatter (v3 metadata decoded)."""
    text = (root / entry["path"]).read_text(encoding="utf-8").replace("\r\n", "\n")
    if entry["version"] == 1:
        data = _yaml(text)
    else:
        assert text.startswith("---\n")
        data = _yaml(text[4 : text.index("\n---\n", 3) + 1])
    if entry["version"] == 3:
        meta = json.loads(base64.b64decode(data.pop("metadata"), validate=True))
        data.update(meta)
    return data


def stored_content_hash(data: dict[str, Any]) -> str:
    meta = {k: data[k] for k in ("id", "kind", "language", "purposes", "applies_to") if k in data}
    doc = {"metadata": meta, "title": data["title"], "payload": data["payload"]}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def typed(data: dict[str, Any]) -> dict[str, Any]:
    """The typed content the legacy data means, in v4's canonical JSON shape."""
    applies = {k: list(v) for k, v in (data.get("applies_to") or {}).items() if v}
    metadata = {
        "schema_version": 4,
        "id": data["id"],
        "kind": data["kind"],
        "language": data["language"],
        "purposes": list(data["purposes"]),
    }
    if applies:
        metadata["applies_to"] = applies
    payload: dict[str, Any] = {}
    for name, value in data["payload"].items():
        if name == "values":
            payload[name] = [
                {"value": v["value"], "meaning": v.get("meaning", "").rstrip("\n")} for v in value
            ]
        elif name in TEXT_FIELDS:
            payload[name] = value.rstrip("\n")
        else:
            payload[name] = value
    for name in LIST_FIELDS:
        if name in _list_fields(data["kind"]):
            payload.setdefault(name, [])
    return {"metadata": metadata, "title": data["title"], "payload": payload}


def _list_fields(kind: str) -> set[str]:
    return {
        "glossary": {"synonyms", "variants"},
        "mapping": {"tables", "columns"},
        "formula": {"columns"},
    }.get(kind, set())


def legacy_units(root: Path) -> dict[str, dict[str, Any]]:
    """id -> {entry, stored, typed, provenance, review_items, name}."""
    out = {}
    for entry in read_manifest(root)["units"]:
        stored = read_stored(root, entry)
        out[entry["id"]] = {
            "entry": entry,
            "stored": stored,
            "typed": typed(stored),
            "provenance": stored.get("provenance"),
            "review_items": stored.get("review_items") or [],
            "name": Path(entry["path"]).stem,
        }
    return out
