"""Issue 15, Messages: unit-format errors that point at the fix.

Each mistake is written differently from the issue's example (other tables,
other misspellings, both languages), and each test asserts where the
diagnostic points and what it tells the author to write instead.
"""

from __future__ import annotations

import json

import pytest
from unit_helpers import unit_text, where

from evidence_tool.unit import parse, parse_unit

# -- E115: a whole query or a statement where one expression belongs ----------------------

WHOLE = {
    "select with from and where (it)": (
        "it",
        "SELECT sum(r.giorni) FROM ward.stays r WHERE r.closed",
    ),
    "select with join (en)": (
        "en",
        "select count(distinct p.id)\nfrom lab.orders o join lab.patients p on p.id = o.pid",
    ),
    "select of a constant": ("en", "SELECT 1"),
    "drop table": ("en", "DROP TABLE lab.scratch"),
    "delete": ("it", "DELETE FROM lab.results WHERE flag = 'H'"),
    "update": ("en", "update lab.results set flag = 'L'"),
    "insert": ("en", "INSERT INTO lab.flags VALUES (1)"),
    "cte": ("it", "WITH t AS (SELECT 1 AS x) SELECT x FROM t"),
    "two statements": ("en", "SELECT 1; SELECT 2"),
}


def _formula(sql: str, language: str) -> str:
    concept, heading = ("Concetto", "SQL") if language == "it" else ("Concept", "SQL")
    body = f"# Misura\n\n## {concept}\n\nmisura\n\n## {heading}\n\n```sql\n{sql}\n```\n"
    return unit_text(body, kind="formula", language=language)


@pytest.mark.parametrize(("language", "sql"), list(WHOLE.values()), ids=list(WHOLE))
def test_a_whole_query_or_statement_is_named_as_such_with_the_fix(language: str, sql: str) -> None:
    result = parse_unit(_formula(sql, language))

    assert where(result) == [("E115", 18, 1)]  # the first line inside the fence
    message = result.errors[0].message
    assert "a whole query (or statement) where one expression belongs" in message
    assert "write only the expression, e.g. `avg(los)`" in message
    assert "syntax error" not in message


def test_a_valid_expression_is_not_taken_for_a_statement() -> None:
    # 'checkpoint' alone is a PostgreSQL statement, but here it is a column name.
    assert parse(_formula("checkpoint + 1", "en")).payload.sql == "checkpoint + 1"  # type: ignore[attr-defined]


def test_an_expression_with_a_real_syntax_error_keeps_the_parser_message() -> None:
    result = parse_unit(_formula("round(a.giorni / , 2)", "it"))

    assert [d.code for d in result.errors] == ["E115"]
    assert "syntax error" in result.errors[0].message
    assert "whole query" not in result.errors[0].message


# -- E113: a misspelt required heading is named at its own line ---------------------------

MISSPELT = {
    # (kind, language, body, misspelt line, the heading meant)
    "glossary en, transposed letters": (
        "glossary",
        "en",
        "# Stay\n\n## Defnition\n\nA hospital stay.\n",
        11,
        "Definition",
    ),
    "glossary it, missing letter": (
        "glossary",
        "it",
        "# Ricovero\n\n## Definzione\n\nUn ricovero ordinario.\n",
        11,
        "Definizione",
    ),
    "example it, second field misspelt": (
        "example",
        "it",
        "# Accessi\n\n## Domanda\n\nQuanti accessi?\n\n## Interpretazone\n\nConta gli accessi.\n",
        15,
        "Interpretazione",
    ),
    "normalization en, lowercase heading inside a text field": (
        "normalization",
        "en",
        "# Dates\n\n## Input\n\n3/4/24\n\n## output\n\n2024-04-03\n\n## Rule\n\nDay first.\n",
        15,
        "Output",
    ),
}


@pytest.mark.parametrize(
    ("kind", "language", "body", "line", "meant"), list(MISSPELT.values()), ids=list(MISSPELT)
)
def test_a_misspelt_required_heading_is_reported_at_its_line_with_did_you_mean(
    kind: str, language: str, body: str, line: int, meant: str
) -> None:
    result = parse_unit(unit_text(body, kind=kind, language=language))

    # One problem, one diagnostic: at the misspelt heading, not at the title line.
    assert where(result) == [("E113", line, 1)]
    message = result.errors[0].message
    assert f"missing required field '## {meant}'" in message
    assert f"did you mean '## {meant}'?" in message
    assert not result.warnings


def test_a_heading_of_the_other_language_for_a_required_field_points_at_it() -> None:
    body = "# Ricovero\n\n## Definition\n\nUn ricovero ordinario.\n"

    result = parse_unit(unit_text(body, kind="glossary", language="it"))

    assert where(result) == [("E113", 11, 1)]
    assert "uses the Italian heading '## Definizione'" in result.errors[0].message


def test_a_required_field_missing_without_any_near_miss_stays_at_the_title() -> None:
    body = "# Stay\n\n## Synonyms\n\n- visit\n"

    result = parse_unit(unit_text(body, kind="glossary"))

    assert where(result) == [("E113", 9, 1)]
    assert "did you mean" not in result.errors[0].message


# -- W111: a near-miss optional heading names its line --------------------------------------


@pytest.mark.parametrize(
    ("language", "heading", "meant"),
    [("en", "synonym", "Synonyms"), ("en", "Variant", "Variants"), ("it", "sinonimi", "Sinonimi")],
)
def test_a_near_miss_optional_heading_warns_with_its_line(
    language: str, heading: str, meant: str
) -> None:
    definition = "Definizione" if language == "it" else "Definition"
    body = f"# Reparto\n\n## {definition}\n\nUnità di cura.\n\n## {heading}\n\n- divisione\n"

    result = parse_unit(unit_text(body, kind="glossary", language=language))

    assert not result.errors
    [warning] = result.warnings
    assert (warning.code, warning.line) == ("W111", 15)
    assert "line 15" in warning.message
    assert f"did you mean '## {meant}'?" in warning.message


# -- E114: an enum value written with SQL quotes --------------------------------------------


@pytest.mark.parametrize(
    ("written", "meant"),
    [("'A7'", "A7"), ("'0'", "0"), ("'it''s'", "it's"), ("'con spazi'", "con spazi")],
)
def test_an_enum_value_in_sql_quotes_suggests_the_json_string_of_its_content(
    written: str, meant: str
) -> None:
    body = f"# Reparto\n\n## Colonna\n\nward.stays.code\n\n## Valori\n\n### {written}\n\nSette\n"

    result = parse_unit(unit_text(body, kind="enum", language="it"))

    assert where(result) == [("E114", 17, 1)]
    suggestion = f"'### {json.dumps(meant, ensure_ascii=False)}'"
    assert suggestion in result.errors[0].message
    # The fix must store the value itself, not the SQL quotes around it.
    fixed = body.replace(f"### {written}", f"### {json.dumps(meant, ensure_ascii=False)}")
    unit = parse(unit_text(fixed, kind="enum", language="it"))
    assert [v.value for v in unit.payload.values] == [meant]  # type: ignore[attr-defined]


def test_an_unquoted_enum_value_still_suggests_its_json_string() -> None:
    body = "# Flag\n\n## Column\n\nlab.results.flag\n\n## Values\n\n### H\n\nHigh\n"

    result = parse_unit(unit_text(body, kind="enum"))

    assert where(result) == [("E114", 17, 1)]
    assert "'### \"H\"'" in result.errors[0].message
