"""The verbatim field texts of a unit inside its draft: the built-in refiner's excerpts.

A light line scan is enough here: field headings are exact ``## Heading``
lines of the unit's kind and language outside fenced blocks, the same lines
the unit parser treats as structural.  Whatever it returns is checked again
against the normalized source, so a miss becomes a review item, never a
false claim.
"""

from __future__ import annotations

import re

from evidence_tool.unit import Unit
from evidence_tool.unit.fields import headings_for

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_H1 = re.compile(r"^ {0,3}#(?:[ \t]|$)")
_H2 = re.compile(r"^ {0,3}##[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def _trim(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n").rstrip()


def field_excerpts(chunk: str, unit: Unit) -> list[str]:
    """One excerpt per nonempty field, in source order, each a verbatim slice of ``chunk``."""
    lines = chunk.split("\n")
    close = next((i for i in range(1, len(lines)) if lines[i] == "---"), len(lines) - 1)
    headings = headings_for(unit.kind, unit.language)
    sections: list[list[str]] = []
    current: list[str] | None = None
    fence: str | None = None
    for line in lines[close + 1 :]:
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            if current is not None:
                current.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
        elif _H1.match(line):
            current = None
            continue
        else:
            h2 = _H2.match(line)
            if h2 and h2.group(1) in headings:
                current = []
                sections.append(current)
                continue
        if current is not None:
            current.append(line)
    out: list[str] = []
    for section in sections:
        text = _trim(section)
        if text and text not in out:
            out.append(text)
    return out
