"""dbt docs blocks, ``{{ doc('name') }}`` in descriptions, and value lists in them.

A description is rendered the way dbt renders it for docs: each ``doc()`` call is
replaced by its block's text.  Any other Jinja is not rendered (it would need
the project's variables and macros): the element is a review item, never a
guess.  Meanings of enum values are read only from lists that name the value
literally (see docs/importers.md, "### dbt", for the three shapes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence_tool.importers.base import Span, malformed
from evidence_tool.importers.spans import after_bom, decode

# The tag's argument is taken whole and trimmed by hand: a lazy group before optional
# blanks backtracks quadratically on a tag left open over a long blank run.
_BLOCK_TAG = re.compile(r"\{%-?\s*(docs|enddocs)\b([^%]*)%\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOC_CALL = re.compile(
    r"\{\{-?\s*doc\(\s*(['\"])([^'\"]*)\1\s*(?:,\s*(['\"])([^'\"]*)\3\s*)?\)\s*-?\}\}"
)
_JINJA = re.compile(r"\{\{|\{%|\{#")


@dataclass(frozen=True)
class DocsBlock:
    name: str
    text: str  # the block's contents without surrounding blank space
    span: Span  # exactly those bytes
    where: str  # "models/docs.md:3"


def docs_blocks(path: str, shown: str, raw: bytes) -> list[DocsBlock]:
    """Every ``{% docs name %}...{% enddocs %}`` block of one Markdown file (E504 for a block
    never closed, an enddocs without docs, a nested block, or a name that is not one)."""
    bom = after_bom(raw)
    text = decode(raw[bom:], shown)  # a BOM holds no line break: the line is the file's
    blocks: list[DocsBlock] = []
    open_at: tuple[str, int, int] | None = None  # (name, content start char, line)
    where = _Cursor(text, bom)  # line numbers and byte offsets, counted forward once
    for match in _BLOCK_TAG.finditer(text):
        if match.group(1) == "enddocs" and open_at is not None:
            name, begin, _ = open_at
            body = text[begin : match.start()]
            stripped = body.strip()
            lead = len(body) - len(body.lstrip())
            start = where.byte(begin + lead)
            end = start + len(stripped.encode("utf-8"))
            first = where.line(begin + lead)
            # The span keeps the bytes as they are; the text a unit states has plain line ends.
            text_lf = stripped.replace("\r\n", "\n")
            blocks.append(
                DocsBlock(name, text_lf, Span(path, start, end, stripped), f"{shown}:{first}")
            )
            open_at = None
            continue
        line = where.line(match.start())
        if match.group(1) == "enddocs":
            raise malformed(shown, line, "{% enddocs %} without a {% docs name %} before it")
        if open_at is not None:
            raise malformed(
                shown,
                line,
                f"a docs block opens inside the block '{open_at[0]}' (line "
                f"{open_at[2]}); close it with {{% enddocs %}} first",
            )
        name = match.group(2).strip()
        name = name[:-1].rstrip() if name.endswith("-") else name
        if not _NAME.fullmatch(name):
            raise malformed(shown, line, f"'{name}' is not a docs block name")
        open_at = (name, match.end(), line)
    if open_at is not None:
        raise malformed(
            shown, open_at[2], f"the docs block '{open_at[0]}' is never closed with {{% enddocs %}}"
        )
    return blocks


class _Cursor:
    """Line number and byte offset of character positions asked for in increasing order:
    each step counts only the text since the last one, so a file of many blocks is read
    once rather than from its start per block."""

    def __init__(self, text: str, bom: int) -> None:
        self.text, self.pos, self.lines, self.bytes = text, 0, 1, bom

    def _to(self, pos: int) -> None:
        assert pos >= self.pos
        part = self.text[self.pos : pos]
        self.lines += part.count("\n")
        self.bytes += len(part.encode("utf-8"))
        self.pos = pos

    def line(self, pos: int) -> int:
        self._to(pos)
        return self.lines

    def byte(self, pos: int) -> int:
        self._to(pos)
        return self.bytes


@dataclass
class Rendered:
    text: str  # the description with every doc() replaced
    blocks: list[DocsBlock] = field(default_factory=list)  # the blocks used, in order
    jinja: bool = False  # other Jinja is left: not representable


def render(description: str, blocks: dict[str, DocsBlock], shown: str, line: int) -> Rendered:
    """The description as dbt's docs show it; E504 for a doc() that names no block."""
    used: list[DocsBlock] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(4) if match.group(4) is not None else match.group(2)
        block = blocks.get(name)
        if block is None:
            raise malformed(
                shown, line, f"doc('{name}') names no docs block in the project's .md files"
            )
        if block not in used:
            used.append(block)
        return block.text

    text = _DOC_CALL.sub(replace, description).strip()
    return Rendered(text, used, bool(_JINJA.search(text)))


