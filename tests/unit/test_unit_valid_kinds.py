"""Issue 2, part 1: every kind in both languages parses into its typed payload.

One body per kind and language, written as a curator would; regional variants use
the headings of their base language (``it-CH`` Italian, ``en-GB`` English).
"""

from __future__ import annotations

import pytest
from unit_helpers import front

from evidence_tool.unit import (
    AppliesTo,
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    Metadata,
    NormalizationPayload,
    Payload,
    ReferencePayload,
    Unit,
    parse,
    parse_unit,
    render,
    validate,
)

RULE_TEXT = (
    "Count an admission once per stay.\n"
    "\n"
    "### Why\n"
    "\n"
    "Transfers create several rows:\n"
    "\n"
    "- ward transfer\n"
    "- bed change\n"
    "\n"
    "```sql\n"
    "## Rule\n"
    "count(DISTINCT stay_id)\n"
    "```"
)

# kind -> (English body, Italian body, expected payload).  Bodies start with the title.
EXAMPLES: dict[str, tuple[str, str, Payload]] = {
    "domain": (
        f"# Admissions\n\n## Rule\n\n{RULE_TEXT}\n",
        f"# Admissions\n\n## Regola\n\n{RULE_TEXT}\n",
        DomainPayload(rule=RULE_TEXT),
    ),
    "glossary": (
        "# DRG\n\n## Definition\n\nDiagnosis-related group.\n\n"
        '## Synonyms\n\n- DRG code\n- "  padded  "\n- "two\\nlines"\n\n## Variants\n\n- D.R.G.\n',
        "# DRG\n\n## Definizione\n\nDiagnosis-related group.\n\n"
        '## Sinonimi\n\n- DRG code\n- "  padded  "\n- "two\\nlines"\n\n## Varianti\n\n- D.R.G.\n',
        GlossaryPayload(
            definition="Diagnosis-related group.",
            synonyms=("DRG code", "  padded  ", "two\nlines"),
            variants=("D.R.G.",),
        ),
    ),
    "enum": (
        '# Triage\n\n## Column\n\ner.visits.triage_code\n\n## Values\n\n### "R"\n\nRed: immediate.\n\n'
        '### ""\n\nNot recorded.\n\n### "say \\"hi\\""\n',
        '# Triage\n\n## Colonna\n\ner.visits.triage_code\n\n## Valori\n\n### "R"\n\nRed: immediate.\n\n'
        '### ""\n\nNot recorded.\n\n### "say \\"hi\\""\n',
        EnumPayload(
            column="er.visits.triage_code",
            values=(
                EnumValue("R", "Red: immediate."),
                EnumValue("", "Not recorded."),
                EnumValue('say "hi"', ""),
            ),
        ),
    ),
    "example": (
        "# Monthly admissions\n\n## Question\n\nHow many admissions per month?\n\n"
        "## Interpretation\n\nGroup by `date_trunc('month', admitted_at)`.\n",
        "# Monthly admissions\n\n## Domanda\n\nHow many admissions per month?\n\n"
        "## Interpretazione\n\nGroup by `date_trunc('month', admitted_at)`.\n",
        ExamplePayload(
            question="How many admissions per month?",
            interpretation="Group by `date_trunc('month', admitted_at)`.",
        ),
    ),
    "mapping": (
        '# Ward\n\n## Concept\n\nhospital ward\n\n## Tables\n\n- admin.wards\n- "My Schema"."Ward $"\n\n'
        "## Columns\n\n- admin.wards.ward_id\n",
        '# Ward\n\n## Concetto\n\nhospital ward\n\n## Tabelle\n\n- admin.wards\n- "My Schema"."Ward $"\n\n'
        "## Colonne\n\n- admin.wards.ward_id\n",
        MappingPayload(
            concept="hospital ward",
            tables=("admin.wards", '"My Schema"."Ward $"'),
            columns=("admin.wards.ward_id",),
        ),
    ),
    "normalization": (
        "# Dates\n\n## Input\n\n`03/04/2024`\n\n## Output\n\n`2024-04-03`\n\n## Rule\n\nDay first.\n",
        "# Dates\n\n## Input\n\n`03/04/2024`\n\n## Output\n\n`2024-04-03`\n\n## Regola\n\nDay first.\n",
        NormalizationPayload(input="`03/04/2024`", output="`2024-04-03`", rule="Day first."),
    ),
    "formula": (
        "# Length of stay\n\n## Concept\n\nlength of stay\n\n## Columns\n\n- clinical.stays.admitted_at\n\n"
        "## SQL\n\n```sql\nextract(day FROM\n  clinical.stays.discharged_at - clinical.stays.admitted_at)\n```\n",
        "# Length of stay\n\n## Concetto\n\nlength of stay\n\n## Colonne\n\n- clinical.stays.admitted_at\n\n"
        "## SQL\n\n```sql\nextract(day FROM\n  clinical.stays.discharged_at - clinical.stays.admitted_at)\n```\n",
        FormulaPayload(
            concept="length of stay",
            columns=("clinical.stays.admitted_at",),
            sql="extract(day FROM\n  clinical.stays.discharged_at - clinical.stays.admitted_at)",
        ),
    ),
    "reference": (
        "# ICD-10\n\n## URL\n\nhttps://icd.who.int/browse10/2019/en?q=I21#top\n\n## Label\n\nICD-10 2019\n\n"
        "## Description\n\nThe WHO classification.\n",
        "# ICD-10\n\n## URL\n\nhttps://icd.who.int/browse10/2019/en?q=I21#top\n\n## Etichetta\n\nICD-10 2019\n\n"
        "## Descrizione\n\nThe WHO classification.\n",
        ReferencePayload(
            url="https://icd.who.int/browse10/2019/en?q=I21#top",
            label="ICD-10 2019",
            description="The WHO classification.",
        ),
    ),
}

