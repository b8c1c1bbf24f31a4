"""The legacy manifest ``evidence/manifest.yaml``: which units and sources exist."""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_tool.archive.objects import HEX64
from evidence_tool.migrate.problems import FieldPath, Problem, field_name
from evidence_tool.migrate.reading import (
    LEGACY_MANIFEST,
    decode_text,
    load_yaml,
    read_bytes,
)
from evidence_tool.unit.yaml_strict import YamlDoc
from evidence_tool.workspace.layout import Layout


@dataclass(frozen=True)
class ManifestUnit:
    id: str
    path: str
    version: int
    line: int | None


@dataclass
class LegacyManifest:
    units: list[ManifestUnit] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # legacy source path -> hash


def read_manifest(layout: Layout) -> tuple[LegacyManifest, list[Problem]]:
    rel = LEGACY_MANIFEST
    data = read_bytes(layout, rel)
    if isinstance(data, str):
        return LegacyManifest(), [Problem(rel, "(file)", data)]
    try:
        text = decode_text(data)
    except ValueError as exc:
        return LegacyManifest(), [Problem(rel, "(file)", str(exc))]
    doc = load_yaml(text, rel, 0)
    if isinstance(doc, Problem):
        return LegacyManifest(), [doc]
    return _manifest_from(doc, rel)


def _manifest_from(doc: YamlDoc, rel: str) -> tuple[LegacyManifest, list[Problem]]:
    out, problems = LegacyManifest(), []

    def bad(path: FieldPath, reason: str) -> None:
        line, col = doc.mark(path) if path in doc.marks else doc.mark(path[:1])
        problems.append(Problem(rel, field_name(path), reason, None, line, col))

    value = doc.value
    if not isinstance(value, dict):
        bad((), "the manifest must be a mapping with manifest_version, units and sources")
        return out, problems
    for key in sorted(set(value) - {"manifest_version", "units", "sources"}, key=str):
        bad((key,), "unknown key in a legacy manifest")
    if value.get("manifest_version") != 1 or isinstance(value.get("manifest_version"), bool):
        bad(("manifest_version",), "must be 1, the only legacy manifest version")
    units = value.get("units")
    if not isinstance(units, list):
        bad(("units",), "must be a list of {id, path, version} entries")
        units = []
    for i, entry in enumerate(units):
        if not isinstance(entry, dict) or set(entry) != {"id", "path", "version"}:
            bad(("units", i), "each unit entry has exactly the keys id, path and version")
            continue
        uid, path, version = entry["id"], entry["path"], entry["version"]
        if not isinstance(uid, str) or not isinstance(path, str):
            bad(("units", i), "id and path must be strings")
        elif type(version) is not int or version not in (1, 2, 3):
            bad(("units", i, "version"), f"{version!r} is not a legacy unit version (1, 2 or 3)")
        else:
            out.units.append(ManifestUnit(uid, path, version, doc.mark(("units", i))[0]))
    sources = value.get("sources", [])
    if not isinstance(sources, list):
        bad(("sources",), "must be a list of {path, hash} entries")
        sources = []
    for i, entry in enumerate(sources):
        if not isinstance(entry, dict) or set(entry) != {"path", "hash"}:
            bad(("sources", i), "each source entry has exactly the keys path and hash")
        elif not isinstance(entry["path"], str) or not (
            isinstance(entry["hash"], str) and HEX64.fullmatch(entry["hash"])
        ):
            bad(("sources", i), "path must be a string and hash 64 lowercase hex digits")
        elif entry["path"] in out.sources:
            bad(("sources", i, "path"), f"{entry['path']} is listed twice")
        else:
            out.sources[entry["path"]] = entry["hash"]
    return out, problems
