"""``unit.yaml_emit``: what the publishers write loads back to the same values, comments
and literal blocks included (a published Cortex model or dbt patch is read by YAML
parsers this project does not control)."""

from __future__ import annotations

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
