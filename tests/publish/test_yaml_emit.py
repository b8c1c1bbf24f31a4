"""``unit.yaml_emit``: what the publishers write loads back to the same values, comments
and literal blocks included (a published Cortex model or dbt patch is read by YAML
parsers this project does not control)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.unit.yaml_emit import Commented, dump
from evidence_tool.unit.yaml_strict import load

TRICKY = [
    "SELECT a\nFROM t\nWHERE b = 'x'",
    "ends with a newline\n",
    "two trailing\n\n",
    "  leading spaces\nthen text",
    "line with trailing spaces   \nnext",
    "tab\tinside\nand\tthere",
    "carriage\r\nreturn",
    "No",
    "yes",
    "007",
    "# not a comment",
    "key: value",
    "- not a list",
    "",
    "\u2028 separator",
    "blank\n\n\nlines inside",
    "  \n only spaces on a line",
]


def _roundtrip(value: Any) -> Any:
    return load(dump(value)).value


def test_tricky_texts_come_back_exactly() -> None:
    for text in TRICKY:
        assert _roundtrip({"k": text, "l": [text, {"m": text}]}) == {
            "k": text,
            "l": [text, {"m": text}],
        }, repr(text)
    assert len(TRICKY) == 17


def test_comments_sit_above_their_entry_and_change_no_value() -> None:
    value = {
        "tables": [Commented({"name": "t", "sql": "SELECT 1\nFROM x"}, "evidence:a @ rev")],
        "note": Commented("text", "two\nlines"),
    }
    text = dump(value)
    assert "  # evidence:a @ rev\n  - name: t\n" in text
    assert "# two\n# lines\nnote: text\n" in text
    assert load(text).value == {
        "tables": [{"name": "t", "sql": "SELECT 1\nFROM x"}],
        "note": "text",
    }
    assert "sql: |-\n" in text  # multi-line SQL reads as written


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=40), max_size=4))
def test_any_text_round_trips(value: dict[str, str]) -> None:
    assert _roundtrip({"m": value, "l": list(value.values())}) == {
        "m": value,
        "l": list(value.values()),
    }


# Characters that end a line for some YAML reader (CR, NEL, LS, PS), that a reader refuses
# raw (NUL, other C0/C1 controls, lone surrogates, U+FFFE) or that hides text (a BOM, bidi
# controls): user text carrying them must stay inside its comment.
_BREAKERS = "\r\x00\x01\x07\x08\x0b\x0c\x1b\x1f\x7f\x85\x9f\u2028\u2029\ufeff\ufffe\ud800\u202e"
_COMMENT_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from(_BREAKERS + "\n\t #:-'\"{}[]|>&*!%@`"), st.characters()),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(_COMMENT_TEXT, _COMMENT_TEXT)
def test_any_comment_text_stays_a_comment(first: str, second: str) -> None:
    """Whatever a comment says (a unit id, a table name: text from the curated files), the
    document reads back as the same data and no line of the comment becomes YAML."""
    value = {
        "tables": [Commented({"name": "t"}, first), "plain"],
        "note": Commented("text", second),
        "nested": {"k": Commented([1, 2], first + second)},
    }
    text = dump(value)
    text.encode("utf-8")  # writable: no lone surrogate reaches the file
    assert load(text).value == {
        "tables": [{"name": "t"}, "plain"],
        "note": "text",
        "nested": {"k": [1, 2]},
    }
    assert _roundtrip_ruamel(text) == load(text).value
    for line in text.split("\n"):
        assert not _LINE_BREAKS.search(line), repr(line)  # one physical line per YAML line


_LINE_BREAKS = re.compile("[\r\x85\u2028\u2029]")


def _roundtrip_ruamel(text: str) -> Any:
    """A second, pure-Python reader (ruamel's safe loader): what another tool would see."""
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def test_control_characters_in_a_comment_are_escaped_visibly() -> None:
    cases = {
        "evil\rinjected: 1": "# evil\\rinjected: 1",
        "nul\x00byte": "# nul\\x00byte",
        "ls\u2028key: 2": "# ls\\u2028key: 2",
        "\ufeffbom": "# \\ufeffbom",
        "esc\x1b[31m": "# esc\\x1b[31m",
        "tab\tkept": "# tab\tkept",
    }
    for comment, line in cases.items():
        text = dump({"k": Commented("v", comment)})
        assert text == f"{line}\nk: v\n", (comment, text)
    assert len(cases) == 6
