"""The field table of SPEC.md 3.3: per kind, the field headings in both languages and types."""

from __future__ import annotations

from dataclasses import dataclass

from evidence_tool.unit.vocabulary import KINDS as KINDS  # re-exported: one list each
from evidence_tool.unit.vocabulary import PURPOSES as PURPOSES

# Field types.
TEXT, LIST, TABLES, COLUMNS, SCALAR, COLUMN, URL, VALUES, SQL = (
    "text",
    "list",
    "tables",
    "columns",
    "scalar",
    "column",
    "url",
    "values",
    "sql",
)
LIST_TYPES = frozenset({LIST, TABLES, COLUMNS})
LINE_TYPES = frozenset({SCALAR, COLUMN, URL})


@dataclass(frozen=True)
class FieldSpec:
    name: str  # attribute of the payload class
    en: str  # English heading
    it: str  # Italian heading
    type: str
    required: bool

    def heading(self, language: str) -> str:
        return self.it if is_italian(language) else self.en


def _f(name: str, en: str, it: str, type_: str, required: bool = True) -> FieldSpec:
    return FieldSpec(name, en, it, type_, required)


FIELDS: dict[str, tuple[FieldSpec, ...]] = {
    "domain": (_f("rule", "Rule", "Regola", TEXT),),
    "glossary": (
        _f("definition", "Definition", "Definizione", TEXT),
        _f("synonyms", "Synonyms", "Sinonimi", LIST, False),
        _f("variants", "Variants", "Varianti", LIST, False),
    ),
    "enum": (_f("column", "Column", "Colonna", COLUMN), _f("values", "Values", "Valori", VALUES)),
    "example": (
        _f("question", "Question", "Domanda", TEXT),
        _f("interpretation", "Interpretation", "Interpretazione", TEXT),
    ),
    # A mapping needs at least one table or column: checked as a whole, not per field.
    "mapping": (
        _f("concept", "Concept", "Concetto", SCALAR),
        _f("tables", "Tables", "Tabelle", TABLES, False),
        _f("columns", "Columns", "Colonne", COLUMNS, False),
    ),
    "normalization": (
        _f("input", "Input", "Input", TEXT),
        _f("output", "Output", "Output", TEXT),
        _f("rule", "Rule", "Regola", TEXT),
    ),
    "formula": (
        _f("concept", "Concept", "Concetto", SCALAR),
        _f("columns", "Columns", "Colonne", COLUMNS, False),
        _f("sql", "SQL", "SQL", SQL),
    ),
    "reference": (
        _f("url", "URL", "URL", URL),
        _f("label", "Label", "Etichetta", SCALAR),
        _f("description", "Description", "Descrizione", TEXT),
    ),
}


def is_italian(language: str) -> bool:
    """Italian headings for ``it`` and its regional variants (``it-CH``), English otherwise."""
    return language == "it" or language.startswith("it-")


def headings_for(kind: str, language: str) -> dict[str, FieldSpec]:
    return {spec.heading(language): spec for spec in FIELDS[kind]}


ALL_HEADINGS: frozenset[str] = frozenset(
    h for specs in FIELDS.values() for spec in specs for h in (spec.en, spec.it)
)
