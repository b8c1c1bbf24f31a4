"""Legacy unit files v1, v2, v3 (docs/legacy-formats.md), as stored.

Reading only checks the shape of each file (keys, versions, encodings); what
the values mean and whether v4 can hold them is ``convert``'s job.  Every problem is collected, none
raised, so one run reports them all.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.migrate.reading import (
    UNITS_DIR,
    FieldPath,
    ManifestUnit,
    Problem,
    decode_text,
    field_name,
    load_yaml,
    read_bytes,
)
from evidence_tool.unit.parse import split_frontmatter
from evidence_tool.unit.yaml_strict import YamlDoc
from evidence_tool.workspace.layout import Layout

_UNIT_PATH = re.compile(r"evidence/units/([a-z]+)/([a-z0-9][a-z0-9._-]*)\.(yaml|md)")

METADATA_KEYS = ("id", "kind", "language", "purposes", "applies_to")
# Top-level keys of each version's data (v1: the file, v2/v3: the frontmatter).
REQUIRED_KEYS: dict[int, tuple[str, ...]] = {
    1: ("schema_version", "id", "kind", "language", "purposes", "title", "payload"),
    2: ("schema_version", "id", "kind", "language", "purposes", "title", "payload", "content_hash"),
    3: ("schema_version", "metadata", "title", "payload", "content_hash"),
}
OPTIONAL_KEYS: dict[int, tuple[str, ...]] = {
    1: ("applies_to",),
    2: ("applies_to",),
    3: ("provenance", "review_items"),
}
V3_METADATA_REQUIRED = ("id", "kind", "language", "purposes")


def _bad(
    entry: ManifestUnit, fld: str, reason: str, line: int | None = None, col: int | None = None
) -> list[Problem]:
    """A problem of the file being read, as the one-item list ``read_unit`` returns."""
    return [Problem(entry.path, fld, reason, entry.id, line, col)]


@dataclass
class LegacyUnit:
    """One legacy unit file as stored: typed content still raw, with key positions."""

    entry: ManifestUnit
    version: int
    path: str
    name: str
    data: bytes
    doc: YamlDoc
    # The file's values as read (YAML/JSON): convert.py and provenance.py narrow them.
    metadata: JsonObject
    title: JsonValue
    payload: JsonValue
    content_hash: JsonValue = None
    provenance: JsonValue = None
    review_items: JsonValue = None

    @property
    def id(self) -> str:
        value = self.metadata.get("id")
        return value if isinstance(value, str) else self.entry.id

    def problem(self, path: FieldPath, reason: str) -> Problem:
        """A Problem at ``path`` in the legacy data, positioned at its key's line."""
        probe = path
        if self.version == 3 and path[:1] and path[0] in METADATA_KEYS:
            probe = ("metadata",)  # v3 metadata lives inside one base64 string
        while probe and probe not in self.doc.marks:
            probe = probe[:-1]
        line, col = self.doc.mark(probe)
        return Problem(self.path, field_name(path), reason, self.id, line, col)


def read_unit(layout: Layout, entry: ManifestUnit) -> LegacyUnit | list[Problem]:
    """Read the file a manifest entry names, checking its layout and its version's keys."""
    rel = entry.path
    shape = _UNIT_PATH.fullmatch(rel)
    ext = "yaml" if entry.version == 1 else "md"
    if shape is None or shape.group(3) != ext:
        return _bad(
            entry,
            "path",
            f"a v{entry.version} unit lives at {UNITS_DIR}/<kind>/<name>.{ext} with <name> "
            "matching [a-z0-9][a-z0-9._-]*",
        )
    read = _read_doc(layout, entry)
    if isinstance(read, list):
        return read
    data, doc = read
    value = doc.value
    if not isinstance(value, dict):
        return _bad(entry, "(file)", "the unit's data must be a YAML mapping", 1, 1)
    problems = _check_keys(value, doc, entry)
    if problems:
        return problems
    metadata = _metadata(value, doc, entry)
    if isinstance(metadata, list):
        return metadata
    return LegacyUnit(
        entry,
        entry.version,
        rel,
        shape.group(2),
        data,
        doc,
        metadata,
        value["title"],
        value["payload"],
        value.get("content_hash"),
        value.get("provenance"),
        value.get("review_items"),
    )


