"""Issue 28, speed: ``renders_back`` vouches for a typed unit's text without parsing it.

Its one promise: whenever it answers True, ``parse_unit(render(u))`` gives ``u`` with no
error (an importer's unit then skips the parse).  Checked on units built from pieces
that Markdown, YAML and the body parser treat specially (headings, fences, HTML, quotes,
setext underlines, odd whitespace, quotes and escapes, bad references), so that both
answers occur many times; and on the generated valid units of ``unit_strategies``.
"""

from __future__ import annotations

import random

from hypothesis import given
from unit_helpers import budget
from unit_strategies import units

from evidence_tool.unit import (
    FIELDS,
    KINDS,
    PAYLOAD_CLASSES,
    AppliesTo,
    EnumValue,
    Metadata,
    Unit,
    parse_unit,
    render,
)
from evidence_tool.unit._speed.roundtrip import renders_back

PIECES = [
    "#", "# ", "## Rule", "## Definition", '### "x"', "#x", "\\#", " #", "```", "~~~", "``",
    "`O`", "~", "<", "<!--", "<div>", "<script>", ">", "> q", "[a]: /b", "[a]", "-", "---",
    "- ", "* ", "+ ", "1. ", "1) ", "=", "===", "   ", "    code", "\t", "\n", "\n\n", " \n",
    "\u00a0", "\u2028", "\x0b", "\x85", "\ufeff", "\x00", "\r", '"', "\\", "'", ":", ": ",
    "a", "word", "é", "日本", "SELECT 1", "x = 1", "null", "true", "1.5", "***", "___",
]  # fmt: skip
REFS = ["s.t", "s.t.c", '"My Schema".t', '"My Schema".t.c', '"a""b".t']
BAD_REFS = ["bad ref", "s..t", "", "s.t "]
URLS = ["https://x.org/a", "http://h:8080/p?q=1"]
BAD_URLS = ["http://", "ftp://x.org", "https://x.org/a b"]
SQL = ["1", "sum(a) / count(b)", "a * 2\n  + b"]
BAD_SQL = ["SELECT 1", "a +", "", "\nsum(a)", "a -- x\n", "a ``` b", "1; 2"]
PURPOSES = ["disambiguation", "rewriting", "schema_linking", "sql_generation"]
FENCED = [
    "```sql\nSELECT 1\n```", "````\n```\n# not a heading\n````", "~~~\n<div>\n## Rule\n~~~",
    "```sql\nSELECT 1\n  ```\n```", "```sql\nSELECT 1", "```x y\nz\n```", "```\n~~~\n```",
    "~~~~\n~~~\n~~~~ \nafter", "```sql\nSELECT 1\n```\n## Rule", "```\n```",
]  # fmt: skip
PLAIN = ["a", "word", "é", "`O`", "x = 1", "50%", "- `F`: free", "1. first", "a\nb"]


class Gen:
    """Units whose every part is plain with probability ``p`` (one ``p`` per unit, so
    wholly plain units, units with one odd part and hostile units all occur)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.p = 1.0

    def pick(self, good: list[str], bad: list[str]) -> str:
        if self.rng.random() < self.p:
            return self.rng.choice(good)
        return self.rng.choice(bad) if self.rng.random() < 0.5 else self.odd()

    def odd(self) -> str:
        return "".join(self.rng.choice(PIECES) for _ in range(self.rng.randint(0, 6)))

    def text(self) -> str:
        plain = " ".join(self.rng.choice(PLAIN) for _ in range(self.rng.randint(1, 3)))
        if self.rng.random() < 0.3:  # a fenced block after the prose, closed or not
            plain += "\n\n" + self.rng.choice(FENCED)
        return plain if self.rng.random() < self.p else self.odd()

    def strings(self, good: list[str], bad: list[str], most: int) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.pick(good, bad) for _ in range(self.rng.randint(0, most))))

    def value(self, type_: str) -> object:
        if type_ == "text":
            return self.text()
        if type_ in ("tables", "columns"):
            return self.strings(REFS, BAD_REFS, 3)
        if type_ == "list":
            return self.strings(["night", "stay", "ward code", 'say "hi"'], [" x"], 3)
        if type_ == "column":
            return self.pick(REFS, BAD_REFS)
        if type_ == "url":
            return self.pick(URLS, BAD_URLS)
        if type_ == "scalar":
            return self.pick(["stay", "ward code", "-x", "[a]"], ["", " x", "---", "- <b>"])
        if type_ == "values":
            n = self.rng.randint(1 if self.rng.random() < self.p else 0, 3)
            return tuple(
                EnumValue(self.pick(["O", "F", "", "a b"], ["\u2028", "O"]), self.text())
                for _ in range(n)
            )
        if type_ == "sql":
            return self.pick(SQL, BAD_SQL)
        raise AssertionError(type_)

    def unit(self) -> Unit:
        self.p = self.rng.choice([1.0, 1.0, 0.9, 0.5])
        kind = self.rng.choice(KINDS)
        meta = Metadata(
            id=self.pick(["evidence:t:a", "evidence:t:a.b-c"], ["Evidence:x", "evidence:t:"]),
            kind=kind,
            language=self.pick(["en", "it", "it-CH"], ["EN", "e"]),
            purposes=tuple(self.rng.sample(PURPOSES, self.rng.randint(1, 2)))
            if self.rng.random() < self.p
            else ("other",),
            applies_to=AppliesTo(
                self.strings(["stay", "ward code"], [" x", ""], 2),
                self.strings(REFS[:3], BAD_REFS, 2),
                self.strings(REFS[:2], BAD_REFS, 2),
            ),
        )
        values = {spec.name: self.value(spec.type) for spec in FIELDS[kind]}
        title = self.pick(["Stay", "Ward code (ADT)", "a: b", "x = 1"], ["# x", "x #", " x"])
        return Unit(meta, title, PAYLOAD_CLASSES[kind](**values))


def test_a_unit_vouched_for_parses_back_equal() -> None:
    gen = Gen(random.Random(28))
    vouched = refused = agreed_anyway = 0
    for _ in range(2000):
        unit = gen.unit()
        text = render(unit)
        parsed = parse_unit(text)
        if renders_back(unit, text):
            vouched += 1
            assert not parsed.errors and parsed.unit == unit, text
        else:
            refused += 1
            agreed_anyway += parsed.unit == unit and not parsed.errors
    # Both answers many times: the sweep proves something about each.
    assert vouched >= 250, vouched
    assert refused >= 1000, refused
    assert agreed_anyway >= 20  # a refusal is only caution: the parse decides then


def test_a_list_where_the_parse_builds_a_tuple_is_not_vouched_for() -> None:
    meta = Metadata("evidence:t:a", "glossary", "en", ("rewriting",))
    unit = Unit(meta, "Stay", PAYLOAD_CLASSES["glossary"]("A night.", ["night"]))  # type: ignore[call-arg, arg-type]
    text = render(unit)
    assert parse_unit(text).unit != unit
    assert not renders_back(unit, text)


@budget(40)
@given(units())
def test_a_generated_valid_unit_is_vouched_for_only_when_it_parses_back(unit: Unit) -> None:
    text = render(unit)
    if renders_back(unit, text):
        parsed = parse_unit(text)
        assert not parsed.errors and parsed.unit == unit
