"""Issue 2, part 2: the systematic error families, generated rather than written out.

E105 for each required key, E107 for each unsupported version, E113 for each
kind's required fields, E109 for every encoding problem, E122 for id limits.
"""

from __future__ import annotations

import json

import pytest
from helpers import codes
from unit_helpers import DOMAIN_BODY, unit_text, where

from evidence_tool.unit import MAX_BYTES, parse, parse_unit

# -- E105: every required metadata key ----------------------------------------------------

REQUIRED = ["schema_version", "id", "kind", "language", "purposes"]


@pytest.mark.parametrize("key", REQUIRED)
def test_each_missing_required_key_is_E105_naming_the_key(key: str) -> None:
    text = "\n".join(
        line for line in unit_text(DOMAIN_BODY).split("\n") if not line.startswith(key + ":")
    )

    result = parse_unit(text)

    assert set(codes(result)) == {"E105"}
    [error] = result.errors
    assert f"'{key}' is required" in error.message
    assert (error.line, error.column) == (2, 1)  # the first key of the frontmatter


# -- E107: legacy and unsupported versions -----------------------------------------------


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_legacy_schema_version_is_E107_naming_tht_evidence_migrate(version: int) -> None:
    text = unit_text(DOMAIN_BODY).replace("schema_version: 4", f"schema_version: {version}")

    result = parse_unit(text)

    assert where(result) == [("E107", 2, 1)]
    assert "legacy unit" in result.errors[0].message
    assert "tht evidence migrate" in result.errors[0].message


@pytest.mark.parametrize("version", [5, 0, 40])
def test_an_unknown_schema_version_is_E107_unsupported(version: int) -> None:
    text = unit_text(DOMAIN_BODY).replace("schema_version: 4", f"schema_version: {version}")

    result = parse_unit(text)

    assert where(result) == [("E107", 2, 1)]
    assert "not supported" in result.errors[0].message
    assert "migrate" not in result.errors[0].message


# -- E113: every kind's required fields --------------------------------------------------

# kind -> complete English body; each required heading is removed with its content in turn.
BODIES = {
    "domain": "# T\n\n## Rule\n\nr\n",
    "glossary": "# T\n\n## Definition\n\nd\n\n## Synonyms\n\n- s\n",
    "enum": '# T\n\n## Column\n\ns.t.c\n\n## Values\n\n### "v"\n',
    "example": "# T\n\n## Question\n\nq\n\n## Interpretation\n\ni\n",
    "mapping": "# T\n\n## Concept\n\nc\n\n## Tables\n\n- s.t\n",
    "normalization": "# T\n\n## Input\n\ni\n\n## Output\n\no\n\n## Rule\n\nr\n",
    "formula": "# T\n\n## Concept\n\nc\n\n## SQL\n\n```sql\n1\n```\n",
    "reference": "# T\n\n## URL\n\nhttps://example.org\n\n## Label\n\nl\n\n## Description\n\nd\n",
}
REQUIRED_FIELDS = {
    "domain": ["Rule"],
    "glossary": ["Definition"],
    "enum": ["Column", "Values"],
    "example": ["Question", "Interpretation"],
    "mapping": ["Concept"],
    "normalization": ["Input", "Output", "Rule"],
    "formula": ["Concept", "SQL"],
    "reference": ["URL", "Label", "Description"],
}


def _without(body: str, heading: str) -> str:
    blocks = body.rstrip("\n").split("\n\n## ")
    return "\n\n## ".join(b for b in blocks if b.split("\n", 1)[0] != heading) + "\n"


@pytest.mark.parametrize(
    "kind, heading",
    [(k, h) for k, hs in REQUIRED_FIELDS.items() for h in hs],
    ids=[f"{k}-{h}" for k, hs in REQUIRED_FIELDS.items() for h in hs],
)
def test_each_missing_required_field_is_E113_at_the_title(kind: str, heading: str) -> None:
    assert parse_unit(unit_text(BODIES[kind], kind=kind)).ok  # the complete body is valid

    result = parse_unit(unit_text(_without(BODIES[kind], heading), kind=kind))

    assert where(result) == [("E113", 9, 1)]
    assert f"missing required field '## {heading}'" in result.errors[0].message


@pytest.mark.parametrize("kind", [k for k in BODIES if k != "enum"])  # enum: E114, no value
def test_an_empty_first_field_is_E113_at_its_heading(kind: str) -> None:
    lines = BODIES[kind].split("\n")
    heading = next(i for i, line in enumerate(lines) if line.startswith("## "))
    body = "\n".join(lines[: heading + 2] + lines[heading + 3 :])  # drop the content line

    result = parse_unit(unit_text(body, kind=kind))

    assert where(result) == [("E113", 9 + heading, 1)]
    assert f"field '{lines[heading]}' is empty" in result.errors[0].message


# -- E101 / E109: what a file is made of -------------------------------------------------

VALID = unit_text("# Title\n\n## Rule\n\nCaffè: 2 €.\n")


