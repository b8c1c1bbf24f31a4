"""Where, in a unit file, each name a check looks at was written (file line, column).

The unit model holds values, not positions; this reads the positions back from
the text: metadata items from the strict YAML loader's marks, field values by
scanning the field's lines (outside fences) for the value as written.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

from evidence_tool.unit import FIELDS
from evidence_tool.unit.parse import split_frontmatter
from evidence_tool.unit.yaml_strict import YamlProblem, load

Position = tuple[int | None, int | None]


@dataclass
class UnitPositions:
    marks: dict[tuple[object, ...], tuple[int, int]] = field(default_factory=dict)
    values: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    headings: dict[str, int] = field(default_factory=dict)
    sql_line: int | None = None  # file line of the first line inside the ```sql fence

    def applies(self, key: str, index: int) -> Position:
        return self.marks.get(
            ("applies_to", key, index), self.marks.get(("applies_to",), (None, None))
        )

    def value(self, field_name: str, value: str) -> Position:
        found = self.values.get((field_name, value))
        if found:
            return found
        return self.headings.get(field_name), 1 if field_name in self.headings else None


def locate(text: str, kind: str, language: str) -> UnitPositions:
    out = UnitPositions()
    split = split_frontmatter(text.replace("\r\n", "\n"))
    if isinstance(split, tuple):
        front, body, body_line = split
        with contextlib.suppress(YamlProblem):
            out.marks = dict(load(front, line_offset=1).marks)
        _fields(out, body.split("\n"), body_line, kind, language)
    return out


def _fields(out: UnitPositions, lines: list[str], first: int, kind: str, language: str) -> None:
    headings = {f"## {spec.heading(language)}": spec for spec in FIELDS.get(kind, ())}
    current: str | None = None
    fence: str | None = None
    for i, line in enumerate(lines):
        file_line = first + i
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence) and not stripped[len(fence) :].strip():
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            if current == "sql" and out.sql_line is None and stripped[3:].strip() == "sql":
                out.sql_line = file_line + 1
            continue
        if line.startswith("#"):
            spec = headings.get(line.rstrip())
            current = spec.name if spec else (None if line.startswith(("# ", "## ")) else current)
            if spec:
                out.headings[spec.name] = file_line
            continue
        if current in ("tables", "columns") and line.startswith("- "):
            out.values.setdefault((current, _decode(line[2:].strip())), (file_line, 3))
        elif current == "column" and stripped:
            out.values.setdefault(
                ("column", _decode(stripped)), (file_line, 1 + len(line) - len(line.lstrip()))
            )


def _decode(raw: str) -> str:
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value if isinstance(value, str) else raw
    return raw
