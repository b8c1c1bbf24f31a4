"""Validation of a typed unit built in code (not read from a file)."""

from __future__ import annotations

from evidence_tool.errors import Diagnostic
from evidence_tool.unit.model import Unit
from evidence_tool.unit.parse import parse_unit
from evidence_tool.unit.render import render


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
                "the unit does not survive rendering: a text field holds "
                "Markdown that changes the structure (a title, a field "
                "heading or an unclosed block)",
                unit_id=unit.id,
            )
        ]
    return []
