"""Which of markdown-it's CommonMark block rules can apply to a text, found by a line scan.

A unit body is parsed for its block structure with every CommonMark block rule, since a
quote, a list, an HTML block or a link definition each decide whether a ``#`` line is a
heading.  Most bodies hold none of them, and trying every rule on every line is most of
the parse (issue 20).  A rule can only start a block on a line whose text, after its
indentation and the markers of the containers around it (``>``, list markers), begins
with that rule's marker; :func:`needed_rules` proves which rules cannot, and the body is
parsed with the others disabled: the tokens are the same (``tests/unit/test_blockrules.py``
compares both parsers on generated bodies).
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# Always on: the rules a unit's own structure is made of.
BASE = ("paragraph", "heading", "fence")
# The CommonMark preset's other block rules, by the first character that can start them.
_BY_FIRST = {
    "<": ("html_block",),
    "[": ("reference",),
    "-": ("hr", "list", "lheading"),
    "*": ("hr", "list"),
    "_": ("hr",),
    "+": ("list",),
    "=": ("lheading",),
}
_ALL = ("code", "blockquote", "hr", "list", "reference", "html_block", "lheading")
# A container marker at the start of a line's text: '>' or a list item's marker.
_MARKER = re.compile(r"(>|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$))")
_SPACES = re.compile(r" *")


def _starts(line: str) -> tuple[str, int, set[str]] | None:
    """A line's first character after its indentation and container markers, the longest
    run of spaces met on the way, and the markers; None for a line with a tab."""
    if "\t" in line:
        return None  # tabs stop at columns: not worth following
    pos, widest = 0, 0
    markers: set[str] = set()
    while True:
        run = _SPACES.match(line, pos).end() - pos  # type: ignore[union-attr]
        widest = max(widest, run)
        pos += run
        marker = _MARKER.match(line, pos)
        if marker is None:
            return line[pos : pos + 1], widest, markers
        markers.add(marker.group())
        pos = marker.end()


def may_stay_open(lines: list[str]) -> bool:
    """Can a block begun in ``lines`` swallow what follows them?  Only a fence or an HTML
    block can (a blank line ends every other block), and each starts with '`', '~' or '<'."""
    for line in lines:
        found = _starts(line)
        if found is None or found[0] in ("`", "~", "<"):
            return True
    return False


def needed_rules(text: str) -> frozenset[str]:
    """The block rules beyond ``BASE`` that may apply somewhere in ``text`` (a superset)."""
    needed: set[str] = set()
    for line in text.split("\n"):
        found = _starts(line)
        if found is None:
            return frozenset(_ALL)
        first, widest, markers = found
        if widest >= 4:
            needed.add("code")  # indented code, here or in a container
        for marker in markers:
            needed.add("blockquote" if marker == ">" else "list")
            # A lone '-' or '*' may also be a setext underline or part of a break.
            needed.update(_BY_FIRST.get(marker[0], ()))
        if first.isdigit():
            needed.add("list")
        needed.update(_BY_FIRST.get(first, ()))
    return frozenset(needed)


@cache
def parser(rules: frozenset[str]) -> MarkdownIt:
    """A block-only CommonMark parser with ``BASE`` and ``rules`` enabled, in their order."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    off = [name for name in _ALL if name not in rules]
    if off:
        md.block.ruler.disable(off)
    return md


def parser_for(text: str) -> MarkdownIt:
    """The parser that gives ``text`` the tokens the full CommonMark parser would."""
    return parser(needed_rules(text))
