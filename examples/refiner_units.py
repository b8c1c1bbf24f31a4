#!/usr/bin/env python3
"""An example ``command`` refiner for evidence-tool (docs/sources.md).

It reads one refiner request (schemas/refiner-request.schema.json) on stdin
and prints one refiner response (schemas/refiner-response.schema.json) on
stdout.  Like the built-in ``units`` refiner it takes the v4 units written in
the draft, and it supports each unit with the verbatim text of its fields.
A real refiner (a model, a converter from another format) keeps this shape:
only the way it finds units changes.

Standard library only; exit 0 with the response, non-zero on a broken request.
"""

from __future__ import annotations

import json
import re
import sys

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
H2 = re.compile(r"^ {0,3}##[ \t]+(.*?)[ \t]*$")


def split_units(text: str) -> list[str]:
    """A unit starts at a line '---' directly followed by a line 'schema_version:...'."""
    lines = text.split("\n")
    starts = [
        i
        for i in range(len(lines) - 1)
        if lines[i] == "---" and lines[i + 1].startswith("schema_version:")
    ]
    units = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)
        units.append("\n".join(lines[start:stop]).rstrip("\n") + "\n")
    return units


def field_texts(unit: str) -> list[str]:
    """The text under each '## ' heading of the body (fenced blocks are not structure)."""
    lines = unit.split("\n")
    close = next(i for i in range(1, len(lines)) if lines[i] == "---")
    sections: list[list[str]] = []
    fence = None
    for line in lines[close + 1 :]:
        if fence is None and H2.match(line):
            sections.append([])
            continue
        if FENCE.match(line):
            fence = None if fence else FENCE.match(line).group(1)  # type: ignore[union-attr]
        elif line.startswith("# ") and fence is None:
            continue
        if sections:
            sections[-1].append(line)
    texts = ["\n".join(s).strip("\n").rstrip() for s in sections]
    return [t for t in texts if t]


def unit_id(unit: str) -> str | None:
    match = re.search(r"^id: *(\S+)", unit, re.MULTILINE)
    return match.group(1) if match else None


def main() -> int:
    request = json.load(sys.stdin)
    if request.get("protocol") != 1:
        print("unsupported protocol", file=sys.stderr)
        return 2
    text = request["text"]
    units, review_items = [], []
    for unit in split_units(text):
        excerpts = [t for t in field_texts(unit) if t in text]
        units.append({"markdown": unit, "excerpts": excerpts})
        if not excerpts:
            review_items.append({"message": "no field text found", "unit_id": unit_id(unit)})
    json.dump({"protocol": 1, "units": units, "review_items": review_items}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
