"""Canonical text of a unit (SPEC.md 3.4)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import cast

from evidence_tool.unit import fields as F
from evidence_tool.unit.identifiers import REFERENCE_RE
from evidence_tool.unit.model import EnumValue, Unit
from evidence_tool.unit.yaml_strict import flow_list, scalar

# A line value is written plain unless Markdown or the JSON-string rule would read it
# differently: headings, fences, HTML blocks, quotes, surrounding blanks, control chars.
# The first character may not be a control character either (a lone NUL was written raw).
_PLAIN_LINE = re.compile(
    r"[^\s#<`~\"\\\x00-\x1f\x7f\u2028\u2029]([^\x00-\x1f\x7f\u2028\u2029]*(?<=\S))?"
)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def line_value(value: str, type_: str = F.SCALAR) -> str:
    ref = REFERENCE_RE.get(type_)
    if ref is not None and ref.fullmatch(value) and not _CONTROL.search(value):
        return value  # a reference is read as written first: '"My Schema"."t"' stays plain
    return value if _PLAIN_LINE.fullmatch(value) else json.dumps(value, ensure_ascii=False)


def _fence_for(text: str) -> str:
    longest = max((len(m.group()) for m in re.finditer(r"`{3,}", text)), default=2)
    return "`" * max(3, longest + 1)


def _field_text(spec: F.FieldSpec, value: object) -> str | None:
    """The Markdown below a field heading, or None when an optional field is omitted."""
    if spec.type == F.TEXT:
        return str(value)
    if spec.type in F.LIST_TYPES:
        items = tuple(cast("Iterable[str]", value))
        if not items:
            return None
        return "\n".join("- " + line_value(v, spec.type) for v in items)
    if spec.type in F.LINE_TYPES:
        return line_value(str(value), spec.type)
    if spec.type == F.VALUES:
        blocks = []
        for ev in value:  # type: ignore[attr-defined]
            assert isinstance(ev, EnumValue)
            head = "### " + json.dumps(ev.value, ensure_ascii=False)
            blocks.append(head + ("\n\n" + ev.meaning if ev.meaning else ""))
        return "\n\n".join(blocks)
    if spec.type == F.SQL:
        fence = _fence_for(str(value))
        return f"{fence}sql\n{value}\n{fence}"
    raise AssertionError(spec.type)


def render_metadata(unit: Unit) -> list[str]:
    m = unit.metadata
    lines = [
        "---",
        f"schema_version: {m.schema_version}",
        f"id: {scalar(m.id)}",
        f"kind: {scalar(m.kind)}",
        f"language: {scalar(m.language)}",
        f"purposes: {flow_list(m.purposes)}",
    ]
    if not m.applies_to.is_empty():
        lines.append("applies_to:")
        lines.extend(f"  {key}: {flow_list(values)}" for key, values in m.applies_to.parts())
    lines.append("---")
    return lines


def render(unit: Unit) -> str:
    """The canonical text: metadata in SPEC order, title, fields in table order."""
    blocks = ["\n".join(render_metadata(unit)) + "\n\n# " + unit.title]
    for spec in F.FIELDS[unit.kind]:
        text = _field_text(spec, getattr(unit.payload, spec.name))
        if text is None:
            continue
        blocks.append(f"## {spec.heading(unit.language)}\n\n{text}")
    return "\n\n".join(blocks) + "\n"