LANGUAGES = {"en": False, "en-GB": False, "it": True, "it-CH": True}  # uses Italian headings?

APPLIES = (
    "applies_to:\n"
    "  concepts: [ricoveri, 'a, b']\n"
    '  tables: [admin.wards, "\\"My Schema\\".t"]\n'
    "  columns: [admin.wards.ward_id]\n"
)


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_a_valid_unit_parses_into_its_typed_payload(kind: str, language: str) -> None:
    english, italian, payload = EXAMPLES[kind]
    body = italian if LANGUAGES[language] else english
    text = front(kind=kind, language=language, purposes="[rewriting, sql_generation]") + "\n" + body

    result = parse_unit(text)

    assert result.errors == [] and result.warnings == []
    assert result.unit == Unit(
        Metadata(
            id="evidence:test:x",
            kind=kind,
            language=language,
            purposes=("rewriting", "sql_generation"),
        ),
        body.split("\n", 1)[0][2:],
        payload,
    )
    assert validate(result.unit) == []


@pytest.mark.parametrize("kind", list(EXAMPLES))
def test_applies_to_is_read_into_concepts_tables_and_columns(kind: str) -> None:
    text = front(kind=kind, extra=APPLIES) + "\n" + EXAMPLES[kind][0]

    unit = parse(text)

    assert unit.metadata.applies_to == AppliesTo(
        concepts=("ricoveri", "a, b"),
        tables=("admin.wards", '"My Schema".t'),
        columns=("admin.wards.ward_id",),
    )


@pytest.mark.parametrize(
    "extra, expected",
    [
        ("", AppliesTo()),
        ("applies_to: {}\n", AppliesTo()),
        ("applies_to:\n  concepts: []\n", AppliesTo()),
        ("applies_to:\n  tables: [s.t]\n", AppliesTo(tables=("s.t",))),
        ("applies_to:\n  columns:\n    - s.t.c\n", AppliesTo(columns=("s.t.c",))),
    ],
    ids=["absent", "empty-mapping", "empty-list", "tables-only", "block-style-columns"],
)
def test_applies_to_may_be_absent_empty_or_partial(extra: str, expected: AppliesTo) -> None:
    unit = parse(front(extra=extra) + "\n# T\n\n## Rule\n\nx\n")
    assert unit.metadata.applies_to == expected


