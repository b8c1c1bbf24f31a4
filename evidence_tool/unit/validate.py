"""Validation of a typed unit built in code (not read from a file)."""

from __future__ import annotations

from dataclasses import fields

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
