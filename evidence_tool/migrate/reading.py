"""Reading legacy files safely: inside the workspace, bounded, UTF-8, strict YAML 1.2."""

from __future__ import annotations

import os

from evidence_tool.migrate.problems import Problem
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
