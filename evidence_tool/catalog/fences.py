"""The fenced SQL blocks of a unit file, with where each one's text starts.

An example unit holds its SQL in text fields (Question, Interpretation) as fenced
blocks whose info string is ``sql``.  The check needs their file positions, and the
unit model keeps only the field text, so the blocks are read back from the file:
top-level CommonMark fences (up to three spaces of indentation, three or more
backticks or tildes, closed by a like fence at least as long).  A fence nested in a
list item or a block quote is not a block the check reads (catalog.md says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from evidence_tool.unit.parse import split_frontmatter


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
