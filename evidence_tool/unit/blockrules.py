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

import importlib.util
import re
import sys
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import ModuleType

    from markdown_it.parser_block import ParserBlock
    from markdown_it.token import Token
    from markdown_it.utils import OptionsDict

# Always on: paragraph, heading and fence, the rules a unit's own structure is made of.
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
    """The block rules beyond paragraph, heading and fence that may apply somewhere in ``text`` (a superset)."""
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


# markdown-it's package __init__ imports MarkdownIt, whose module imports the inline
# parser, every inline rule and the renderer (a third of markdown-it's import time), none
# of which a block-only parse runs.  The package is registered without running __init__;
# the first use of a name __init__ defines (``from markdown_it import MarkdownIt``) runs it.
_INIT_NAMES = frozenset({"MarkdownIt", "__version__", "__all__"})


def _package_without_main() -> None:
    if "markdown_it" in sys.modules:
        return
    spec = importlib.util.find_spec("markdown_it")
    if spec is None or spec.loader is None:
        raise ImportError("markdown-it-py is not installed: reinstall evidence-tool")
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def run_init(name: str) -> Any:
        if name not in _INIT_NAMES:  # a submodule not imported yet: the import finds it
            raise AttributeError(f"module 'markdown_it' has no attribute {name!r}")
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, name)

    package.__dict__["__getattr__"] = run_init
    sys.modules["markdown_it"] = package


class BlockParser:
    """What ``MarkdownIt("commonmark")`` with inline parsing off does to a text, built from
    markdown-it's own block parser, core rules and options: the same tokens (compared in
    tests/unit/test_blockrules.py).  It has what the block rules read from their parser:
    ``options``, ``block``, and for link reference definitions the link helpers."""

    def __init__(self, rules: frozenset[str]) -> None:
        _package_without_main()
        from markdown_it.parser_block import ParserBlock
        from markdown_it.presets import commonmark
        from markdown_it.rules_core.block import block
        from markdown_it.rules_core.normalize import normalize
        from markdown_it.rules_core.state_core import StateCore
        from markdown_it.utils import OptionsDict

        preset = commonmark.make()
        self.options: OptionsDict = OptionsDict(preset["options"])
        self.block: ParserBlock = ParserBlock()
        self.block.ruler.enableOnly(preset["components"]["block"]["rules"])
        off = [name for name in _ALL if name not in rules]
        if off:
            self.block.ruler.disable(off)
        self._state, self._core = StateCore, (normalize, block)  # the core rules left on

    def __getitem__(self, name: str) -> ParserBlock:
        if name != "block":  # StateBlock asks md["block"] which rules are on
            raise KeyError(name)
        return self.block

    @property
    def helpers(self) -> ModuleType:
        import markdown_it.helpers  # imports the inline rules: only for a '[' line

        return markdown_it.helpers

    def normalizeLink(self, url: str) -> str:  # markdown-it's name
        from markdown_it.common.normalize_url import normalizeLink

        return normalizeLink(url)

    def validateLink(self, url: str) -> bool:  # markdown-it's name
        from markdown_it.common.normalize_url import validateLink

        return validateLink(url)

    def parse(self, src: str) -> list[Token]:
        state = self._state(src, self, {})  # type: ignore[arg-type]
        for rule in self._core:
            rule(state)
        return state.tokens


class _QuietLog:
    """Stands in for the loggers of markdown-it's block rules, which log a debug line each
    time a rule is tried on a line (2.9 million calls for 10,000 units, a third of the
    parse), even with debug logging off."""

    debug = "".format  # a call in C that takes any arguments and does nothing


def _quiet_block_rules() -> None:
    import logging

    for name, module in list(sys.modules.items()):
        logger = getattr(module, "LOGGER", None)
        if (
            name.startswith("markdown_it.rules_block.")
            and isinstance(logger, logging.Logger)
            and not logger.isEnabledFor(logging.DEBUG)  # kept for whoever debugs markdown-it
        ):
            module.LOGGER = _QuietLog()  # type: ignore[attr-defined]


@cache
def parser(rules: frozenset[str]) -> BlockParser:
    """A block-only CommonMark parser with paragraph, heading, fence and ``rules`` on."""
    md = BlockParser(rules)
    _quiet_block_rules()  # after the block rules are loaded
    return md


def parser_for(text: str) -> BlockParser:
    """The parser that gives ``text`` the tokens the full CommonMark parser would."""
    return parser(needed_rules(text))
