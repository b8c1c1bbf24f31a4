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

from evidence_tool.sources.importers.base import Span, malformed

_BLOCK_TAG = re.compile(r"\{%-?\s*(docs|enddocs)\b\s*([^%]*?)\s*-?%\}")
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
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise malformed(shown, raw.count(b"\n", 0, exc.start) + 1, "is not UTF-8 text") from None
    bom = len(raw) - len(text.encode("utf-8"))
    blocks: list[DocsBlock] = []
    open_at: tuple[str, int, int] | None = None  # (name, content start char, line)
    for match in _BLOCK_TAG.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match.group(1) == "docs":
            if open_at is not None:
                raise malformed(
                    shown,
                    line,
                    f"a docs block opens inside the block '{open_at[0]}' (line "
                    f"{open_at[2]}); close it with {{% enddocs %}} first",
                )
            name = match.group(2)
            if not _NAME.fullmatch(name):
                raise malformed(shown, line, f"'{name}' is not a docs block name")
            open_at = (name, match.end(), line)
            continue
        if open_at is None:
            raise malformed(shown, line, "{% enddocs %} without a {% docs name %} before it")
        name, begin, _ = open_at
        body = text[begin : match.start()]
        stripped = body.strip()
        lead = len(body) - len(body.lstrip())
        start = bom + len(text[: begin + lead].encode("utf-8"))
        end = start + len(stripped.encode("utf-8"))
        first = text.count("\n", 0, begin + lead) + 1
        # The span keeps the bytes as they are; the text a unit states has plain line ends.
        text_lf = stripped.replace("\r\n", "\n")
        blocks.append(
            DocsBlock(name, text_lf, Span(path, start, end, stripped), f"{shown}:{first}")
        )
        open_at = None
    if open_at is not None:
        raise malformed(
            shown, open_at[2], f"the docs block '{open_at[0]}' is never closed with {{% enddocs %}}"
        )
    return blocks


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
_BULLET = re.compile(r"\s*[-*+]\s+(?P<v>.+?)\s*(?::|=|\s[-\u2013\u2014])\s+(?P<m>\S.*?)\s*")
_EQUALS = re.compile(r"\s*(?P<v>[^|=\s][^=|]*?)\s*=\s*(?P<m>\S.*?)\s*")
_ROW = re.compile(r"\s*\|\s*(?P<v>[^|]+?)\s*\|\s*(?P<m>[^|]*?)\s*\|.*")
_QUOTES = ("`", "'", '"', "**")


def _unquote(value: str) -> str:
    for q in _QUOTES:
        if len(value) >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            return value[len(q) : -len(q)].strip()
    return value


def meanings(text: str, values: list[str]) -> dict[str, str]:
    """Meaning per value, from the first line of a recognized shape that names it literally."""
    wanted = set(values)
    found: dict[str, str] = {}
    for line in text.splitlines():
        for shape in (_ROW, _BULLET, _EQUALS):
            match = shape.fullmatch(line)
            if match is None:
                continue
            value, meaning = _unquote(match.group("v")), match.group("m").strip()
            if value in wanted and meaning and value not in found and set(meaning) - set("-:| "):
                found[value] = meaning
            break
    return found
