"""Whether a typed unit's rendering is known to parse back to it, without parsing it.

An importer builds typed units, and a unit is valid only if its canonical text parses
back equal with no error (``parse_unit(render(u)).unit == u``).  Parsing 15,000 imported
units cost most of a first import refresh (issue 28), yet their texts are nearly always
plain prose and names.  :func:`renders_back` answers True only for a unit whose every part
lies in a subset where the round trip is certain: the frontmatter through the same
line reader and schema check the parse uses, each field's text free of anything
Markdown could read as structure (a heading, a fence, an HTML block, a quote, a setext
underline, a link definition), each one-line value decoding to itself, each check of
the body parser (references, URLs, one SQL expression, distinct values) applied to the
typed value.  Anything else answers False and the caller parses, so every refusal keeps
its diagnostic.  ``tests/unit/test_roundtrip.py`` checks the claim on generated units
and on every importer's output: whenever this says True, the parse agrees.
"""

from __future__ import annotations

import json
import re

from evidence_tool.unit import fields as F
from evidence_tool.unit._speed.yaml_fast import load_canonical
from evidence_tool.unit.body import _is_http_url
from evidence_tool.unit.formula import check_expression
from evidence_tool.unit.identifiers import REFERENCE_RE
from evidence_tool.unit.metadata import check_metadata
from evidence_tool.unit.model import PAYLOAD_CLASSES, EnumValue, Unit
from evidence_tool.unit.parse import _size_problem, _text_problem, split_frontmatter
from evidence_tool.unit.render import line_value

# Characters left to the parse: controls other than tab and LF, line breaks Python or
# YAML know and Markdown does not, the BOM.
_ODD = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029\ufeff]")
# Container markers a line's own text may follow (a list item, nested): '- ', '1. ', '2) '.
_MARKERS = re.compile(r"\s*(?:(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$))*")
# What may open a block that is not a paragraph or a list, at a line's text: a heading,
# an HTML block, a quote, a link definition, a fence (three or more '`' or '~').
_OPENERS = frozenset("#<>[")
_FENCES = ("```", "~~~")
# A fence opened at the start of a line, with a one-word info string (``sql``) or none.
_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[A-Za-z0-9_.+-]*")
# A line Markdown may read as a setext underline (it turns the line above into a heading).
_UNDERLINE = re.compile(r"\s*(=+|-+)\s*")


def renders_back(unit: Unit, text: str) -> bool:
    """True only when ``text``, the rendering of ``unit``, parses back to a unit equal to
    ``unit`` with no error; False when that is not certain (parse it then)."""
    if _size_problem(text) is not None or _text_problem(text) is not None:
        return False
    split = split_frontmatter(text)
    if not isinstance(split, tuple):
        return False
    doc = load_canonical(split[0], line_offset=1)
    if doc is None or doc.value != unit.metadata.to_json() or check_metadata(doc):
        return False
    m = unit.metadata
    meta_types = (m.purposes, m.applies_to.concepts, m.applies_to.tables, m.applies_to.columns)
    if any(type(t) is not tuple for t in meta_types):
        return False  # the parse builds tuples: a list would not compare equal
    specs = F.FIELDS.get(m.kind)
    if specs is None or type(unit.payload) is not PAYLOAD_CLASSES[m.kind]:
        return False
    if not _plain_title(unit.title):
        return False
    for spec in specs:
        if not _field_ok(spec, getattr(unit.payload, spec.name)):
            return False
    if m.kind == "mapping":
        payload = unit.payload
        return bool(getattr(payload, "tables", ()) or getattr(payload, "columns", ()))
    return True


def _plain_title(title: object) -> bool:
    """'# title' is a level-1 heading whose text is exactly ``title``."""
    if type(title) is not str or not title or "\n" in title or _ODD.search(title):
        return False
    return not (title[0].isspace() or title[-1].isspace() or title[0] == "#" or title[-1] == "#")


def _plain_text(text: str, *, empty: bool = False) -> bool:
    """A field's text that the body parser reads back as written: every line a paragraph
    or list line, or inside a fenced block opened at the line's start and closed in the
    text (nothing that could end the field or swallow the next heading), no blank line at
    either end."""
    if type(text) is not str:
        return False
    if not text:
        return empty
    if _ODD.search(text):
        return False
    lines = text.split("\n")
    if not lines[0].strip() or not lines[-1].strip():
        return False
    fence = ""  # the open fence's marker run, "" outside one
    for line in lines:
        if fence:
            closer = line.rstrip(" \t")
            if len(closer) >= len(fence) and not closer.strip(fence[0]):
                fence = ""
            elif line.lstrip().startswith(_FENCES):
                return False  # a marker run the fence may or may not take as its end
        elif (opened := _FENCE_OPEN.fullmatch(line)) is not None:
            fence = opened.group(1)
        elif not _plain_line(line):
            return False
    return not fence


def _plain_line(line: str) -> bool:
    """A line that opens no block but a paragraph or a list item (whatever its markers
    hold), and cannot underline the line above into a heading."""
    rest = line[_MARKERS.match(line).end() :]  # type: ignore[union-attr]
    if rest and (rest[0] in _OPENERS or rest.startswith(_FENCES)):
        return False
    return not _UNDERLINE.fullmatch(line)


def _line_ok(value: object, type_: str) -> bool:
    """A one-line value (a list item, a scalar) that decodes back to itself from its
    rendered line, and is of its field's form."""
    if type(value) is not str or not value or value != value.strip():
        return False
    raw = line_value(value, type_)
    ref = REFERENCE_RE.get(type_)
    if ref is not None and ref.fullmatch(raw):
        got = raw
    elif len(raw) >= 2 and raw[0] == '"' and raw[-1] == '"':
        try:
            got = json.loads(raw)
        except ValueError:
            return False
    else:
        got = raw
    if got != value or raw != raw.strip() or not _plain_line(raw):
        return False
    if type_ == F.URL:
        return _is_http_url(value)
    return ref is None or bool(ref.fullmatch(value))


def _field_ok(spec: F.FieldSpec, value: object) -> bool:
    if spec.type == F.TEXT:
        return _plain_text(value)  # type: ignore[arg-type]
    if spec.type in F.LIST_TYPES:
        if type(value) is not tuple or len(set(value)) != len(value):
            return False
        return all(_line_ok(v, spec.type) for v in value)
    if spec.type in F.LINE_TYPES:
        return _line_ok(value, spec.type)
    if spec.type == F.VALUES:
        if type(value) is not tuple or not value:
            return False
        seen: set[str] = set()
        for ev in value:
            if type(ev) is not EnumValue or type(ev.value) is not str or ev.value in seen:
                return False
            if _ODD.search(ev.value):
                return False
            seen.add(ev.value)
            if not _plain_text(ev.meaning, empty=True):
                return False
        return True
    if spec.type == F.SQL:
        if type(value) is not str or not value.strip():
            return False
        lines = value.split("\n")
        if not lines[0].strip() or not lines[-1].strip() or _ODD.search(value):
            return False
        return check_expression(value) is None
    return False
