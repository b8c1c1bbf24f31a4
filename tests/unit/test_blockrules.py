"""The reduced block parser gives exactly the tokens of the full CommonMark one (issue 20).

``blockrules.needed_rules`` proves by a line scan which block rules cannot apply to a
body; the body is then parsed with those rules off.  Hypothesis writes bodies from the
pieces that make each rule fire (alone, nested in lists and quotes, indented) and
compares every token of both parsers, then the units parse_unit builds with each.
"""

from __future__ import annotations

import importlib
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from evidence_tool.unit import blockrules

body_module = importlib.import_module("evidence_tool.unit.body")
parse_module = importlib.import_module("evidence_tool.unit.parse")


@cache
def _markdown() -> MarkdownIt:
    """The full block-only CommonMark parser: what the reduced parser must equal token for
    token.  Every block rule stays on: each one (a quote, an HTML block, a link
    definition) decides whether a '#' line is a heading."""
    md = MarkdownIt("commonmark")
    md.disable(["inline", "text_join"], ignoreInvalid=True)
    return md


_PREFIXES = [
    "",
    " ",
    "  ",
    "   ",
    "    ",
    "      ",
    "> ",
    ">",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "- > ",
    "> - ",
    "  - ",
    "1.     ",
    "-    ",
    "\t",
    " \t",
]
_STARTS = [
    "# Title",
    "## Definition",
    "## Synonyms",
    '### "A"',
    "#",
    "#not",
    "```sql",
    "```",
    "~~~",
    "<div>",
    "</div>",
    "<!-- c -->",
    "<p>x",
    "[a]: http://x",
    "[b]",
    "---",
    "- - -",
    "***",
    "* * *",
    "___",
    "===",
    "=",
    "-",
    "*",
    "+",
    "1.",
    "3)",
    "word",
    "Plain text here.",
    "a.b.c",
    "SELECT 1",
    "-- sql comment",
    "> q",
    ">",
    "|a|b|",
    "\\# escaped",
    "12345678901. x",
    "<https://x>",
    "",
]


def _line() -> st.SearchStrategy[str]:
    return st.builds(lambda p, s: p + s, st.sampled_from(_PREFIXES), st.sampled_from(_STARTS))


_BODIES = st.lists(_line(), max_size=25).map("\n".join)


def _tokens(md: object, text: str) -> list[tuple[object, ...]]:
    return [
        (t.type, t.tag, t.map, t.level, t.nesting, t.content, t.info, t.markup, t.block)
        for t in md.parse(text)  # type: ignore[attr-defined]
    ]


@settings(max_examples=1500, deadline=None)
@given(body=_BODIES)
def test_reduced_parser_gives_the_full_parsers_tokens(body: str) -> None:
    reduced = blockrules.parser_for(body)
    assert _tokens(reduced, body) == _tokens(_markdown(), body)


def test_the_generated_bodies_reach_every_rule_and_the_smallest_parser() -> None:
    """The property above is worth what its bodies exercise: each rule fires somewhere in
    them under the full parser, and plain bodies do get the base parser."""
    fired: set[str] = set()
    full = _markdown()
    for start in _STARTS:
        for prefix in _PREFIXES:
            fired |= {t.type for t in full.parse("para\n\n" + prefix + start + "\nnext\n")}
            fired |= {t.type for t in full.parse("para\n" + prefix + start + "\n")}
    assert {
        "code_block",
        "fence",
        "blockquote_open",
        "hr",
        "bullet_list_open",
        "ordered_list_open",
        "html_block",
        "heading_open",
        "paragraph_open",
    } <= fired
    # Reference definitions leave no token: their effect is the paragraph they remove.
    assert blockrules.needed_rules("# Title\n\n## Definition\n\nText.\n") == frozenset()
    assert blockrules.needed_rules("# T\n\n- a\n- b\n") == {"list", "hr", "lheading"}


@settings(max_examples=300, deadline=None)
@given(body=_BODIES, kind=st.sampled_from(["glossary", "enum", "formula", "example"]))
def test_units_parsed_with_either_parser_are_the_same(body: str, kind: str) -> None:
    text = (
        f"---\nid: evidence:t:{kind}-x\nkind: {kind}\nlanguage: en\npurposes: [disambiguation]\n"
        "---\n\n# Title\n\n" + body + "\n"
    )
    reduced = parse_module.parse_unit(text)
    reduced_for = body_module.parser_for
    body_module.parser_for = lambda _text: _markdown()
    try:
        full = parse_module.parse_unit(text)
    finally:
        body_module.parser_for = reduced_for
    assert reduced.errors == full.errors
    assert reduced.warnings == full.warnings
    assert reduced.unit == full.unit


@settings(max_examples=400, deadline=None)
@given(body=_BODIES, kind=st.sampled_from(["glossary", "formula", "example", "reference"]))
def test_the_open_block_check_skips_only_bodies_it_cannot_concern(body: str, kind: str) -> None:
    """check_closed reparses the last block of a field unless the line scan proves no
    fence or HTML block begins in it: E114 must come out the same either way."""
    text = (
        f"---\nid: evidence:t:{kind}-y\nkind: {kind}\nlanguage: en\npurposes: [disambiguation]\n"
        "---\n\n# Title\n\n" + body + "\n"
    )
    scanned = parse_module.parse_unit(text)
    real = body_module.may_stay_open
    body_module.may_stay_open = lambda _lines: True
    try:
        always = parse_module.parse_unit(text)
    finally:
        body_module.may_stay_open = real
    assert scanned.errors == always.errors
    assert scanned.unit == always.unit


def test_an_open_fence_or_html_block_is_still_found() -> None:
    for opener, closer in (
        ("```sql", "```"),
        ("~~~", "~~~"),
        ("<pre>", "</pre>"),
        ("<!-- note", "-->"),
    ):
        text = (
            "---\nid: evidence:t:example-z\nkind: example\nlanguage: en\n"
            "purposes: [disambiguation]\n---\n\n# T\n\n## Question\n\nQ?\n\n"
            f"## Interpretation\n\nI.\n\n{opener}\nSELECT 1\n"
        )
        codes = [d.code for d in parse_module.parse_unit(text).errors]
        assert "E114" in codes, (opener, codes)
        closed = parse_module.parse_unit(text + closer + "\n")
        assert "E114" not in [d.code for d in closed.errors], opener