def _read_doc(layout: Layout, entry: ManifestUnit) -> tuple[bytes, YamlDoc] | list[Problem]:
    """The file's bytes and its YAML (v1: the file, v2/v3: the frontmatter)."""
    rel = entry.path
    data = read_bytes(layout, rel)
    if isinstance(data, str):
        return _bad(entry, "path", data)
    try:
        text = decode_text(data)
    except ValueError as exc:
        return _bad(entry, "(file)", str(exc))
    if entry.version == 1:
        doc = load_yaml(text, rel, 0)
    else:
        split = split_frontmatter(text)
        if not isinstance(split, tuple):
            reason = "a v2/v3 unit starts with '---' frontmatter closed by '---'"
            return _bad(entry, "(file)", reason, 1, 1)
        doc = load_yaml(split[0], rel, 1)
    if isinstance(doc, Problem):
        return [Problem(rel, doc.field, doc.reason, entry.id, doc.line, doc.column)]
    return data, doc


def _metadata(
    value: dict[str, Any], doc: YamlDoc, entry: ManifestUnit
) -> JsonObject | list[Problem]:
    """v3 keeps the metadata encoded under one key; v1/v2 at the top level."""
    if entry.version != 3:
        return {k: value[k] for k in METADATA_KEYS if k in value}
    decoded = decode_metadata(value["metadata"])
    if isinstance(decoded, str):
        return _bad(entry, "metadata", decoded, *doc.mark(("metadata",)))
    return decoded


def _check_keys(value: dict[Any, Any], doc: YamlDoc, entry: ManifestUnit) -> list[Problem]:
    version = value.get("schema_version")
    if type(version) is not int or version != entry.version:
        return _bad(
            entry,
            "schema_version",
            f"the manifest lists this unit as version {entry.version} but the file "
            f"says schema_version {version!r}",
            *doc.mark(("schema_version",)),
        )
    allowed = REQUIRED_KEYS[version] + OPTIONAL_KEYS[version]
    out: list[Problem] = []
    for key in value:
        if key not in allowed:
            out += _bad(
                entry,
                str(key),
                f"unknown to legacy v{version} units; v4 has no place for it "
                f"(keys: {', '.join(allowed)})",
                *doc.mark((key,)),
            )
    for key in REQUIRED_KEYS[version]:
        if key not in value:
            out += _bad(entry, key, f"required in a v{version} unit and missing", 1, 1)
    return out


def decode_metadata(value: JsonValue) -> JsonObject | str:
    """The v3 ``metadata`` string: standard base64 of the UTF-8 canonical JSON object."""
    if not isinstance(value, str):
        return "must be a base64 string"
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        return f"is not valid base64 ({exc}); the unit's id, kind and language are unreadable"
    try:
        text = raw.decode("utf-8")
        decoded = json.loads(text, object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:
        return f"decodes to bytes that are not a UTF-8 JSON object ({exc})"
    if not isinstance(decoded, dict):
        return "decodes to JSON that is not an object"
    unknown = sorted(set(decoded) - set(METADATA_KEYS))
    missing = [k for k in V3_METADATA_REQUIRED if k not in decoded]
    if unknown or missing:
        return (
            "decodes to an object with "
            + (f"unknown key(s) {', '.join(unknown)}" if unknown else "")
            + ("; " if unknown and missing else "")
            + (f"missing key(s) {', '.join(missing)}" if missing else "")
        )
    return decoded


def _no_duplicates(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    out: JsonObject = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key '{key}'")
        out[key] = value
    return out
