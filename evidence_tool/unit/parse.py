"""Text -> typed unit, or every error found (with code, line and column); and ``validate``,
the same rules applied to a unit built in code."""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field, fields
from typing import Any

from evidence_tool.errors import Diagnostic, EvidenceWarning, InvalidFilesError
from evidence_tool.unit import fields as F
from evidence_tool.unit.body import parse_body
from evidence_tool.unit.conflicts import conflict_line
from evidence_tool.unit.identifiers import ID_RE, LANGUAGE_RE
from evidence_tool.unit.metadata import check_metadata
from evidence_tool.unit.model import (
    PAYLOAD_CLASSES,
    AppliesTo,
    EnumValue,
    Metadata,
    Unit,
)
from evidence_tool.unit.render import render
from evidence_tool.unit.yaml_strict import YamlProblem, load

MAX_BYTES = 256 * 1024


@dataclass
class ParseResult:
    unit: Unit | None
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    unit_id: str | None = None
    # File line of each top-level metadata key, for findings about a key (E108, E120).
    key_lines: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.unit is not None and not self.errors


def _decode(data: bytes) -> tuple[str | None, Diagnostic | None]:
    if len(data) > MAX_BYTES:
        return None, Diagnostic(
            "E109",
            f"the file has {len(data)} bytes; a unit holds at most "
            f"{MAX_BYTES} bytes (256 KiB): split it into several units",
        )
    if data.startswith(codecs.BOM_UTF8):
        return None, Diagnostic(
            "E109",
            "the file starts with a byte order mark (BOM); save it as UTF-8 without BOM",
            line=1,
            column=1,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        # Columns count characters, as everywhere else; the line up to the bad byte decodes.
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = len(data[line_start : exc.start].decode("utf-8")) + 1
        return None, Diagnostic(
            "E109",
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8",
            line=line,
            column=col,
        )
    return text, None


def _size_problem(text: str) -> Diagnostic | None:
    # The limit is on the file, so a str is measured as the UTF-8 bytes it would be written as.
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return Diagnostic("E109", f"the text is longer than {MAX_BYTES} bytes (256 KiB) in UTF-8")
    return None


def _text_problem(text: str) -> Diagnostic | None:
    line = conflict_line(text)
    if line is not None:
        return Diagnostic(
            "E119",
            f"line {line} is a Git conflict marker ('<<<<<<<'): a merge left both sides "
            "of an edit in the file; keep the text you want, delete the marker lines "
            "('<<<<<<<', '=======', '>>>>>>>'), then validate again",
            line=line,
            column=1,
        )
    if text.startswith("\ufeff"):
        return Diagnostic("E109", "the text starts with a byte order mark (BOM)", line=1, column=1)
    for bad, what in (("\x00", "a NUL byte"), ("\r", "a bare carriage return (CR)")):
        pos = text.find(bad)
        if pos >= 0:
            line = text.count("\n", 0, pos) + 1
            return Diagnostic(
                "E109",
                f"the file contains {what}; save it as UTF-8 text with LF or CRLF line endings",
                line=line,
                column=pos - text.rfind("\n", 0, pos),
            )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        return Diagnostic(
            "E109",
            "the text contains a lone surrogate, which UTF-8 cannot hold",
            line=line,
            column=exc.start - text.rfind("\n", 0, exc.start),
        )
    return None


def split_frontmatter(text: str) -> tuple[str, str, int] | Diagnostic:
    """(frontmatter, body, body's first file line) or an E101 diagnostic."""
    if not (text.startswith("---\n") or text == "---"):
        first = text.split("\n", 1)[0]
        return Diagnostic(
            "E101",
            f"the file must start with a line '---' opening the metadata; line 1 is {first[:40]!r}",
            line=1,
            column=1,
        )
    start = 4
    end = text.find("\n---\n", start - 1)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            return Diagnostic(
                "E101",
                "the metadata opened at line 1 is never closed: add a line "
                "'---' after the last key",
                line=1,
                column=1,
            )
    front = text[start : end + 1] if end >= start else ""
    body = text[end + 5 :]
    body_line = text.count("\n", 0, end + 5) + 1
    return front, body, body_line


def parse_unit(data: bytes | str, *, path: str | None = None) -> ParseResult:
    """Parse a unit; never raises for bad input: problems are coded diagnostics."""
    if isinstance(data, bytes):
        text, problem = _decode(data)
        if problem is not None or text is None:
            return _finish(ParseResult(None, [problem] if problem else []), path)
    else:
        text = data
        problem = _size_problem(text)
        if problem is not None:
            return _finish(ParseResult(None, [problem]), path)
    text = text.replace("\r\n", "\n")
    problem = _text_problem(text)
    if problem is not None:
        return _finish(ParseResult(None, [problem]), path)
    split = split_frontmatter(text)
    if isinstance(split, Diagnostic):
        return _finish(ParseResult(None, [split]), path)
    front, body, body_line = split
    result = ParseResult(None)
    # JSON boundary: the frontmatter as YAML parsed it, checked against its schema
    # before _build reads it (typing it first would cost a pass per unit parsed).
    meta: dict[str, Any] = {}
    try:
        doc = load(front, line_offset=1)
    except YamlProblem as exc:
        result.errors.append(Diagnostic(exc.code, exc.message, line=exc.line, column=exc.column))
    else:
        result.errors.extend(
            Diagnostic(d.code, d.message, line=d.line, column=d.column) for d in doc.duplicates
        )
        # An empty frontmatter has no node to point at: name its opening '---' line.
        result.errors.extend(
            d if d.line is not None else Diagnostic(d.code, d.message, line=1, column=1)
            for d in check_metadata(doc)
        )
        result.key_lines = {str(k[0]): pos[0] for k, pos in doc.marks.items() if len(k) == 1}
        if isinstance(doc.value, dict):
            meta = doc.value
    unit_id = meta.get("id")
    if isinstance(unit_id, str) and ID_RE.fullmatch(unit_id):
        result.unit_id = unit_id
    kind = meta.get("kind")
    # Any YAML value can be here, a list too: only a known kind name selects the fields.
    kind = kind if isinstance(kind, str) and kind in F.FIELDS else None
    language = meta.get("language")
    if not (isinstance(language, str) and LANGUAGE_RE.fullmatch(language)):
        language = "en"
    parsed = parse_body(body, body_line - 1, kind, language)
    result.errors.extend(parsed.errors)
    result.warnings.extend(parsed.warnings)
    if not result.errors and kind is not None and parsed.title is not None:
        result.unit = _build(meta, parsed.title, parsed.values)
    return _finish(result, path)


def _finish(result: ParseResult, path: str | None) -> ParseResult:
    result.errors = sorted(
        (d.with_path(path, result.unit_id) for d in result.errors), key=Diagnostic.sort_key
    )
    result.warnings = [EvidenceWarning(w.message, path, w.line, w.code) for w in result.warnings]
    if result.errors:
        result.unit = None
    return result


# JSON boundary: the schema-checked frontmatter and section values become the typed Unit.
def _build(meta: dict[str, Any], title: str, values: dict[str, Any]) -> Unit:
    applies = meta.get("applies_to") or {}
    metadata = Metadata(
        id=meta["id"],
        kind=meta["kind"],
        language=meta["language"],
        purposes=tuple(meta["purposes"]),
        applies_to=AppliesTo(
            tuple(applies.get("concepts", ())),
            tuple(applies.get("tables", ())),
            tuple(applies.get("columns", ())),
        ),
    )
    cls = PAYLOAD_CLASSES[metadata.kind]
    if metadata.kind == "enum":
        values = {**values, "values": tuple(EnumValue(v, m) for v, m in values["values"])}
    return Unit(metadata, title, cls(**values))


# -- the flat form: a parse as primitives and tuples, for a parse worker to send back ------
#
# Unpickling a ParseResult (nested dataclasses) cost the main process more than a sixth
# of the parse itself; these tuples unpickle in a fraction of that, and the typed unit is
# built only when asked (a validate never asks).

# (id, kind, language, purposes, (concepts, tables, columns), title, payload values in
# field order (an enum's values as (value, meaning) pairs), content hash or None)
UnitFields = tuple[
    str,
    str,
    str,
    tuple[str, ...],
    tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
    str,
    tuple[Any, ...],
    str | None,
]
# (unit_id, errors, warnings, key_lines as (key, line) pairs, the unit's fields or None)
FlatResult = tuple[
    str | None,
    tuple[Diagnostic, ...],
    tuple[EvidenceWarning, ...],
    tuple[tuple[str, int], ...],
    UnitFields | None,
]

_PAYLOAD_NAMES = {
    kind: tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    for kind, cls in PAYLOAD_CLASSES.items()
}


def flatten(result: ParseResult, *, content_hash: bool = False) -> FlatResult:
    """``result`` as tuples of primitives (and the rare diagnostic); with ``content_hash``
    the unit's hash is computed here, on the worker's core, and sent along."""
    unit = result.unit
    unit_fields: UnitFields | None = None
    if unit is not None:
        m, a, payload = unit.metadata, unit.metadata.applies_to, unit.payload
        values = tuple(getattr(payload, name) for name in _PAYLOAD_NAMES[m.kind])
        if m.kind == "enum":
            values = (values[0], tuple((v.value, v.meaning) for v in values[1]))
        digest = unit.content_hash if content_hash else None
        applies = (a.concepts, a.tables, a.columns)
        unit_fields = (m.id, m.kind, m.language, m.purposes, applies, unit.title, values, digest)
    return (
        result.unit_id,
        tuple(result.errors),
        tuple(result.warnings),
        tuple(result.key_lines.items()),
        unit_fields,
    )


def unflatten_unit(flat: UnitFields) -> Unit:
    """The typed unit of ``flatten``'s fields, its content hash kept when it was sent."""
    uid, kind, language, purposes, applies, title, values, digest = flat
    if kind == "enum":
        values = (values[0], tuple(EnumValue(v, m) for v, m in values[1]))
    metadata = Metadata(uid, kind, language, purposes, AppliesTo(*applies))
    unit = Unit(metadata, title, PAYLOAD_CLASSES[kind](*values))
    if digest is not None:
        unit.__dict__["content_hash"] = digest  # what cached_property stores on first use
    return unit


def unflatten(flat: FlatResult) -> ParseResult:
    uid, errors, warnings, key_lines, unit_fields = flat
    unit = unflatten_unit(unit_fields) if unit_fields is not None else None
    return ParseResult(unit, list(errors), list(warnings), uid, dict(key_lines))


def parse(data: bytes | str, *, path: str | None = None) -> Unit:
    """Parse a unit or raise ``InvalidFilesError`` listing every diagnostic."""
    result = parse_unit(data, path=path)
    if result.unit is None:
        raise InvalidFilesError(result.errors)
    return result.unit


def validate(unit: Unit) -> list[Diagnostic]:
    """Every rule a file must satisfy, applied to ``unit``: it is valid iff its canonical text
    parses back to the same unit.  Returns the diagnostics (empty when valid)."""
    try:
        text = render(unit)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return [Diagnostic("E114", f"the unit cannot be rendered: {exc}", unit_id=unit.id)]
    result = parse_unit(text)
    if result.errors:
        return result.errors
    if result.unit != unit:
        return [
            Diagnostic(
                "E114",
                f"the unit does not survive rendering: its {_differences(unit, result.unit)} "
                "would read back differently (Markdown that changes the structure, such as "
                "a closing ' #' on the title or blanks around a text)",
                unit_id=unit.id,
            )
        ]
    return []


def _differences(unit: Unit, back: Unit | None) -> str:
    """The parts of ``unit`` that its canonical text does not give back, for the message."""
    if back is None:
        return "text"
    parts = [name for name in ("metadata", "title") if getattr(unit, name) != getattr(back, name)]
    parts += [
        f"field '{f.name}'"
        for f in fields(unit.payload)  # type: ignore[arg-type]
        if type(back.payload) is type(unit.payload)
        and getattr(unit.payload, f.name) != getattr(back.payload, f.name)
    ]
    return ", ".join(parts) or "payload"
