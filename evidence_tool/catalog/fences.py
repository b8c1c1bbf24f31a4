"""Where, in a unit file, what a check looks at was written (file line, column).

The unit model holds values, not positions; they are read back from the text.

- The fenced SQL blocks of an example: its SQL is in text fields (Question,
  Interpretation) as fenced blocks whose info string is ``sql``: top-level CommonMark
  fences (up to three spaces of indentation, three or more backticks or tildes, closed
  by a like fence at least as long).  A fence nested in a list item or a block quote
  is not a block the check reads (catalog.md says so).
- Each name a check resolves (``locate``): metadata items from the strict YAML
  loader's marks, field values by scanning the field's lines (outside fences) for the
  value as written.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

from evidence_tool.unit import FIELDS
from evidence_tool.unit.parse import split_frontmatter
from evidence_tool.unit.yaml_strict import YamlProblem, load


@dataclass(frozen=True)
class SqlBlock:
    sql: str  # the block's text, its fence's indentation removed as CommonMark removes it
    line: int  # file line of the block's first text line
    indent: int  # columns removed from each line (the opening fence's indentation)

    def position(self, offset: int) -> tuple[int, int]:
        """File (line, column), 1-based, of the character at ``offset`` in ``sql``."""
        offset = max(0, min(offset, len(self.sql)))
        line = self.sql.count("\n", 0, offset)
        start = self.sql.rfind("\n", 0, offset) + 1
        return self.line + line, offset - start + 1 + self.indent


def sql_blocks(text: str) -> list[SqlBlock]:
    """Every top-level fenced block of the unit's body whose info string says ``sql``."""
    split = split_frontmatter(text.replace("\r\n", "\n"))
    if not isinstance(split, tuple):
        return []
    _, body, first = split
    lines = body.split("\n")
    out: list[SqlBlock] = []
    i = 0
    while i < len(lines):
        opened = _opening(lines[i])
        i += 1
        if opened is None:
            continue
        marker, indent, info = opened
        start = i
        while i < len(lines) and not _closes(lines[i], marker):
            i += 1
        if info.split(None, 1)[:1] in (["sql"], ["SQL"]):
            content = [_dedent(line, indent) for line in lines[start:i]]
            out.append(SqlBlock("\n".join(content), first + start, indent))
        i += 1  # past the closing fence (or the end of the file)
    return out


def _opening(line: str) -> tuple[str, int, str] | None:
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3:
        return None
    rest = line[indent:]
    char = rest[:1]
    if char not in ("`", "~"):
        return None
    run = len(rest) - len(rest.lstrip(char))
    if run < 3:
        return None
    info = rest[run:].strip()
    if char == "`" and "`" in info:
        return None  # not a fence: an inline code span
    return char * run, indent, info


def _closes(line: str, marker: str) -> bool:
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3:
        return False
    rest = line[indent:].rstrip()
    return len(rest) >= len(marker) and not rest.strip(marker[0])


def _dedent(line: str, indent: int) -> str:
    lead = len(line) - len(line.lstrip(" "))
    return line[min(lead, indent) :]


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
