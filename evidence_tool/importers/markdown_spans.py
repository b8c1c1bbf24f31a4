"""Markdown files of an import source as byte ranges: frontmatter, body, top-level sections.

Importers cite exact bytes, so everything here is an offset into the raw file;
headings inside fenced code blocks are not headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_tool.importers.spans import BOM, after_bom

# Only the opening run is a pattern: the closing run is stripped by hand, because a lazy
# text group before optional blanks and hashes backtracks cubically on a long blank run.
_HEADING_OPEN = re.compile(rb"#{1,6}[ \t]")
_FENCE = re.compile(rb"(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    title: str | None  # the heading's text; None for text before the first section
    start: int  # byte offsets of the whole section, heading line included
    end: int
    body_start: int  # first byte after the heading line


def _lines(raw: bytes, start: int = 0) -> list[tuple[int, bytes]]:
    out, pos = [], start
    for line in raw[start:].split(b"\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def opens_frontmatter(raw: bytes) -> bool:
    first = raw.removeprefix(BOM).split(b"\n", 1)[0]
    return first.rstrip(b"\r") == b"---"


def frontmatter(raw: bytes) -> tuple[int, int, int] | None:
    """(start, end, body_start) of the YAML between a first line '---' and the next line
    '---' at column 0; None when the file does not start with one."""
    bom = after_bom(raw)
    lines = _lines(raw, bom)
    if not lines or lines[0][1].rstrip(b"\r") != b"---":
        return None
    for pos, line in lines[1:]:
        if line.rstrip(b"\r") == b"---":
            body = min(pos + len(line) + 1, len(raw))
            return lines[1][0] if len(lines) > 1 else pos, pos, body
    return None


def _headings(raw: bytes, start: int) -> list[tuple[int, int, int, str]]:
    """(level, line start, line end, text) of each ATX heading outside code fences."""
    found = []
    fence: bytes | None = None
    for pos, line in _lines(raw, start):
        stripped = line.lstrip(b" ")
        if len(line) - len(stripped) > 3:
            continue  # indented code, not a heading or fence
        opener = _FENCE.match(stripped)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        heading = _heading(stripped)
        if heading is not None:
            found.append((heading[0], pos, pos + len(line), heading[1]))
    return found


def _heading(line: bytes) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line: ``#``s, a blank, the text, then optionally
    blanks, a closing run of ``#`` and blanks (a CR of a CRLF line end is dropped)."""
    opener = _HEADING_OPEN.match(line)
    if opener is None:
        return None
    level = opener.end() - 1
    text = line[level:].removesuffix(b"\r").rstrip(b" \t").rstrip(b"#").rstrip(b" \t")
    return level, text.decode("utf-8", "replace").strip()


def sections(raw: bytes, start: int = 0) -> tuple[str | None, list[Section]]:
    """The file's title (a lone top heading that opens the file) and its top-level sections.

    Sections split at the shallowest heading level; when one heading of that level opens
    the file and deeper headings follow, it is the file's title and the sections split at
    the next level.  Text before the first section is a section with no title.
    """
    if start == 0 and raw.startswith(BOM):
        start = len(BOM)  # a BOM would hide the opening heading
    heads = _headings(raw, start)
    title = None
    levels = sorted({h[0] for h in heads})
    if levels:
        top = [h for h in heads if h[0] == levels[0]]
        opens = raw[start : heads[0][1]].strip() == b""
        if len(top) == 1 and top[0] is heads[0] and opens and len(levels) > 1:
            title = heads[0][3]
            start = min(heads[0][2] + 1, len(raw))
            heads = [h for h in heads[1:]]
            levels = levels[1:]
    cuts = [h for h in heads if levels and h[0] == levels[0]]
    out: list[Section] = []
    first = cuts[0][1] if cuts else len(raw)
    if raw[start:first].strip():
        out.append(Section(None, start, first, start))
    for i, (_, pos, line_end, text) in enumerate(cuts):
        end = cuts[i + 1][1] if i + 1 < len(cuts) else len(raw)
        out.append(Section(text, pos, end, min(line_end + 1, end)))
    return title, out


def trimmed(raw: bytes, start: int, end: int) -> tuple[int, int]:
    """The range without its leading and trailing blank space."""
    while start < end and raw[start : start + 1] in (b" ", b"\t", b"\r", b"\n"):
        start += 1
    while end > start and raw[end - 1 : end] in (b" ", b"\t", b"\r", b"\n"):
        end -= 1
    return start, end
