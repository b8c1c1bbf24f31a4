"""BIRD text-to-SQL data (also what ThothAI loads): questions and column descriptions.

A BIRD source is a folder holding a questions file (``dev.json``, else
``train.json``, or the file the ``questions`` option names) and the
``database_description/<table>.csv`` files of each database, either as
``<db_id>/database_description/`` or under ``dev_databases/`` (or any
``*_databases/``) as BIRD ships them; a file source is the questions file alone.

- each question -> example (the question; the evidence and the SQL in a fenced
  block), id ``evidence:bird:<db_id>.q<question_id>``;
- each ``;``-separated evidence fragment -> formula, glossary term or domain
  rule (see ``bird_evidence``), once per database however many questions repeat
  it, citing its first occurrence;
- each described column -> glossary (``applies_to`` its column, the expanded
  name a synonym), and a code list in ``value_description`` -> enum.

``db_id`` is the schema in ``applies_to`` (the ``schemas`` option maps it);
names that PostgreSQL would fold are quoted.  ``difficulty``, ``data_format``
and any other member are listed as not imported, counted per database/table.
"""

from __future__ import annotations

import re
from typing import ClassVar

from evidence_tool.importers.base import (
    ImportInput,
    ImportResult,
    SourceFile,
    malformed,
    option_error,
)
from evidence_tool.importers.bird_columns import import_table
from evidence_tool.importers.bird_questions import import_questions
from evidence_tool.importers.bird_units import Collected

QUESTION_FILES = ("dev.json", "train.json")
_DESCRIPTION = re.compile(r"^(?:[^/]*_databases/)?([^/]+)/database_description/([^/]+)\.csv$")


class BirdImporter:
    format = "bird"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {"schemas": dict, "questions": str}

    def read(self, source: ImportInput) -> ImportResult:
        state = Collected(source, _schemas(source))
        tables, questions, other = _layout(source)
        for db, table, f in tables:
            import_table(state, db, table, f)
        if questions is not None:
            import_questions(state, questions)
        for (element, what), n in sorted(state.absent.items()):
            state.result.omit(f"{element} ({n})", what)
        if other:
            state.result.skipped["other files"] = other
        return state.result


def _schemas(source: ImportInput) -> dict[str, str]:
    schemas = source.options.get("schemas", {})
    for db, schema in schemas.items():
        if not isinstance(schema, str) or not schema.strip():
            where = f"{source.key}.options.schemas.{db}"
            raise option_error(
                where, f"{schema!r} is not a schema name; map each db_id to a schema name"
            )
    return dict(schemas)


def _layout(
    source: ImportInput,
) -> tuple[list[tuple[str, str, SourceFile]], SourceFile | None, int]:
    """(db, table, file) of each description CSV, the questions file, the other files' count."""
    tables: list[tuple[str, str, SourceFile]] = []
    rest: list[SourceFile] = []
    for f in source.files:
        m = _DESCRIPTION.match(f.path)
        if m:
            tables.append((m.group(1), m.group(2).strip(), f))
        else:
            rest.append(f)
    questions = _questions_file(source, rest)
    if questions is None and not tables:
        # An empty proposal would retire every unit imported before: refuse instead.
        raise malformed(
            source.root or ".",
            None,
            "holds no BIRD files: neither dev.json nor train.json at its top, nor any "
            "<db_id>/database_description/<table>.csv; point the entry at the BIRD folder "
            "(or name the questions file with the option questions)",
        )
    other = len(rest) - (questions is not None)
    return tables, questions, other


def _questions_file(source: ImportInput, rest: list[SourceFile]) -> SourceFile | None:
    named = source.options.get("questions")
    if named is not None:
        found = source.file(named)
        if found is None:
            where = f"{source.key}.options.questions"
            raise option_error(
                where,
                f"the source holds no file {named!r}; name the questions file relative to the "
                "source's folder",
            )
        return found
    if len(source.files) == 1 and rest and rest[0].path.endswith(".json"):
        return rest[0]  # a file source: the questions file itself
    return next((f for name in QUESTION_FILES for f in rest if f.path == name), None)
