"""dbt: a project folder (``dbt_project.yml``, property files, docs blocks) or a ``manifest.json``.

Model and column descriptions become glossary units, ``accepted_values`` tests
enums (meanings only from a list in the column's description that names the
value), the semantic layer formulas, domain rules and mappings
(``dbt_semantic``).  Everything else dbt carries (tags, meta, constraints,
other tests, dimensions, time grains) is listed as not imported.  The mapping
is documented in docs/importers.md, "### dbt".
"""

from __future__ import annotations

from typing import ClassVar

from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    check_options,
    element_id,
    make_unit,
    malformed,
    option_error,
)
from evidence_tool.importers.dbt_manifest import Manifest
from evidence_tool.importers.dbt_model import (
    Column,
    EnumTest,
    Join,
    Model,
    Selection,
    Text,
    meanings,
)
from evidence_tool.importers.dbt_project import Project
from evidence_tool.importers.dbt_semantic import semantic_units
from evidence_tool.importers.unit_parts import ident
from evidence_tool.unit.fields import is_italian
from evidence_tool.unit.model import EnumPayload, EnumValue, GlossaryPayload, MappingPayload


class DbtImporter:
    format = "dbt"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {
        "schema": str,
        "select": (str, list),  # dbt node selection (dbt_model.Selection): which models to read
        "exclude": (str, list),
    }

    def read(self, source: ImportInput) -> ImportResult:
        result = ImportResult()
        schema = _schema(source)
        selection = Selection.of(source.options, source.key)
        if source.file("dbt_project.yml") is not None:
            models, sem = Project(source, schema, result, selection).read()
        else:
            manifests = [f for f in source.files if f.path.lower().endswith(".json")]
            if len(manifests) != 1:
                raise malformed(
                    source.root or ".",
                    None,
                    "is neither a dbt project (no dbt_project.yml at its top) nor one "
                    "manifest.json; name the project folder or the manifest file",
                )
            models, sem = Manifest(source, manifests[0], schema, result, selection).read()
        for model in models:
            model_units(model, source.language, result)
        semantic_units(sem, source.language, result)
        return result


def _schema(source: ImportInput) -> str | None:
    """The ``schema`` option: a name, or absent (E902 naming the descriptor key otherwise)."""
    check_options(source.options, DbtImporter.options, source.key)
    schema = source.options.get("schema")
    if schema is not None and not schema.strip():
        where = f"{source.key}.options.schema"
        raise option_error(
            where, "an empty schema; give the schema the models are in, or drop the option"
        )
    return schema.strip() if schema is not None else None


def model_units(model: Model, language: str, result: ImportResult) -> None:
    if model.description is not None:
        _glossary(
            result,
            element_id("dbt", model.name),
            model.name,
            model.description,
            language,
            tables=(model.table,),
        )
    for column in model.columns.values():
        ref = f"{model.table}.{ident(column.name)}"
        if column.description is not None:
            _glossary(
                result,
                element_id("dbt", model.name, column.name),
                f"{model.name}.{column.name}",
                column.description,
                language,
                columns=(ref,),
            )
        for test in column.tests:
            _enum(result, model, column, test, ref, language)
        for join in column.joins:
            _join(result, model, column, join, ref, language)


def _join(
    result: ImportResult, model: Model, column: Column, join: Join, ref: str, language: str
) -> None:
    """A relationships test as a mapping: the join path, from column to column."""
    uid = element_id("dbt", model.name, column.name, "joins", join.to, join.field)
    target = f"{join.to_table}.{ident(join.field)}"
    title = (
        f"Join di {model.name}.{column.name} con {join.to}.{join.field}"
        if is_italian(language)
        else f"Join {model.name}.{column.name} to {join.to}.{join.field}"
    )
    tables = tuple(dict.fromkeys((model.table, join.to_table)))
    unit = make_unit(
        id=uid,
        language=language,
        title=title,
        payload=MappingPayload(concept=f"{ref} = {target}", tables=tables, columns=(ref, target)),
        purposes=("schema_linking", "sql_generation"),
        tables=tables,
        columns=(ref, target),
    )
    result.units.append(Imported(unit, [join.span]))


def _glossary(
    result: ImportResult,
    uid: str,
    title: str,
    text: Text,
    language: str,
    tables: tuple[str, ...] = (),
    columns: tuple[str, ...] = (),
) -> None:
    if text.jinja:
        result.review(
            "not-representable",
            f"{text.where}: the description of {title} holds Jinja other than doc(), "
            "which only dbt can render; write it out or move it into a docs block",
            uid,
            text.spans[0],
        )
        return
    unit = make_unit(
        id=uid,
        language=language,
        title=title,
        payload=GlossaryPayload(definition=text.text),
        purposes=("disambiguation", "schema_linking"),
        tables=tables,
        columns=columns,
    )
    result.units.append(Imported(unit, list(text.spans)))


def _enum(
    result: ImportResult, model: Model, column: Column, test: EnumTest, ref: str, language: str
) -> None:
    uid = element_id("dbt", model.name, column.name, "values")
    name = f"{model.name}.{column.name}"
    if test.values is None:
        result.review(
            "not-representable",
            f"{test.where}: the accepted values of {name} are Jinja, which only dbt can "
            f"render; write the values out as a list, or write the enum unit {uid} by hand",
            uid,
            test.span,
        )
        return
    values = list(dict.fromkeys(test.values))  # a value listed twice is one stored value
    desc = column.description
    found = meanings(desc.text, values) if desc is not None and not desc.jinja else {}
    missing = [v for v in values if v not in found]
    if missing:
        result.review(
            "meaning-missing",
            f"{test.where}: no meaning for {', '.join(repr(v) for v in missing)} of {name}: "
            f"list each value in the description of column {column.name} of model "
            f"{model.name} (e.g. '- {missing[0]}: what it means', or a docs block table "
            "of value and meaning) and refresh; or write the enum unit "
            f"{uid} by hand under evidence/curated/enum/",
            uid,
            test.span,
        )
    spans = [test.span]
    if found and desc is not None:
        spans.extend(s for s in desc.spans if s not in spans)
    title = ("Valori di " if is_italian(language) else "Values of ") + name
    unit = make_unit(
        id=uid,
        language=language,
        title=title,
        payload=EnumPayload(
            column=ref, values=tuple(EnumValue(v, found.get(v, "")) for v in values)
        ),
        purposes=("sql_generation", "rewriting"),
        columns=(ref,),
    )
    result.units.append(Imported(unit, spans))
