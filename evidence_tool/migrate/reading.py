"""Reading legacy files safely (inside the workspace, bounded, UTF-8, strict YAML 1.2),
the legacy manifest ``evidence/manifest.yaml``, and the E160 findings they give.

Problems are data (collected for every unit before anything is written) and
become one ``LosslessConversionError`` carrying all of them: which legacy unit,
which field, and why v4 cannot hold it losslessly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from evidence_tool.archive.objects import HEX64
from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.jsonvalue import View
from evidence_tool.unit.yaml_strict import YamlDoc, YamlProblem, load
from evidence_tool.workspace.curated import read_regular
from evidence_tool.workspace.layout import Layout

LEGACY_MANIFEST = "evidence/manifest.yaml"
UNITS_DIR = "evidence/units"
SOURCE_DIR = "evidence/source"
MAX_LEGACY_BYTES = 4 * 1024 * 1024  # far above anything v4 can hold (256 KiB); stop reading there
BOM = b"\xef\xbb\xbf"


def has_legacy_manifest(root: str | os.PathLike[str]) -> bool:
    """True while the workspace still holds ``evidence/manifest.yaml`` (not yet migrated)."""
    return os.path.lexists(os.path.join(root, *LEGACY_MANIFEST.split("/")))


def read_bytes(layout: Layout, rel: str) -> bytes | str:
    """The file's bytes, or why they cannot be read (a reason for a Problem)."""
    try:
        path = layout.resolve_inside(rel)
    except ValueError as exc:
        return str(exc)
    if not layout.inside(path):
        return "the path leads outside the workspace (a symbolic link?)"
    try:
        data = read_regular(path, MAX_LEGACY_BYTES)
    except FileNotFoundError:
        return "the file does not exist"
    except OSError as exc:
        return f"the file cannot be read ({exc.strerror})"
    if data is None:
        return "not a regular file"
    if len(data) > MAX_LEGACY_BYTES:
        return f"the file is larger than {MAX_LEGACY_BYTES} bytes"
    return data


def decode_text(data: bytes, *, bom: bool = False) -> str:
    """UTF-8 text with CRLF read as LF; raises ValueError with a reason otherwise.  A legacy
    unit or manifest has no byte order mark; a source document's (``bom``) is dropped, as
    SPEC.md 6.1 normalizes a source's text."""
    if data.startswith(BOM):
        if not bom:
            raise ValueError("the file starts with a byte order mark (BOM); legacy files have none")
        data = data[len(BOM) :]
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the file is not UTF-8 (byte 0x{data[exc.start]:02x})") from None


def load_yaml(text: str, rel: str, line_offset: int) -> YamlDoc | Problem:
    try:
        doc = load(text, line_offset=line_offset)
    except YamlProblem as exc:
        return Problem(rel, "(file)", f"not valid YAML: {exc.message}", None, exc.line, exc.column)
    if doc.duplicates:
        d = doc.duplicates[0]
        return Problem(
            rel, "(file)", f"{d.message}: the legacy data is ambiguous", None, d.line, d.column
        )
    return doc


FieldPath = tuple[str | int, ...]  # keys and list indexes into the legacy data


def field_name(path: FieldPath) -> str:
    """``("payload", "synonyms", 1)`` -> ``payload.synonyms[1]``: how the legacy data names it."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(file)"


@dataclass(frozen=True)
class Problem(View):
    path: str  # workspace-relative legacy file (or the legacy manifest)
    field: str  # dotted path in the legacy data: title, payload.synonyms[1], provenance.excerpts[0]
    reason: str
    unit_id: str | None = None
    line: int | None = None
    column: int | None = None
    _keys = ("unit_id", "field", "reason", "path", "line")

    def diagnostic(self) -> Diagnostic:
        who = f"unit '{self.unit_id}'" if self.unit_id else self.path
        return Diagnostic(
            "E160",
            f"{who}, field '{self.field}': {self.reason}",
            self.path,
            self.line,
            self.column,
            self.unit_id,
        )


class LosslessConversionError(EvidenceError):
    """E160: at least one legacy unit cannot become v4 without losing or changing content."""

    code = "E160"

    def __init__(self, problems: list[Problem]) -> None:
        ordered = sorted(problems, key=lambda p: (p.path, p.line or 0, p.field, p.reason))
        self.problems = ordered
        first = ordered[0]
        super().__init__(
            f"{len(ordered)} legacy field(s) cannot be converted to v4 losslessly; "
            "nothing was written",
            code="E160",
            path=first.path,
            line=first.line,
            column=first.column,
            unit_id=first.unit_id,
            diagnostics=[p.diagnostic() for p in ordered],
            details={"result": {"problems": [p.to_json() for p in ordered]}},
        )


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
