"""dbt: a project folder (``dbt_project.yml``, property files, docs blocks) or a ``manifest.json``.

Model and column descriptions become glossary units, ``accepted_values`` tests
enums (meanings only from a list in the column's description that names the
value), the semantic layer formulas, domain rules and mappings
(``dbt_semantic``).  Everything else dbt carries (tags, meta, constraints,
other tests, dimensions, time grains) is listed as not imported.  The mapping
is documented in docs/importers.md, "### dbt".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evidence_tool.errors import DescriptorError
from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    NotImported,
    Span,
    check_options,
    element_id,
    make_unit,
    malformed,
)
from evidence_tool.importers.dbt_docs import (
    DocsBlock,
    Rendered,
    docs_blocks,
    meanings,
    render,
)
from evidence_tool.importers.dbt_semantic import (
    Element,
    quote_ident,
    semantic_units,
)
from evidence_tool.importers.dbt_yaml import YamlFile, YNode, load
from evidence_tool.unit.fields import is_italian
from evidence_tool.unit.model import EnumPayload, EnumValue, GlossaryPayload, MappingPayload

DEFAULT_SCHEMA = "public"
# Matched against the stripped value: blanks around the call, and between ``=`` and the
# version, as optional groups next to ``[^)]*`` backtracked quadratically.
_REF = re.compile(r"""ref\(\s*(['"])([^'"]+)\1\s*(?:,\s*(?:v|version)\s*=[^)]*)?\)""")
_JINJA = re.compile(r"\{\{|\{%|\{#")


@dataclass
class Text:
    """A rendered description with the spans it came from."""

    text: str
    spans: list[Span]
    jinja: bool  # Jinja other than doc() is left: not representable
    where: str


@dataclass
class EnumTest:
    values: list[str] | None  # None: not a literal list (Jinja)
    span: Span
    where: str


@dataclass
class Join:
    """A ``relationships`` test: this column's values are ``field`` of model ``to``."""

    to: str  # the target model's name
    field: str
    span: Span
    to_table: str = ""  # schema.table, set once every model was read


@dataclass
class Column:
    name: str
    description: Text | None
    tests: list[EnumTest] = field(default_factory=list)
    joins: list[Join] = field(default_factory=list)


@dataclass
class Model:
    name: str
    table: str  # schema.table as applies_to writes it
    description: Text | None
    columns: dict[str, Column] = field(default_factory=dict)
    where: str = ""


class DbtImporter:
    format = "dbt"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {
        "schema": str,
        "select": (str, list),  # dbt node selection (dbt_select): which models to read
        "exclude": (str, list),
    }

    def read(self, source: ImportInput) -> ImportResult:
        from evidence_tool.importers.dbt_select import Selection

        result = ImportResult()
        schema = _schema(source)
        selection = Selection.of(source.options, source.key)
        if source.file("dbt_project.yml") is not None:
            from evidence_tool.importers.dbt_project import read_project

            models, sem = read_project(source, schema, result, selection)
        else:
            manifests = [f for f in source.files if f.path.lower().endswith(".json")]
            if len(manifests) != 1:
                raise malformed(
                    source.root or ".",
                    None,
                    "is neither a dbt project (no dbt_project.yml at its top) nor one "
                    "manifest.json; name the project folder or the manifest file",
                )
            from evidence_tool.importers.dbt_manifest import read_manifest

            models, sem = read_manifest(source, manifests[0], schema, result, selection)
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
        raise DescriptorError(
            f"{where}: an empty schema; give the schema the models are in, or drop the option",
            details={"result": {"key_path": where}},
        )
    return schema.strip() if schema is not None else None


def qualify(schema: str, table: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(table)}"


def render_text(node: YNode | None, blocks: dict[str, DocsBlock], shown: str) -> Text | None:
    """A YAML description node rendered, with its span and the docs blocks' spans."""
    if node is None or node.value is None or isinstance(node.value, dict | list):
        return None
    raw = node.raw if node.raw is not None else str(node.value)
    rendered: Rendered = render(raw, blocks, shown, node.line)
    if not rendered.text:
        return None
    spans = [node.span(), *(b.span for b in rendered.blocks)]
    return Text(rendered.text, spans, rendered.jinja, f"{shown}:{node.line}")


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
        ref = f"{model.table}.{quote_ident(column.name)}"
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
    target = f"{join.to_table}.{quote_ident(join.field)}"
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


def rest(result: ImportResult, element: str, node: YNode, handled: frozenset[str]) -> None:
    """Every non-empty key of ``node`` outside ``handled`` is listed as not imported."""
    for key, child in node.items():
        if key not in handled and child.value not in (None, "", [], {}):
            result.not_imported.append(NotImported(element, key, child.span()))


def no_jinja(node: YNode | None, shown: str, what: str) -> str:
    """A name as text; E504 when it is missing, not text, or Jinja (names are never rendered)."""
    if node is None or node.value is None or isinstance(node.value, dict | list):
        line = node.line if node is not None else None
        raise malformed(shown, line, f"{what} has no name")
    text = node.raw if node.raw is not None else str(node.value)
    if _JINJA.search(text) or not text.strip():
        raise malformed(shown, node.line, f"{what} name {text!r} is not a plain name")
    return text.strip()


def ref_model(value: Any) -> str | None:
    """The model a legacy semantic model names with ``ref('orders')``."""
    match = _REF.fullmatch(value.strip()) if isinstance(value, str) else None
    return match.group(2) if match else None


def yaml_file(source: ImportInput, path: str) -> YamlFile:
    f = source.file(path)
    assert f is not None
    return load(path, source.shown(path), f.read_bytes(source.max_bytes))


def element(node: YNode, name: str, table: str | None, shown: str, model: str = "") -> Element:
    data = node.plain() if isinstance(node.value, dict) else {}
    return Element(name, data, table, [node.span()], f"{shown}:{node.line}", model)


def docs_of(source: ImportInput, paths: list[str]) -> dict[str, DocsBlock]:
    blocks: dict[str, DocsBlock] = {}
    for f in source.files:
        if not f.path.lower().endswith(".md") or not _under(f.path, paths):
            continue
        shown = source.shown(f.path)
        for block in docs_blocks(f.path, shown, f.read_bytes(source.max_bytes)):
            if block.name in blocks:
                raise malformed(
                    shown,
                    int(block.where.rsplit(":", 1)[1]),
                    f"the docs block '{block.name}' is also defined at {blocks[block.name].where}",
                )
            blocks[block.name] = block
    return blocks


def _under(path: str, roots: list[str]) -> bool:
    return any(root in ("", ".") or path.startswith(root.rstrip("/") + "/") for root in roots)
