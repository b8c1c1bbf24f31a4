"""Every text parser of the importers does work linear in its input (issue 27, G1).

Each case grows a hostile input 4x (long blank runs where a pattern backtracks, many
blocks or values where a step rescans from the start) and asserts the work grows at
most ~8x (``linear.assert_linear``: a ratio of two CPU timings, never an absolute time).
The parsers' answers on ordinary input are pinned next to each case, so a faster parser
that reads differently fails too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from linear import assert_linear

from evidence_tool.importers import (
    bird,
    cortex,
    dbt_model,
    spans,
    wrenai,
)
from evidence_tool.workspace import redact

_WREN_MODELS = {
    "orders": wrenai.Model("orders", "public", "orders"),
    "users": wrenai.Model("users", "public", "users"),
}

# name -> (parser, input of size n, n)
CASES: dict[str, tuple[Callable[[Any], object], Callable[[int], Any], int]] = {
    # a heading whose text hides a long run of tabs and closing hashes
    "markdown heading": (
        lambda raw: spans.sections(raw),
        lambda n: b"intro\n\n### q" + b" \t" * n + b"z\nbody\n",
        40,
    ),
    "markdown many headings": (
        lambda raw: spans.sections(raw),
        lambda n: b"".join(b"## h%d ##\ntext %d\n" % (i, i) for i in range(n)),
        400,
    ),
    "dbt table row": (
        lambda text: dbt_model.meanings(text, ["k"]),
        lambda n: "| k" + "\t" * n + "| v" + "\t" * n + "\n",
        60,
    ),
    "dbt bullet": (
        lambda text: dbt_model.meanings(text, ["k"]),
        lambda n: "* k" + " " * n + "x" + " " * n + "\n",
        300,
    ),
    "dbt equals": (
        lambda text: dbt_model.meanings(text, ["k"]),
        lambda n: "k" + " " * n + "j = m" + " " * n + "n\n",
        300,
    ),
    "dbt docs blocks": (
        lambda raw: dbt_model.docs_blocks("d.md", "d.md", raw),
        lambda n: b"".join(
            b"{%% docs b%d %%}\nText %d.\n{%% enddocs %%}\n" % (i, i) for i in range(n)
        ),
        800,
    ),
    "dbt docs tag never closed": (
        lambda raw: dbt_model.docs_blocks("d.md", "d.md", raw),
        lambda n: b"{% docs a" + b" " * n + b"\n",
        1000,
    ),
    "dbt ref()": (
        lambda text: dbt_model.ref_model(text),
        lambda n: "ref('m', v=" + " " * n + ")" + " " * n + "!",
        300,
    ),
    "bird value description": (
        lambda text: bird.code_list(text),
        lambda n: "Q: one" + "\t" * n + "two; R: three",
        600,
    ),
    "bird evidence definition": (
        lambda text: bird.read_fragment(text, frozenset()),
        lambda n: "total" + " " * n + "x",
        600,
    ),
    "cortex sample values": (
        lambda arg: cortex._meanings(*arg),
        lambda n: (
            ", ".join(f"v{i} = meaning {i}" for i in range(n)),
            [f"v{i}" for i in range(n)],
        ),
        150,
    ),
    "cortex blank run": (
        lambda arg: cortex._meanings(*arg),
        lambda n: ("k =" + " " * n + "x" + " " * n + "y", ["k"]),
        300,
    ),
    "wrenai condition": (
        lambda text: wrenai.condition_columns(text, _WREN_MODELS),
        lambda n: "orders.id" + " " * n + "= users.id",
        600,
    ),
    "redacted url": (
        lambda text: redact.redact_urls(text),
        lambda n: "s" * n + " ://" + "x" * 10,
        600,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parser_work_grows_linearly(name: str) -> None:
    fn, make, n = CASES[name]
    assert_linear(fn, make, n)


def test_every_case_ran() -> None:
    assert len(CASES) == 14


# -- the answers stay what they were ---------------------------------------------------


@pytest.mark.parametrize(
    ("line", "title"),
    [
        (b"# Title", "Title"),
        (b"## Two words ##", "Two words"),
        (b"### t \t##  \r", "t"),
        (b"#  a#b #", "a#b"),
        (b"# x ####x", "x ####x"),
        (b"#\ttab\t", "tab"),
        (b"# #", ""),
    ],
)
def test_heading_text(line: bytes, title: str) -> None:
    _, found = spans.sections(b"intro\n" + line + b"\nbody\n")
    assert [s.title for s in found] == [None, title]


@pytest.mark.parametrize("line", [b"#nospace", b"####### seven", b"    # indented", b"##"])
def test_not_a_heading(line: bytes) -> None:
    _, found = spans.sections(b"intro\n" + line + b"\nbody\n")
    assert [s.title for s in found] == [None]


def test_dbt_value_lists() -> None:
    text = "\n".join(
        [
            "| `a` | first |",
            "|b|second|extra|",
            "* c: third",
            "- 'd' - fourth",
            "+ e = fifth  ",
            "f = sixth",
            "  g   =   seventh  ",
            "| h | |",
            "- i:no space",
            "- j \u2013 eighth",
        ]
    )
    got = dbt_model.meanings(text, list("abcdefghij"))
    assert got == {
        "a": "first",
        "b": "second",
        "c": "third",
        "d": "fourth",
        "e": "fifth",
        "f": "sixth",
        "g": "seventh",
        "j": "eighth",
    }


def test_dbt_docs_block_lines_and_spans() -> None:
    raw = (
        "\ufeffintro\n{% docs one %}\n  Ä text\n{% enddocs %}\n\n{%- docs two -%}x{%- enddocs -%}\n"
    )
    data = raw.encode("utf-8")
    blocks = dbt_model.docs_blocks("d.md", "d.md", data)
    assert [(b.name, b.text, b.where) for b in blocks] == [
        ("one", "Ä text", "d.md:3"),
        ("two", "x", "d.md:6"),
    ]
    for b in blocks:
        assert data[b.span.start : b.span.end].decode() == b.span.text


def test_ref_model() -> None:
    assert dbt_model.ref_model(" ref('orders') ") == "orders"
    assert dbt_model.ref_model('ref("o", version = 2)') == "o"
    assert dbt_model.ref_model("ref('o', v=1) x") is None
    assert dbt_model.ref_model("orders") is None


def test_code_list() -> None:
    assert bird.code_list("0: no; 1: yes  ") == [("0", "no"), ("1", "yes")]
    assert bird.code_list('"W": white, "B" = black') == [
        ("W", "white"),
        ("B", "black"),
    ]


def test_cortex_meanings() -> None:
    desc = "Status: A = active, 'B' -> blocked; C: closed. D = done"
    assert cortex._meanings(desc, ["A", "B", "C", "D", "E"]) == {
        "A": "active",
        "B": "blocked",
        "C": "closed",
        "D": "done",
    }
    assert cortex._meanings("XA = no", ["A"]) == {}  # A inside a word is not the value
    assert cortex._meanings("1-A = dash", ["A", "1-A"]) == {"A": "dash", "1-A": "dash"}
    assert cortex._meanings(None, ["A"]) == {}


def test_wrenai_condition() -> None:
    got = wrenai.condition_columns("orders.uid = users.id AND\torders.x=users.y", _WREN_MODELS)
    assert got == [
        "public.orders.uid",
        "public.users.id",
        "public.orders.x",
        "public.users.y",
    ]


def test_redact_urls() -> None:
    text = "see 1x+http://u:p@h/a?token=s and ftp://h2/b, not a://"
    out = redact.redact_urls(text)
    assert "p@" not in out and "token=s" not in out and "ftp://h2/b" in out
    assert redact.redact_urls("no url here") == "no url here"
