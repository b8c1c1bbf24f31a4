"""Issue 2, part 5: properties over generated units, texts, bytes and metadata.

Budgets are sized so the whole tests/unit run stays well under a minute on two
cores; ``PROPERTY`` derandomizes, so a run is reproducible.
"""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from unit_helpers import budget
from unit_strategies import (
    KINDS,
    has_trailing_newline,
    metadata_dicts,
    reformatted,
    units,
)

from bench.parser_growth import hostile
from evidence_tool.errors import CODES
from evidence_tool.unit import (
    ParseResult,
    Unit,
    file_hash,
    parse,
    parse_unit,
    render,
    validate,
)
from evidence_tool.unit.metadata import check_metadata, compile_schema
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlDoc

# -- valid units: both directions of the canonical form ----------------------------------


@pytest.mark.parametrize("kind", KINDS)
@budget(25)
@given(data=st.data())
def test_a_generated_unit_survives_render_and_parse(kind: str, data: st.DataObject) -> None:
    unit = data.draw(units((kind,)))

    text = render(unit)

    assert parse(text) == unit
    assert validate(unit) == []
    assert render(parse(text)) == text  # canonical text is a fixed point


@budget(150)
@given(units())
def test_canonical_text_is_stable_under_parse_and_render(unit: Unit) -> None:
    text = render(unit)

    from_str, from_bytes = parse_unit(text), parse_unit(text.encode())

    assert from_str == from_bytes  # same unit, diagnostics and warnings either way
    assert from_str.unit is not None and render(from_str.unit) == text
    assert {w.code for w in from_str.warnings} <= {"W111"}  # a prose heading may be near a field


@budget(150)
@given(st.data())
def test_a_reformatted_unit_parses_to_the_same_unit(data: st.DataObject) -> None:
    unit = data.draw(units())
    canonical = render(unit)
    variant = data.draw(reformatted(unit))

    reparsed = parse(variant)

    assert reparsed == unit
    assert render(reparsed) == canonical
    assert reparsed.content_hash == unit.content_hash
    if variant != canonical:
        assert file_hash(variant.encode()) != file_hash(canonical.encode())


# -- anything at all: coded diagnostics, never an exception ------------------------------


def _assert_coded(result: ParseResult) -> None:
    assert all(d.code in CODES for d in result.errors)
    assert (result.unit is None) == bool(result.errors)


# st.text() never draws lone surrogates; a str read from elsewhere may hold them.
_any_char = st.characters() | st.characters(categories=["Cs"]) | st.sampled_from(["\n", "---\n"])


@budget(200)
@given(st.lists(_any_char, max_size=60).map("".join))
def test_arbitrary_text_gives_coded_diagnostics(text: str) -> None:
    _assert_coded(parse_unit(text))


@budget(200)
@given(st.binary())
def test_arbitrary_bytes_give_coded_diagnostics(data: bytes) -> None:
    _assert_coded(parse_unit(data))


_PIECES = st.sampled_from(
    [
        "\n", "#", "# ", "## ", "### \"", "```", "~~~", "---\n", "\"", "- ", "* ", "&a ", "*a",
        "!x ", ":", "\r", "\x00", "\ud800", "\ufeff", "[", "{", "'", "\\", ";", "\t", "    ",
        "é", "\n# T\n", "\n## SQL\n", "<pre>", "<!--", "\xff", "\\ud800", "\\u0000", "\\",
    ]
)  # fmt: skip


@st.composite
def mutated_units(draw: st.DrawFn) -> str:
    """A valid unit's text with a few insertions, deletions and line swaps."""
    text = render(draw(units()))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "swap-lines"]))
        if op == "insert":
            text = text[:at] + draw(_PIECES | st.text(max_size=4)) + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


@budget(300)
@given(mutated_units())
def test_a_mutated_unit_gives_coded_diagnostics_or_a_stable_unit(text: str) -> None:
    result = parse_unit(text)
    _assert_coded(result)
    if result.unit is not None:
        # Whatever parse accepts, the canonical form can hold (fmt never breaks a file), and
        # it can be written as UTF-8 and hashed.
        canonical = render(result.unit)
        assert parse(canonical.encode("utf-8")) == result.unit
        assert len(result.unit.content_hash) == 64


@budget(100)
@given(mutated_units())
def test_a_mutated_unit_as_bytes_gives_coded_diagnostics(text: str) -> None:
    _assert_coded(parse_unit(text.encode("utf-8", "surrogatepass")))


HOSTILE = hostile(10_000)


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_gives_coded_diagnostics(name: str) -> None:
    # How long they take, and how that grows with their size, is measured by
    # bench/parser_growth.py (CPU time, an eighth of the size against the whole); a
    # runaway parse is ended here by pytest's timeout.
    text = HOSTILE[name]
    _assert_coded(parse_unit(text))
    _assert_coded(parse_unit(text.encode()))


# -- the compiled metadata checker agrees with the JSON Schema ---------------------------

_SCHEMA = load_schema("unit-metadata.schema.json")
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)
_CHECK = compile_schema(_SCHEMA)


def test_the_schema_itself_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(_SCHEMA)


@budget(400)
@given(metadata_dicts())
def test_the_compiled_checker_agrees_with_jsonschema(meta: dict[object, object]) -> None:
    # A trailing newline is where Python's re.search '$' and ECMA's '$' differ.
    assume(not has_trailing_newline(meta))
    findings: list[tuple[tuple[object, ...], str, str]] = []

    _CHECK(meta, (), findings)

    expected = sorted(e.message for e in _VALIDATOR.iter_errors(meta))
    assert (findings == []) == (expected == []), (findings, expected)
    # check_metadata (what parse uses) reports exactly when the schema refuses, with codes.
    diagnostics = check_metadata(YamlDoc(meta))
    assert (diagnostics == []) == (expected == [])
    assert {d.code for d in diagnostics} <= {"E104", "E105", "E106", "E107", "E122"}


@pytest.mark.parametrize(
    "meta",
    [
        {"schema_version": 4.0, "id": "evidence:x", "kind": "domain", "language": "en", "purposes": ["rewriting"]},
        {"schema_version": True, "id": "evidence:x", "kind": "domain", "language": "en", "purposes": ["rewriting"]},
        {"schema_version": 4, "id": "evidence:x", "kind": "domain", "language": "en", "purposes": ["rewriting"], "applies_to": {"concepts": ["a\nb"]}},
    ],
    ids=["4.0 is the integer 4", "true is not 4", "a concept spanning lines"],
)  # fmt: skip
def test_the_compiled_checker_agrees_with_jsonschema_on_edge_values(
    meta: dict[str, object],
) -> None:
    # Regression: the checker refused schema_version 4.0, which the schema accepts.
    findings: list[tuple[tuple[object, ...], str, str]] = []
    _CHECK(meta, (), findings)
    assert (findings == []) == _VALIDATOR.is_valid(meta)
