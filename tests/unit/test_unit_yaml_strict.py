"""Strict YAML: what the loader refuses, where it says so, and dump/load symmetry."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from unit_helpers import DOMAIN_BODY, PROPERTY, strictly_equal, unit_text
from unit_strategies import yaml_data

from evidence_tool.unit import Metadata, Unit, parse, render
from evidence_tool.unit.model import DomainPayload
from evidence_tool.unit.yaml_strict import MAX_DEPTH, YamlProblem, dump, load, resolve_plain


@pytest.mark.parametrize(
    "plain, value",
    [
        ("no", "no"),
        ("on", "on"),
        ("yes", "yes"),
        ("2024-01-01", "2024-01-01"),
        ("1e3", 1000.0),
        ("0x1f", 31),
        ("0o17", 15),
        ("~", None),
        ("", None),
        ("true", True),
        ("False", False),
        (".inf", math.inf),
        ("12:30", "12:30"),
    ],
)
def test_plain_scalars_resolve_by_the_yaml_1_2_core_schema(plain: str, value: object) -> None:
    assert resolve_plain(plain) == value and type(resolve_plain(plain)) is type(value)


@pytest.mark.parametrize(
    "unit_id",
    [
        "evidence:no",
        "evidence:on",
        "evidence:off",
        "evidence:1e3",
        "evidence:2024-01-01",
        "evidence:null",
        "evidence:true",
        "evidence:0x1f",
        "evidence:12",
        "evidence:a:b.c_d-e",
    ],
)
def test_ids_that_look_like_yaml_values_round_trip_exactly(unit_id: str) -> None:
    unit = Unit(
        Metadata(id=unit_id, kind="domain", language="en", purposes=("rewriting",)),
        "T",
        DomainPayload("x"),
    )
    text = render(unit)
    assert parse(text) == unit
    assert parse(unit_text(DOMAIN_BODY, id=unit_id)).id == unit_id  # written plain by hand


def test_language_no_is_the_string_no() -> None:
    # YAML 1.1 would read Norwegian as false.
    assert parse(unit_text(DOMAIN_BODY, language="no")).language == "no"


def test_marks_are_in_file_coordinates_with_line_offset() -> None:
    # Regression: marks ignored line_offset, so metadata errors pointed one line too high.
    doc = load("a: 1\nb:\n  c: [x, y]\n", line_offset=10)
    assert doc.mark(("a",)) == (11, 1)
    assert doc.mark(("b", "c")) == (13, 3)
    assert doc.mark(("b", "c", 1)) == (13, 10)


def test_duplicate_keys_are_all_collected_and_the_first_value_kept() -> None:
    doc = load("a: 1\na: 2\nb: 3\na: 4\n")
    assert doc.value == {"a": 1, "b": 3}
    assert [(p.code, p.line) for p in doc.duplicates] == [("E103", 2), ("E103", 4)]


def test_load_takes_many_keys_and_refuses_deep_nesting() -> None:
    # Regression: duplicate detection compared each key with all before it (50,000 keys took
    # minutes), and key paths were rebuilt at every level of nesting.  Its growth is
    # measured by bench/parser_growth.py (the yaml row); pytest's timeout ends a runaway.
    many = "".join(f"k{i}: {i}\n" for i in range(50_000))
    assert len(load(many).value) == 50_000
    with pytest.raises(YamlProblem):
        load("[" * 100_000)


def test_keys_of_different_types_are_not_duplicates() -> None:
    doc = load("'1': a\n1: b\n")
    assert doc.duplicates == [] and strictly_equal(doc.value, {"1": "a", 1: "b"})


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("a: &x 1\n", "anchors"),
        ("a: *x\n", "aliases"),
        ("a: !!str 1\n", "tags"),
        ("a: !custom 1\n", "tags"),
        ("--- 1\n--- 2\n", "only one YAML document"),
        ("a: [1\n", "YAML syntax"),
        ("a: b: c\n", "YAML syntax"),
        ("\t- a\n", "YAML syntax"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper"),
    ],
)
def test_refused_yaml_is_a_problem_E102(text: str, fragment: str) -> None:
    with pytest.raises(YamlProblem) as caught:
        load(text)
    assert caught.value.code == "E102" and fragment in caught.value.message


def test_nesting_up_to_the_limit_is_accepted() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    value = load(text).value
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == []


@pytest.mark.parametrize(
    "value",
    [
        {"a" * 1100: 1},
        {"x": {"é" * 1030: [1, {"b" * 1100: None}]}},
        [{"k" * 1100: {"y": 2}, "z": [1, 2]}],
        {"list": [[[]], [{}], [[1, [2]]], [{"a": [1]}]]},
    ],
    ids=["long key", "long non-ASCII key nested", "long key in a list item", "nested lists"],
)
def test_dump_handles_long_keys_and_nested_collections(value: object) -> None:
    # Regression: keys over YAML's 1024-character implicit-key limit and lists nested in
    # lists could not be dumped in a form that loads back.
    assert strictly_equal(load(dump(value)).value, value)


@PROPERTY
@given(yaml_data)
def test_dump_then_load_gives_back_the_same_data(value: object) -> None:
    assert strictly_equal(load(dump(value)).value, value)


@PROPERTY
@given(yaml_data)
def test_dump_with_flow_lists_loads_back_the_same_data(value: object) -> None:
    flow = frozenset({"purposes", "", "a"})
    assert strictly_equal(load(dump(value, flow_keys=flow)).value, value)


@PROPERTY
@given(yaml_data)
def test_dump_is_deterministic(value: object) -> None:
    assert dump(value) == dump(load(dump(value)).value)


@pytest.mark.parametrize(
    "value", [b"\x00id", {"digest": bytearray(b"ab")}, {"files": [b"a.md"]}, [{"k": b""}]]
)
def test_dump_refuses_bytes_instead_of_writing_them_as_numbers(value: object) -> None:
    """A managed file never holds raw bytes: a caller that forgot to decode gets TypeError,
    not a list of byte values that would load back as numbers."""
    with pytest.raises(TypeError, match="cannot emit"):
        dump(value)
