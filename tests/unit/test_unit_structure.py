"""Issue 2, parts 3 and 4: structure comes from Markdown tokens, and enum values.

A heading inside a fence, indented code, a block quote or a list item is never
structural; nested and prose headings inside a text field are kept verbatim; a
near-miss heading inside a text field is a warning, not an error.
"""

from __future__ import annotations

import pytest
from unit_helpers import front, unit_text

from evidence_tool.unit import EnumPayload, EnumValue, parse, parse_unit, render

HIDDEN = {
    "backtick fence": "```\n# Title\n## Rule\n```",
    "tilde fence": "~~~markdown\n# Title\n## Rule\n~~~",
    "longer fence holding a shorter one": "````\n```\n## Rule\n```\n````",
    "indented code": "    # Title\n    ## Rule",
    "block quote": "> # Title\n> ## Rule",
    "list item": "- # Title\n- ## Rule\n  ## Rule",
    "ordered list item": "1. ## Rule",
    "HTML block": "<div>\n\n## Rule\n\n</div>".replace("\n\n## Rule\n\n", "\n## Rule\n"),
}


@pytest.mark.parametrize("block", list(HIDDEN.values()), ids=list(HIDDEN))
def test_headings_inside_blocks_are_not_structural(block: str) -> None:
    rule = f"Before.\n\n{block}\n\nAfter."

    unit = parse(unit_text(f"# Title\n\n## Rule\n\n{rule}\n"))

    assert unit.title == "Title"
    assert unit.payload.rule == rule  # type: ignore[attr-defined]


@pytest.mark.parametrize("block", list(HIDDEN.values()), ids=list(HIDDEN))
def test_headings_inside_blocks_do_not_end_a_list_or_sql_field(block: str) -> None:
    # In a field that is not text, the block is content of the wrong shape (E114), never a
    # new field or title.
    text = unit_text(f"# Title\n\n## Definition\n\nd\n\n## Synonyms\n\n{block}\n", kind="glossary")
    result = parse_unit(text)
    assert {d.code for d in result.errors} == {"E114"}


def test_a_fenced_sql_example_holding_headings_stays_in_the_formula() -> None:
    sql = "coalesce(x, '\n## SQL\n# Title\n')"
    text = unit_text(f"# T\n\n## Concept\n\nc\n\n## SQL\n\n```sql\n{sql}\n```\n", kind="formula")
    assert parse(text).payload.sql == sql  # type: ignore[attr-defined]


def test_nested_and_prose_headings_in_a_text_field_are_kept_verbatim() -> None:
    rule = (
        "Intro.\n\n### Details\n\nMore.\n\n## Background\n\nProse under an H2.\n\n"
        "#### Deep\n\n###### Deepest\n\nSetext prose\n------------\n\nEnd."
    )
    text = unit_text(f"# T\n\n## Rule\n\n{rule}\n")

    result = parse_unit(text)

    assert result.ok and result.warnings == []
    assert result.unit is not None and result.unit.payload.rule == rule  # type: ignore[attr-defined]
    assert parse(render(result.unit)) == result.unit


def test_a_text_field_keeps_trailing_blanks_inside_lines_but_not_blank_lines() -> None:
    text = unit_text("# T\n\n## Rule\n\n\n\nline with two trailing blanks  \n  indented\n\n\n")
    assert parse(text).payload.rule == "line with two trailing blanks  \n  indented"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "kind, language, body, heading, hint",
    [
        ("domain", "en", "# T\n\n## Rule\n\nr\n\n## Rules\n\nmore\n", "## Rules", "'## Rule'"),
        ("domain", "en", "# T\n\n## Rule\n\nr\n\n## rule\n\nmore\n", "## rule", "'## Rule'"),
        ("domain", "en", "# T\n\n## Rule\n\nr\n\n## Rule:\n\nmore\n", "## Rule:", "'## Rule'"),
        (
            "example",
            "it",
            "# T\n\n## Domanda\n\nq\n\n## Interpretazione\n\ni\n\n## Question\n\nq2\n",
            "## Question",
            "uses the Italian heading '## Domanda'",
        ),
        (
            "glossary",
            "it-CH",
            "# T\n\n## Definizione\n\nd\n\n## Synonyms\n\n- s\n",
            "## Synonyms",
            "uses the Italian heading '## Sinonimi'",
        ),
        (
            "domain",
            "en",
            "# T\n\n## Rule\n\nr\n\n## Definition\n\nmore\n",
            "## Definition",
            "is not a field of kind 'domain'",
        ),
    ],
    ids=[
        "plural of a field heading",
        "lower-case field heading",
        "field heading with a colon",
        "English heading in an Italian text field",
        "English heading in an it-CH text field",
        "field heading of another kind",
    ],
)
def test_a_near_miss_heading_inside_a_text_field_is_a_W111_warning(
    kind: str, language: str, body: str, heading: str, hint: str
) -> None:
    result = parse_unit(unit_text(body, kind=kind, language=language), path="u.md")

    assert result.ok
    [warning] = result.warnings
    assert warning.code == "W111" and warning.path == "u.md"
    assert warning.line == 9 + body.split("\n").index(heading)
    assert heading in warning.message and hint in warning.message