def test_the_reference_text_is_valid() -> None:
    assert parse(VALID).payload.rule == "Caffè: 2 €."  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "data, line, column, fragment",
    [
        (b"\xef\xbb\xbf" + VALID.encode(), 1, 1, "byte order mark"),
        (VALID.replace("Caffè", "Caf\x00fè").encode(), 13, 4, "NUL"),
        (VALID.encode().replace("è".encode(), b"\xe8"), 13, 5, "not valid UTF-8 (byte 0xe8)"),
        (VALID.encode().replace("€".encode(), b"\xe2\x82"), 13, 10, "not valid UTF-8"),
        (VALID.encode().replace(b"Caff", b"\xff\xfe"), 13, 1, "byte 0xff"),
        (VALID.replace("Caffè", "Caf\rfè").encode(), 13, 4, "bare carriage return"),
        (VALID.replace("\n", "\r").encode(), 1, 4, "bare carriage return"),
    ],
    ids=[
        "BOM",
        "NUL byte",
        "Latin-1 byte",
        "truncated UTF-8 sequence (column counts characters)",
        "invalid start byte at line start",
        "bare CR inside a line",
        "old Mac line ends",
    ],
)
def test_encoding_problems_are_E109_at_the_bad_byte(
    data: bytes, line: int, column: int, fragment: str
) -> None:
    result = parse_unit(data)

    assert where(result) == [("E109", line, column)]
    assert fragment in result.errors[0].message


@pytest.mark.parametrize(
    "text, line, column, fragment",
    [
        ("\ufeff" + VALID, 1, 1, "byte order mark"),
        (VALID.replace("Caffè", "Caf\x00fè"), 13, 4, "NUL"),
        (VALID.replace("Caffè", "Caf\ud800fè"), 13, 4, "lone surrogate"),
        (VALID.replace("Caffè", "Caf\rfè"), 13, 4, "bare carriage return"),
    ],
    ids=["BOM", "NUL", "lone surrogate", "bare CR"],
)
def test_str_input_has_the_same_encoding_rules(
    text: str, line: int, column: int, fragment: str
) -> None:
    result = parse_unit(text)

    assert where(result) == [("E109", line, column)]
    assert fragment in result.errors[0].message


def test_a_file_over_256_KiB_is_E109_and_exactly_256_KiB_is_accepted() -> None:
    filler = "x" * (MAX_BYTES - len(VALID.encode()) + len("Caffè: 2 €.".encode()))
    exact = VALID.replace("Caffè: 2 €.", filler).encode()
    assert len(exact) == MAX_BYTES

    assert parse_unit(exact).ok
    result = parse_unit(exact + b"x")
    assert where(result) == [("E109", None, None)]
    assert "256 KiB" in result.errors[0].message


def test_the_size_of_str_input_is_measured_in_utf8_bytes() -> None:
    # Regression: a str was measured in characters, so 2-byte characters doubled the limit.
    text = VALID.replace("Caffè: 2 €.", "è" * (MAX_BYTES // 2))
    assert len(text) < MAX_BYTES < len(text.encode())

    result = parse_unit(text)

    assert set(codes(result)) == {"E109"}
    assert parse_unit(text.encode()).errors[0].code == "E109"


def test_crlf_line_ends_are_accepted_and_normalized() -> None:
    crlf = VALID.replace("\n", "\r\n")

    assert parse(crlf.encode()) == parse(VALID)
    assert parse(crlf) == parse(VALID)


def test_crlf_errors_are_reported_on_the_same_lines_as_with_lf() -> None:
    text = unit_text("# Title\n\n## Rule\n\nx\n\n## Rule\n\ny\n").replace("\n", "\r\n")
    assert where(parse_unit(text.encode())) == [("E112", 15, 1)]


@pytest.mark.parametrize(
    "text",
    ["", "---", "---\n", "--", "\n---\n---\n", "# Title\n"],
    ids=[
        "empty file",
        "only ---",
        "only --- and newline",
        "two dashes",
        "blank first line",
        "no frontmatter",
    ],
)
def test_a_file_without_complete_frontmatter_is_only_E101(text: str) -> None:
    result = parse_unit(text)
    assert where(result) == [("E101", 1, 1)]


# -- E122: id limits --------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit_id, ok",
    [
        ("evidence:" + "a" * 200, True),
        ("evidence:" + "a" * 201, False),
        ("evidence:" + ":".join(["abcd"] * 40), True),  # 199 characters after the prefix
        ("evidence:" + ":".join(["abcd"] * 41), False),  # 204
        ("evidence:a.b_c-d:0", True),
        ("evidence:", False),
        ("evidence:x:", False),
        ("evidence:x\r", False),
        ("evidence:é", False),
    ],
    ids=[
        "200 chars after the prefix",
        "201 chars after the prefix",
        "segments totalling 199",
        "segments totalling 204",
        "dot underscore and dash are allowed",
        "no segment",
        "trailing colon",
        "trailing carriage return",
        "non-ASCII letter",
    ],
)
def test_id_length_and_segments(unit_id: str, ok: bool) -> None:
    result = parse_unit(unit_text(DOMAIN_BODY, id=json.dumps(unit_id)))

    assert result.ok is ok
    assert set(codes(result)) == (set() if ok else {"E122"})
    if not ok:
        assert (result.errors[0].line, result.errors[0].column) == (3, 1)


def test_an_invalid_id_is_not_reported_as_the_diagnostics_unit_id() -> None:
    result = parse_unit(unit_text(DOMAIN_BODY, id="evidence:Bad"), path="p.md")
    assert result.unit_id is None and result.errors[0].unit_id is None

    other = parse_unit(unit_text("# T\n", id="evidence:good"), path="p.md")
    assert [d.unit_id for d in other.errors] == ["evidence:good"]
