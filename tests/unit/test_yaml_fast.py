"""The frontmatter line reader (yaml_fast) builds exactly what the event loader builds.

Whenever ``load_canonical`` accepts a text, its YamlDoc must equal the event loader's:
values with their types (``1`` is not ``1.0`` nor ``True``), marks with the same
positions in the same order, no duplicates.  Whatever it refuses goes to the event
loader, so refusals are not its business; the sweeps count both outcomes, so a reader
that refuses everything (or accepts everything) fails them.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit_helpers import PROPERTY
from unit_strategies import metadata, units

from evidence_tool.unit import KINDS, AppliesTo, Metadata, Unit, render
from evidence_tool.unit._speed.yaml_fast import load_canonical
from evidence_tool.unit.model import DomainPayload
from evidence_tool.unit.parse import split_frontmatter
from evidence_tool.unit.yaml_strict import YamlDoc, YamlProblem, load, load_events

SOAK = os.environ.get("THT_SOAK") == "1"
EXAMPLES = 2000 if SOAK else 150


def typed(value: Any) -> Any:
    """``value`` with every scalar paired with its type: ``1 == 1.0 == True`` is no proof."""
    if isinstance(value, dict):
        return [(typed(k), typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return ["list", *(typed(v) for v in value)]
    return (type(value).__name__, repr(value))


def same_doc(fast: YamlDoc, slow: YamlDoc) -> None:
    assert typed(fast.value) == typed(slow.value)
    assert list(fast.marks.items()) == list(slow.marks.items())
    assert fast.duplicates == slow.duplicates == []


def frontmatter(unit: Unit) -> str:
    split = split_frontmatter(render(unit))
    assert not isinstance(split, Exception) and isinstance(split, tuple)
    return split[0]


def check(text: str, line_offset: int = 1) -> bool:
    """True if the fast reader took ``text``; fails if what it built differs."""
    fast = load_canonical(text, line_offset)
    if fast is None:
        return False
    try:
        slow = load_events(text, line_offset=line_offset)
    except YamlProblem as exc:  # accepted what the event loader refuses
        raise AssertionError(f"fast path accepted {text!r}; events refuse: {exc.message}") from None
    same_doc(fast, slow)
    return True


PER_KIND = EXAMPLES // 15


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("kind", KINDS)
def test_rendered_frontmatter_always_takes_the_fast_path_and_matches(
    kind: str, language: str
) -> None:
    taken = [0]

    @settings(PROPERTY, max_examples=PER_KIND)
    @given(units(kinds=(kind,)), st.integers(0, 40))
    def run(unit: Unit, offset: int) -> None:
        meta = Metadata(**{**unit.metadata.__dict__, "language": language})
        text = frontmatter(Unit(meta, unit.title, unit.payload))
        assert check(text, offset), f"rendered frontmatter refused: {text!r}"
        taken[0] += 1

    run()
    # Every example of this kind and language ran through the fast path.
    assert taken[0] == PER_KIND


# YAML's indicators and the characters it reads specially, plus a few ordinary ones so
# that a mutation sometimes keeps the text valid.
HOSTILE = [
    " ", "  ", "\t", "\n", ":", ": ", "#", " #", "-", "- ", "? ", "&a ", "*a", "!t ", "!!str ",
    "|", ">", "%", "@", "`", "'", '"', "\\", "\\u", "\\x41", "\\/", "\\n", "\\t", "\\0", "\\e",
    "\\ud800", "\\u00e9", "[", "]", "{", "}", ",", ", ", "\x85", "\u2028", "\u2029", "\ufeff",
    "\x00", "\x07", "\x7f", "\x9f", "\ufffe", "\r", "é", "😀", "a", "Z", "_", "0", "1", ".",
    "~", "null", "true", "1e3", "0x1f", ".inf", "---", "...", "a: b", "x", "\xa0",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """Rendered frontmatter with one to three hostile edits."""
    # The frontmatter is the metadata's alone: a short body keeps the examples cheap.
    meta = draw(metadata("domain"))
    text = frontmatter(Unit(meta, "T", DomainPayload("r")))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "insert", "delete", "replace", "swap", "indent"]))
        lines = text[:-1].split("\n")
        if op == "swap" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines) + "\n"
        elif op == "indent":
            i = draw(st.integers(0, len(lines) - 1))
            change = draw(st.sampled_from(["", " ", "  ", "    ", "\t", "-1", "-2"]))
            lines[i] = lines[i][int(change[1:]) :] if change.startswith("-") else change + lines[i]
            text = "\n".join(lines) + "\n"
        else:
            at = draw(st.integers(0, len(text)))
            piece = draw(st.sampled_from(HOSTILE)) if op != "delete" else ""
            cut = 0 if op == "insert" else draw(st.integers(1, 3))
            text = text[:at] + piece + text[at + cut :]
    return text


def test_mutated_frontmatter_is_either_refused_or_read_identically() -> None:
    outcome = {"taken": 0, "refused": 0}

    @settings(PROPERTY, max_examples=EXAMPLES * 2)
    @given(mutated(), st.integers(0, 5))
    def run(text: str, offset: int) -> None:
        outcome["taken" if check(text, offset) else "refused"] += 1

    run()
    assert outcome["taken"] + outcome["refused"] == EXAMPLES * 2
    # Both sides really ran: some mutations stay in the subset (a changed value, a swapped
    # line), most leave it.
    assert outcome["taken"] > EXAMPLES // 10, outcome
    assert outcome["refused"] > EXAMPLES // 10, outcome


def test_managed_style_text_matches_whichever_path_reads_it() -> None:
    """Keys that resolve to non-strings, numbers, escapes, empty lists: the same document."""
    texts = [
        "nul: 1\ntru: [0x1f, 0o17, 1e3, 12, 4.5, yes, no, null, True]\nFalsy: x\n",
        'a: "\\u0000\\u2028\\ufeff\\"\\\\\\/\\b\\f\\n\\r\\t"\nb: []\n',
        'schema_version: 4\nid: evidence:no:on\nlist: [a b, c\'d, e.f, "g, h", xé]\n',
        "outer:\n  k: v\n  l: [1]\nnext: 2\n",
    ]
    taken = [check(t) for t in texts]
    assert taken == [True, True, True, True]


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate: E103 from the event loader
        "a: 1\n\nb: 2\n",  # blank line
        "a: 1 # note\n",  # comment
        "a:\n  - x\n",  # block sequence
        "a: &x 1\n",  # anchor
        "a: !t 1\n",  # tag
        "a: 'x'\n",  # single quotes
        'a: "\\x41"\n',  # an escape JSON does not read
        'a: "\\ud83d\\ude00"\n',  # a surrogate escape libyaml refuses
        "a: \tx\n",  # tab
        "a: 1 \n",  # trailing blank
        "a:\n   b: 1\n",  # odd indentation
        "a:\n    b: 1\n",  # deeper indentation
        "a:\n  b:\n    c: 1\n",  # a second level of nesting
        "a: x\u2028y\n",  # a YAML 1.1 line break
        "a: \x85\n",  # NEL
        '\ufeffa: "x"\n',  # BOM
        "a: [x, [y]]\n",  # nested flow
        "a: {b: 1}\n",  # flow mapping
        "a:\n",  # null by omission
        "a: 1",  # no final newline
        "",  # empty
        "k" * 65 + ": 1\n",  # long key
        "a: x\n  b: y\n",  # an indented line after a scalar
        "true: 1\nTrue: 2\n",  # keys that are not strings (here a duplicate, E103)
        "null: x\n",  # a null key
    ],
)
def test_text_outside_the_subset_is_left_to_the_event_loader(text: str) -> None:
    assert load_canonical(text, 1) is None
    # load() then answers as the event loader does, refusal included.
    try:
        expected: YamlDoc | YamlProblem = load_events(text, line_offset=1)
    except YamlProblem as exc:
        expected = exc
    try:
        got: YamlDoc | YamlProblem = load(text, line_offset=1)
    except YamlProblem as exc:
        got = exc
    if isinstance(expected, YamlProblem):
        assert isinstance(got, YamlProblem)
        assert (got.code, got.message, got.line, got.column) == (
            expected.code,
            expected.message,
            expected.line,
            expected.column,
        )
    else:
        assert isinstance(got, YamlDoc)
        same_doc_or_dupes(got, expected)


def same_doc_or_dupes(a: YamlDoc, b: YamlDoc) -> None:
    assert typed(a.value) == typed(b.value)
    assert list(a.marks.items()) == list(b.marks.items())
    assert [(d.code, d.message, d.line, d.column) for d in a.duplicates] == [
        (d.code, d.message, d.line, d.column) for d in b.duplicates
    ]


@settings(PROPERTY, max_examples=50)
@given(metadata("domain"))
def test_applies_to_of_every_shape_takes_the_fast_path(meta: Metadata) -> None:
    for applies in (meta.applies_to, AppliesTo(), AppliesTo(("x",), (), ())):
        unit = Unit(Metadata(**{**meta.__dict__, "applies_to": applies}), "T", DomainPayload("r"))
        assert check(frontmatter(unit))