# The three list shapes that give a value's meaning, one value per line:
#   - value: meaning   (also '*', '+', and '=' or ' - ' or an en/em dash for ':')
#   value = meaning
#   | value | meaning |
# Each shape is read by hand, in one pass over the line: as patterns, their lazy groups
# between optional blanks backtracked quadratically (cubically for a table row) on a
# line with a long blank run.
_DASHES = "-\u2013\u2014"
_QUOTES = ("`", "'", '"', "**")


def _unquote(value: str) -> str:
    for q in _QUOTES:
        if len(value) >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            return value[len(q) : -len(q)].strip()
    return value


def _row(line: str) -> tuple[str, str] | None:
    """``| value | meaning | ...``: a line that opens with a cell and has two more bars."""
    body = line.lstrip()
    if not body.startswith("|"):
        return None
    cells = body[1:].split("|", 2)
    if len(cells) < 3 or not cells[0]:
        return None
    return cells[0].strip() or cells[0][-1], cells[1].strip()


def _bullet(line: str) -> tuple[str, str] | None:
    """``- value: meaning`` (or ``=``, or a dash after a blank, for the colon); the value
    ends at the first separator that blank space and a meaning follow."""
    body = line.lstrip()
    if len(body) < 2 or body[0] not in "-*+" or not body[1].isspace():
        return None
    rest = body[1:]
    k = len(rest) - len(rest.lstrip())  # the value starts after this blank run
    last = len(rest.rstrip())  # a meaning needs a non-blank character before this

    def meaning(p: int) -> str | None:
        if rest[p] in ":=":
            after = p + 1
        elif rest[p].isspace() and rest[p + 1 : p + 2] and rest[p + 1] in _DASHES:
            after = p + 2
        else:
            return None
        return rest[after:].strip() if last > after + 1 and rest[after].isspace() else None

    for p in range(k + 1, len(rest)):
        found = meaning(p)
        if found is not None:
            return rest[k:p].rstrip(), found
    # As the pattern did, a separator right after a blank run of two or more: a blank value.
    for p, least in ((k, 2), (k - 1, 3)):
        found = meaning(p) if k >= least and p < len(rest) else None
        if found is not None:
            return "", found
    return None


def _equals(line: str) -> tuple[str, str] | None:
    """``value = meaning``: the first ``=``, with no bar before it."""
    body = line.lstrip()
    eq = body.find("=")
    if eq < 1 or "|" in body[:eq]:
        return None
    meaning = body[eq + 1 :].strip()
    return (body[:eq].rstrip(), meaning) if meaning else None


def meanings(text: str, values: list[str]) -> dict[str, str]:
    """Meaning per value, from the first line of a recognized shape that names it literally."""
    wanted = set(values)
    found: dict[str, str] = {}
    for line in text.splitlines():
        for shape in (_row, _bullet, _equals):
            pair = shape(line)
            if pair is None:
                continue
            value, meaning = _unquote(pair[0]), pair[1].strip()
            if value in wanted and meaning and value not in found and set(meaning) - set("-:| "):
                found[value] = meaning
            break
    return found