def test_optional_glossary_lists_may_be_omitted_or_left_empty() -> None:
    omitted = parse(front(kind="glossary") + "\n# T\n\n## Definition\n\nd\n")
    empty = parse(
        front(kind="glossary") + "\n# T\n\n## Definition\n\nd\n\n## Synonyms\n\n## Variants\n"
    )
    assert omitted.payload == empty.payload == GlossaryPayload(definition="d")


def test_a_mapping_with_only_columns_or_only_tables_is_valid() -> None:
    only_columns = parse(
        front(kind="mapping") + "\n# T\n\n## Concept\n\nc\n\n## Columns\n\n- s.t.c\n"
    )
    only_tables = parse(front(kind="mapping") + "\n# T\n\n## Concept\n\nc\n\n## Tables\n\n- s.t\n")
    assert only_columns.payload == MappingPayload(concept="c", columns=("s.t.c",))
    assert only_tables.payload == MappingPayload(concept="c", tables=("s.t",))


def test_fields_may_come_in_any_order_and_render_in_table_order() -> None:
    text = (
        front(kind="normalization") + "\n# T\n\n## Rule\n\nr\n\n## Output\n\no\n\n## Input\n\ni\n"
    )

    unit = parse(text)

    assert unit.payload == NormalizationPayload(input="i", output="o", rule="r")
    assert render(unit).index("## Input") < render(unit).index("## Output")


@pytest.mark.parametrize(
    "line, value",
    [
        ("plain value", "plain value"),
        ('"a JSON string"', "a JSON string"),
        ('"tab\\tand \\"quotes\\""', 'tab\tand "quotes"'),
        ('"## not a heading"', "## not a heading"),
        ('"  surrounding blanks  "', "  surrounding blanks  "),
        ('half "quoted"', 'half "quoted"'),
        ("   indented then trimmed   ", "indented then trimmed"),
        ("è ünïcödé ✓", "è ünïcödé ✓"),
    ],
)
def test_one_line_fields_are_plain_or_a_json_string(line: str, value: str) -> None:
    text = front(kind="mapping") + f"\n# T\n\n## Concept\n\n{line}\n\n## Tables\n\n- s.t\n"
    assert parse(text).payload == MappingPayload(concept=value, tables=("s.t",))


def test_list_values_are_trimmed_like_one_line_fields() -> None:
    # Regression: '-  a' used to keep the leading blank and store ' a'.
    text = front(kind="glossary") + "\n# T\n\n## Definition\n\nd\n\n## Synonyms\n\n-  a  \n- b\n"
    assert parse(text).payload == GlossaryPayload(definition="d", synonyms=("a", "b"))


def test_schema_version_written_as_4_0_is_the_integer_4() -> None:
    # JSON Schema's integer includes 4.0; the compiled checker now agrees with the schema.
    text = (
        front().replace("schema_version: 4", "schema_version: 4.0") + "\n" + "# T\n\n## Rule\n\nx\n"
    )
    assert parse(text).metadata.schema_version == 4


def test_a_title_may_be_a_setext_heading_and_renders_as_atx() -> None:
    unit = parse(front() + "\nAdmissions\n==========\n\n## Rule\n\nx\n")
    assert unit.title == "Admissions"
    assert "\n# Admissions\n" in render(unit)


def test_every_kind_has_its_payload_class_and_fields_in_kinds_order() -> None:
    """PAYLOAD_CLASSES is read from the payload classes: one per kind, in KINDS order,
    each with the fields the field table names."""
    from dataclasses import fields

    from evidence_tool.unit import FIELDS, KINDS, PAYLOAD_CLASSES

    assert list(PAYLOAD_CLASSES) == list(KINDS) == list(FIELDS)
    for kind, cls in PAYLOAD_CLASSES.items():
        assert cls.kind == kind
        assert {f.name for f in fields(cls)} == {spec.name for spec in FIELDS[kind]}  # type: ignore[arg-type]