def test_an_unrelated_prose_heading_is_no_warning() -> None:
    result = parse_unit(unit_text("# T\n\n## Rule\n\nr\n\n## Background\n\nmore\n"))
    assert result.ok and result.warnings == []


# -- enum values -------------------------------------------------------------------------


def _enum(values: str, language: str = "en") -> str:
    return unit_text(
        f"# T\n\n## Column\n\ns.t.c\n\n## Values\n\n{values}", kind="enum", language=language
    )


@pytest.mark.parametrize(
    "heading, stored",
    [
        ('### ""', ""),
        ('### "R"', "R"),
        ('### "say \\"hi\\""', 'say "hi"'),
        ('### "back\\\\slash"', "back\\slash"),
        ('### "Sì"', "Sì"),
        ('### "\\u00e8"', "è"),
        ('### "tab\\there"', "tab\there"),
        ('### "  padded  "', "  padded  "),
        ('### "# not a heading"', "# not a heading"),
        ('### "ends with #"', "ends with #"),
        ('### "R" ###', "R"),
    ],
    ids=[
        "empty stored value",
        "plain letter",
        "escaped quotes",
        "backslash",
        "non-ASCII",
        "unicode escape",
        "tab escape",
        "surrounding blanks kept inside the quotes",
        "leading hash inside the quotes",
        "trailing hash inside the quotes",
        "closing hashes after the quotes",
    ],
)
def test_an_enum_heading_is_a_json_string_literal(heading: str, stored: str) -> None:
    unit = parse(_enum(f"{heading}\n\nMeaning.\n"))
    assert unit.payload == EnumPayload("s.t.c", (EnumValue(stored, "Meaning."),))


def test_enum_meanings_may_be_empty_or_rich_markdown() -> None:
    meaning = 'Red.\n\n#### Note\n\n- immediate\n\n```\n### "not a value"\n```'
    unit = parse(_enum(f'### "R"\n\n### "Y"\n\n{meaning}\n\n### ""\n'))

    assert unit.payload == EnumPayload(
        "s.t.c", (EnumValue("R", ""), EnumValue("Y", meaning), EnumValue("", ""))
    )
    assert parse(render(unit)) == unit


def test_enum_values_keep_their_written_order() -> None:
    unit = parse(_enum('### "b"\n\n### "a"\n\n### "c"\n', language="en-GB"))
    assert [v.value for v in unit.payload.values] == ["b", "a", "c"]  # type: ignore[attr-defined]


def test_the_empty_value_and_a_blank_value_are_different_values() -> None:
    unit = parse(_enum('### ""\n\n### " "\n'))
    assert [v.value for v in unit.payload.values] == ["", " "]  # type: ignore[attr-defined]


def test_a_quoted_sql_reference_is_read_as_written_and_rendered_plain() -> None:
    # '"My Schema"."t"' starts and ends with '"' but is no JSON string: it is a reference.
    body = (
        '# T\n\n## Concept\n\nc\n\n## Tables\n\n- "My Schema"."Wards"\n- "\\"s\\".t"\n\n'
        '## Columns\n\n- "a"."b"."c d"\n'
    )
    unit = parse(unit_text(body, kind="mapping"))

    assert unit.payload.tables == ('"My Schema"."Wards"', '"s".t')  # type: ignore[attr-defined]
    assert unit.payload.columns == ('"a"."b"."c d"',)  # type: ignore[attr-defined]
    assert '\n- "My Schema"."Wards"\n- "s".t\n' in render(unit)


def test_frontmatter_comments_and_quoting_do_not_change_the_unit() -> None:
    plain = parse(unit_text("# T\n\n## Rule\n\nx\n"))
    commented = parse(
        front(id='"evidence:test:x"', language="'en'", purposes='["rewriting"]  # why').replace(
            "kind: domain", "# a comment\nkind: domain"
        )
        + "\n# T\n\n## Rule\n\nx\n"
    )
    assert commented == plain
