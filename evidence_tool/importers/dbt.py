"""dbt: a project folder (``dbt_project.yml``, property files, docs blocks) or a ``manifest.json``.

Model and column descriptions become glossary units, ``accepted_values`` tests
enums (meanings only from a list in the column's description that names the
value), the semantic layer formulas, domain rules and mappings
(``dbt_semantic``).  Everything else dbt carries (tags, meta, constraints,
other tests, dimensions, time grains) is listed as not imported.  The mapping
is documented in docs/importers.md, "### dbt".

A ``manifest.json`` (v12) is read node by node: it can be 100 MB, most of it macros
and compiled SQL, so the file is memory-mapped and the span toolkit's scanner
(``spans.Scanner``) finds the byte range of each member of the top-level objects; only
the nodes the importer needs (models, tests, semantic models, metrics) are parsed, one
at a time.  A span is the exact bytes of the JSON value it cites (a description string
with its quotes, a test node, a measure).

A project folder's property files are read in path order, each node with its byte
range; docs blocks come from the ``.md`` files under ``docs-paths`` (default: the model
paths).  Names (models, columns, metrics) are never rendered: Jinja in one is E504;
Jinja in a description other than ``doc()`` is a review item.
"""

from __future__ import annotations

import json
import mmap
import re
from typing import Any, ClassVar

from evidence_tool.errors import SourceError
from evidence_tool.importers import yaml_spans as ys
from evidence_tool.importers.base import (
    Imported,
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    check_options,
    element_id,
    make_unit,
    malformed,
    option_error,
)
from evidence_tool.importers.dbt_model import (
    DEFAULT_SCHEMA,
    Column,
    DocsBlock,
    EnumTest,
    Join,
    Model,
    Selectable,
    Selection,
    Text,
    docs_of,
    element,
    meanings,
    no_jinja,
    qualify,
    ref_model,
    render_text,
    rest,
    under,
    yaml_file,
)
from evidence_tool.importers.dbt_semantic import Element, Semantic, semantic_units
from evidence_tool.importers.spans import BOM, Scanner, after_bom
from evidence_tool.importers.unit_parts import ident
from evidence_tool.jsonvalue import JsonObject
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


_JINJA = re.compile(r"\{\{|\{%|\{#")
_VERSION = re.compile(r"/manifest/v(\d+)\.json")
_SUPPORTED = 12
# Members of the top level whose entries are counted as not imported (descriptions dbt
# holds for things that are not models).
_COUNTED = {"sources": "source", "exposures": "exposure", "saved_queries": "saved query"}
_BUFFERED = ("model.", "test.")


class Manifest:
    """One manifest.json read into models and the semantic layer (``read``)."""

    def __init__(
        self,
        source: ImportInput,
        f: SourceFile,
        schema: str | None,
        result: ImportResult,
        selection: Selection,
    ) -> None:
        self.source, self.file, self.schema, self.result = source, f, schema, result
        self.selection = selection
        self.unselected: set[str] = set()  # unique ids of models left out by select/exclude
        self.shown = source.shown(f.path)
        self.models: dict[str, Model] = {}  # by unique_id
        # accepted_values tests: (attached node, column, values, span, where); others counted
        self.tests: list[tuple[str, str, Any, Span, str]] = []
        self.sem = Semantic()
        self.counts: dict[str, int] = {}
        self.sm_tables: dict[str, str] = {}  # semantic model name -> its table

    def read(self) -> tuple[list[Model], Semantic]:
        if self.file.size == 0:
            raise malformed(self.shown, None, "is empty; a dbt manifest.json is one JSON object")
        with self.file.open() as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            self.members(buf)
        return list(self.models.values()), self.sem

    def members(self, buf: Any) -> None:
        scan = Scanner(buf, self.shown)
        start = after_bom(buf[: len(BOM)])
        seen_metadata = False
        for key, s, e in scan.members(start):
            if key == "metadata":
                self.metadata(self.load(scan, s, e), scan.line(s))
                seen_metadata = True
            elif key == "nodes":
                for uid, ns, ne in scan.members(s):
                    self.node(scan, uid, ns, ne)
            elif key == "semantic_models":
                for _, ns, ne in scan.members(s):
                    self.semantic_model(scan, ns, ne)
            elif key == "metrics":
                for _, ns, ne in scan.members(s):
                    self.metric(scan, ns, ne)
            elif key in _COUNTED:
                self.counts[_COUNTED[key]] = sum(1 for _ in scan.members(s))
        if not seen_metadata:
            raise malformed(self.shown, 1, "has no 'metadata': it is not a dbt manifest.json")
        self.attach_tests()
        self.link_metrics()
        for what, count in sorted({**self.counts}.items()):
            if count:
                self.result.omit(f"manifest {self.shown}", f"{what} ({count})")

    def link_metrics(self) -> None:
        """A 1.12 simple metric names its semantic model: it computes on that model's table."""
        for metric in self.sem.metrics.values():
            tp = metric.data.get("type_params")
            params = tp.get("metric_aggregation_params") if isinstance(tp, dict) else None
            if isinstance(params, dict) and metric.table is None:
                metric.table = self.sm_tables.get(str(params.get("semantic_model")))

    def metadata(self, meta: Any, line: int) -> None:
        version = meta.get("dbt_schema_version", "") if isinstance(meta, dict) else ""
        match = _VERSION.search(str(version))
        if match is None or int(match.group(1)) != _SUPPORTED:
            raise malformed(
                self.shown,
                line,
                f"dbt_schema_version {version!r} is not manifest v{_SUPPORTED} "
                "(dbt 1.8 and later write v12; run 'dbt parse' with a current dbt)",
            )

    def load(self, scan: Scanner, start: int, end: int) -> Any:
        """One entry parsed; E503 past the refresh's per-file bound (an entry is read whole)."""
        if end - start > self.source.max_bytes:
            raise SourceError(
                f"{self.shown}: one manifest entry (line {scan.line(start)}) is larger than "
                f"{self.source.max_bytes} bytes, the refresh's per-file bound",
                code="E503",
                path=self.shown,
            )
        return scan.load(start, end)

    def span(self, scan: Scanner, start: int, end: int) -> Span:
        return Span(self.file.path, start, end, scan.text(start, end))

    def node(self, scan: Scanner, uid: str, start: int, end: int) -> None:
        if not uid.startswith(_BUFFERED):
            kind = uid.split(".", 1)[0]
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return
        data = self.load(scan, start, end)
        if not isinstance(data, dict):
            raise scan.fail(start, f"the node {uid} is not an object")
        if uid.startswith("test."):
            self.test(scan, data, start, end)
            return
        self.model(scan, uid, data, start)

    def text(self, scan: Scanner, value: Any, start: int, end: int) -> Text | None:
        if not isinstance(value, str) or not value.strip():
            return None
        where = f"{self.shown}:{scan.line(start)}"
        return Text(value.strip(), [self.span(scan, start, end)], bool(_JINJA.search(value)), where)

    def model(self, scan: Scanner, uid: str, data: JsonObject, start: int) -> None:
        name = str(data.get("name") or uid.rsplit(".", 1)[-1])
        if not self.selection.chooses(_node(name, data)):
            self.unselected.add(uid)
            self.result.skip("model not selected")
            return
        if data.get("version") not in (None, ""):
            # Each version of a versioned model is its own relation: one id per version.
            name = f"{name}_v{data['version']}"
        schema = self.schema or str(data.get("schema") or "public")
        table = qualify(schema, str(data.get("alias") or name))
        model = Model(name, table, None, where=f"{self.shown}:{scan.line(start)}")
        for key, s, e in scan.members(start):
            if key == "description":
                model.description = self.text(scan, data.get("description"), s, e)
            elif key == "columns":
                self.columns(scan, model, data.get("columns"), s)
        for what in ("tags", "meta", "constraints"):
            if data.get(what):
                self.result.omit(f"dbt model {name}", what)
        self.models[uid] = model

    def columns(self, scan: Scanner, model: Model, columns: Any, start: int) -> None:
        if not isinstance(columns, dict):
            return
        for name, cs, _ in scan.members(start):
            data = columns.get(name)
            if not isinstance(data, dict):
                continue
            column = Column(name, None)
            if data.get("description"):
                for key, s, e in scan.members(cs):
                    if key == "description":
                        column.description = self.text(scan, data["description"], s, e)
            for what in ("tags", "meta", "constraints", "granularity"):
                if data.get(what):
                    self.result.omit(f"dbt model {model.name} column {name}", what)
            model.columns[name] = column

    def test(self, scan: Scanner, data: JsonObject, start: int, end: int) -> None:
        given = data.get("test_metadata")
        meta: JsonObject = given if isinstance(given, dict) else {}
        attached, column = str(data.get("attached_node")), data.get("column_name")
        if meta.get("name") != "accepted_values" or not isinstance(column, str) or not column:
            name = meta.get("name") or data.get("name")
            key = f"test {name} on {attached.rsplit('.', 1)[-1]}"
            self.counts[key] = self.counts.get(key, 0) + 1
            return
        kwargs = meta.get("kwargs")
        values = kwargs.get("values") if isinstance(kwargs, dict) else None
        where = f"{self.shown}:{scan.line(start)}"
        self.tests.append((attached, column, values, self.span(scan, start, end), where))

    def attach_tests(self) -> None:
        for attached, column, values, span, where in self.tests:
            model = self.models.get(attached)
            if attached in self.unselected:
                continue  # its model was left out: counted there, not listed again
            if model is None:
                self.result.omit(f"dbt node {attached}", "test accepted_values", span)
                continue
            col = model.columns.setdefault(column, Column(column, None))
            if isinstance(values, list) and all(
                isinstance(v, str | int | float | bool) for v in values
            ):
                texts = [json.dumps(v) if isinstance(v, bool) else str(v) for v in values]
                jinja = any(_JINJA.search(t) for t in texts)
                col.tests.append(EnumTest(None if jinja else texts, span, where))
            else:
                col.tests.append(EnumTest(None, span, where))

    def semantic_model(self, scan: Scanner, start: int, end: int) -> None:
        data = self.load(scan, start, end)
        if not isinstance(data, dict):
            raise scan.fail(start, "a semantic model is not an object")
        relation = data.get("node_relation") or {}
        model_name = ref_model(data.get("model")) or str(relation.get("alias") or data.get("name"))
        schema = self.schema or relation.get("schema_name")
        table = qualify(str(schema), str(relation.get("alias") or model_name)) if schema else None
        if table is not None and isinstance(data.get("name"), str):
            self.sm_tables[data["name"]] = table
        if data.get("dimensions"):
            self.result.omit(f"dbt semantic model {data.get('name')}", "dimensions")
        for key, s, _ in scan.members(start):
            if key not in ("entities", "measures") or not isinstance(data.get(key), list):
                continue
            for item, (es, ee) in zip(data[key], scan.elements(s), strict=False):
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    continue
                found = Element(
                    item["name"],
                    item,
                    table,
                    [self.span(scan, es, ee)],
                    f"{self.shown}:{scan.line(es)}",
                    model_name,
                )
                if key == "measures":
                    self.sem.measures[item["name"]] = found
                else:
                    self.sem.entities.append(found)

    def metric(self, scan: Scanner, start: int, end: int) -> None:
        data = self.load(scan, start, end)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise scan.fail(start, "a metric is not an object with a name")
        where = f"{self.shown}:{scan.line(start)}"
        self.sem.metrics[data["name"]] = Element(
            data["name"], data, None, [self.span(scan, start, end)], where
        )


def _node(name: str, data: JsonObject) -> Selectable:
    """What dbt's node selection sees of a manifest model (its own fqn, paths and tags)."""
    fqn = data.get("fqn")
    parts = tuple(str(p) for p in fqn) if isinstance(fqn, list) else (name,)
    paths = []
    for key in ("original_file_path", "patch_path"):
        value = data.get(key)
        if isinstance(value, str) and value:
            paths.append(value.split("://", 1)[-1])
    tags = data.get("tags")
    found = tuple(str(t) for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
    return Selectable(name, parts, tuple(paths), found)


_TOP = frozenset({"version", "models", "semantic_models", "metrics"})
_MODEL = frozenset(
    {
        "name",
        "description",
        "columns",
        "data_tests",
        "tests",
        "semantic_model",
        "metrics",
        "derived_semantics",
        "config",
    }
)
_COLUMN = frozenset({"name", "description", "data_tests", "tests", "entity"})
_LEGACY_SM = frozenset({"name", "model", "entities", "measures"})
_MEASURE = frozenset({"name", "agg", "expr", "description", "label", "agg_params"})
_METRIC = frozenset(
    {
        "name",
        "type",
        "label",
        "description",
        "type_params",
        "agg",
        "expr",
        "percentile",
        "percentile_type",
        "numerator",
        "denominator",
        "input_metrics",
        "filter",
    }
)
_TESTS = ("data_tests", "tests")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")  # a join field: one column, never Jinja


class Project:
    """A dbt project folder read into models and the semantic layer (``read``)."""

    def __init__(
        self,
        source: ImportInput,
        schema: str | None,
        result: ImportResult,
        selection: Selection,
    ) -> None:
        self.source, self.schema, self.result = source, schema or DEFAULT_SCHEMA, result
        self.selection = selection
        self.name = ""  # the project's name: the first part of every model's fqn
        self.model_paths: list[str] = []
        self.sql: dict[str, str] = {}  # model name -> its .sql file, under the model paths
        self.models: dict[str, Model] = {}
        self.sem = Semantic()
        self.legacy: list[ys.Node] = []  # semantic models, tables resolved last
        self.blocks: dict[str, DocsBlock] = {}

    def settings(self) -> tuple[list[str], list[str]]:
        doc = yaml_file(self.source, "dbt_project.yml")
        root = doc.root
        if root is None or not isinstance(root.value, dict):
            raise malformed(doc.shown, 1, "is not a mapping of dbt project settings")
        models = self._paths(root, "model-paths", ["models"])
        self.name = root.written("name") or ""
        return models, self._paths(root, "docs-paths", models)

    def _paths(self, root: ys.Node, key: str, default: list[str]) -> list[str]:
        node = root.get(key)
        if node is None:
            return default
        values = [n.value for n in node.items()]
        if not isinstance(node.value, list) or not all(isinstance(v, str) for v in values):
            raise malformed(node.doc.shown, node.line, f"{key} is not a list of folder names")
        return [v.strip("/") for v in values]

    def read(self) -> tuple[list[Model], Semantic]:
        model_paths, docs_paths = self.settings()
        self.model_paths = model_paths
        self.sql = {
            f.path.rsplit("/", 1)[-1][:-4]: f.path
            for f in self.source.files
            if f.path.lower().endswith(".sql") and under(f.path, model_paths)
        }
        self.blocks = docs_of(self.source, docs_paths)
        for f in self.source.files:
            if f.path.lower().endswith((".yml", ".yaml")) and under(f.path, model_paths):
                self.file(yaml_file(self.source, f.path))
        for node in self.legacy:
            self.legacy_semantic_model(node)
        for model in self.models.values():  # join targets: now every model is known
            for column in model.columns.values():
                for join in column.joins:
                    target = self.models.get(join.to)
                    join.to_table = target.table if target else qualify(self.schema, join.to)
        return list(self.models.values()), self.sem

    def file(self, doc: ys.YamlFile) -> None:
        root = doc.root
        if root is None:
            return
        if not isinstance(root.value, dict):
            raise malformed(doc.shown, root.line, "is not a mapping of dbt properties")
        rest(self.result, f"file {doc.shown}", root, _TOP)
        for node in self._list(root, "models"):
            self.model(node)
        for node in self._list(root, "semantic_models"):
            self.legacy.append(node)
        for node in self._list(root, "metrics"):
            self.metric(node, None)

    def _list(self, node: ys.Node, key: str) -> list[ys.Node]:
        child = node.get(key)
        if child is None or child.value is None:
            return []
        if not isinstance(child.value, list) or not all(
            isinstance(i.value, dict) for i in child.items()
        ):
            raise malformed(node.doc.shown, child.line, f"'{key}' is not a list of mappings")
        return child.items()

    def node(self, name: str, node: ys.Node) -> Selectable:
        """What dbt's node selection sees of a model: its fqn (project, the folders of its
        .sql file, else of its property file, under the model path), files and tags."""
        sql = self.sql.get(name)
        where = sql or node.doc.path
        root = next((p for p in self.model_paths if under(where, [p])), "")
        inner = where[len(root) + 1 :] if root else where
        folders = tuple(inner.split("/")[:-1])
        tags: list[str] = []
        config = node.get("config")
        for holder in (node, config):
            found = holder.get("tags") if holder is not None else None
            if found is not None and isinstance(found.value, list):
                tags += [str(t.value) for t in found.items() if isinstance(t.value, str)]
            elif found is not None and isinstance(found.value, str):
                tags.append(found.value)
        paths = (sql, node.doc.path) if sql else (node.doc.path,)
        return Selectable(name, (self.name, *folders, name), paths, tuple(tags))

    def model(self, node: ys.Node) -> None:
        name = no_jinja(node.get("name"), node.doc.shown, "a model")
        if not self.selection.chooses(self.node(name, node)):
            self.result.skip("model not selected")
            return
        if name in self.models:
            raise malformed(
                node.doc.shown,
                node.line,
                f"the model {name} is also described at {self.models[name].where}",
            )
        config = node.get("config")
        alias = config.written("alias") if config is not None else None
        table = qualify(self.schema, alias or name)
        model = Model(name, table, self.text(node), where=f"{node.doc.shown}:{node.line}")
        self.models[name] = model
        label = f"dbt model {name}"
        rest(self.result, label, node, _MODEL)
        if config is not None:
            rest(self.result, label, config, frozenset({"alias"}))
        for col in self._list(node, "columns"):
            self.column(model, col)
        for test in self._tests(node):
            self.model_test(model, test)
        self.embedded(model, node)

    def text(self, node: ys.Node) -> Text | None:
        return render_text(node.get("description"), self.blocks, node.doc.shown)

    def column(self, model: Model, node: ys.Node) -> None:
        name = no_jinja(node.get("name"), node.doc.shown, f"a column of {model.name}")
        column = model.columns.setdefault(name, Column(name, None))
        column.description = self.text(node) or column.description
        label = f"dbt model {model.name} column {name}"
        rest(self.result, label, node, _COLUMN)
        for test in self._tests(node):
            self.test(column, label, test)

    def _tests(self, node: ys.Node) -> list[ys.Node]:
        out: list[ys.Node] = []
        for key in _TESTS:
            child = node.get(key)
            if child is not None and child.value is not None:
                if not isinstance(child.value, list):
                    raise malformed(node.doc.shown, child.line, f"'{key}' is not a list of tests")
                out.extend(child.items())
        return out

    def test(self, column: Column, label: str, node: ys.Node) -> None:
        join = _relationship(node)
        if join is not None:
            column.joins.append(join)
            return
        args = _accepted_values(node)
        if args is None:
            self.result.omit(label, f"test {_test_name(node)}", node.span())
            return
        column.tests.append(self.enum_test(args, node))

    def model_test(self, model: Model, node: ys.Node) -> None:
        """A model-level accepted_values names its column in column_name."""
        args = _accepted_values(node)
        column_name = args.written("column_name") if args is not None else None
        if args is None or column_name is None:
            self.result.omit(f"dbt model {model.name}", f"test {_test_name(node)}", node.span())
            return
        column = model.columns.setdefault(column_name, Column(column_name, None))
        column.tests.append(self.enum_test(args, node))

    def enum_test(self, args: ys.Node, node: ys.Node) -> EnumTest:
        values = args.get("values")
        where = f"{node.doc.shown}:{node.line}"
        if values is None:
            raise malformed(node.doc.shown, node.line, "accepted_values has no 'values' list")
        if isinstance(values.value, str) and "{{" in values.value:
            return EnumTest(None, node.span(), where)
        if not isinstance(values.value, list) or any(
            isinstance(v.value, dict | list) for v in values.items()
        ):
            raise malformed(
                node.doc.shown, values.line, "accepted_values 'values' is not a list of values"
            )
        texts = [v.raw for v in values.items()]
        if any("{{" in t or "{%" in t for t in texts):
            return EnumTest(None, node.span(), where)
        return EnumTest(texts, node.span(), where)

    def embedded(self, model: Model, node: ys.Node) -> None:
        """The 1.12 form: entities on columns and in derived_semantics, metrics on the model."""
        if _disabled(node.get("semantic_model")):
            self.disabled(model, node)
            return
        for col in self._list(node, "columns"):
            entity = col.get("entity")
            if entity is None or entity.value in (None, False):
                continue
            column = no_jinja(col.get("name"), node.doc.shown, "a column")
            name = entity.written("name") if isinstance(entity.value, dict) else None
            self.entity(entity, name or column, column, model.name, model.table)
        derived = node.get("derived_semantics")
        if derived is not None and isinstance(derived.value, dict):
            rest(
                self.result,
                f"dbt model {model.name} derived_semantics",
                derived,
                frozenset({"entities"}),
            )
            for ent in self._list(derived, "entities"):
                name = no_jinja(ent.get("name"), node.doc.shown, "an entity")
                self.entity(ent, name, ent.written("expr") or name, model.name, model.table)
        for metric in self._list(node, "metrics"):
            self.metric(metric, model.table)

    def disabled(self, model: Model, node: ys.Node) -> None:
        """dbt ignores the semantic annotations of a model whose semantic model is off."""
        off = "(semantic model disabled)"
        for col in self._list(node, "columns"):
            entity = col.get("entity")
            if entity is not None and entity.value not in (None, False):
                column = no_jinja(col.get("name"), node.doc.shown, "a column")
                label = f"dbt model {model.name} column {column}"
                self.result.omit(label, f"entity {off}", entity.span())
        for key in ("metrics", "derived_semantics"):
            child = node.get(key)
            if child is not None and child.value not in (None, [], {}):
                self.result.omit(f"dbt model {model.name}", f"{key} {off}", child.span())

    def entity(self, node: ys.Node, name: str, expr: str, model: str, table: str | None) -> None:
        found = element(node, name, table, node.doc.shown, model)
        found.data = {"expr": expr}
        self.sem.entities.append(found)

    def metric(self, node: ys.Node, table: str | None) -> None:
        self._defined_once("metric", self.sem.metrics, node, table, _METRIC)

    def _defined_once(
        self,
        what: str,
        held: dict[str, Element],
        node: ys.Node,
        table: str | None,
        handled: frozenset[str],
    ) -> None:
        """A metric or a measure: its name defined once in the project."""
        name = no_jinja(node.get("name"), node.doc.shown, f"a {what}")
        if name in held:
            raise malformed(
                node.doc.shown,
                node.line,
                f"the {what} {name} is also defined at {held[name].where}",
            )
        found = element(node, name, table, node.doc.shown)
        self._describe(found, node)
        rest(self.result, f"dbt {what} {name}", node, handled)
        held[name] = found

    def _describe(self, found: Element, node: ys.Node) -> None:
        text = self.text(node)
        if text is not None:
            found.data["description"] = text.text
            found.spans.extend(text.spans[1:])  # the node's own span already holds it

    def legacy_semantic_model(self, node: ys.Node) -> None:
        name = no_jinja(node.get("name"), node.doc.shown, "a semantic model")
        ref = ref_model(node.written("model"))
        model = self.models.get(ref) if ref else None
        table = model.table if model else (qualify(self.schema, ref) if ref else None)
        rest(self.result, f"dbt semantic model {name}", node, _LEGACY_SM)
        for ent in self._list(node, "entities"):
            ent_name = no_jinja(ent.get("name"), node.doc.shown, "an entity")
            self.entity(ent, ent_name, ent.written("expr") or ent_name, ref or name, table)
        for meas in self._list(node, "measures"):
            self._defined_once("measure", self.sem.measures, meas, table, _MEASURE)


def _disabled(node: ys.Node | None) -> bool:
    """``semantic_model: false`` or ``semantic_model: {enabled: false}``."""
    if node is None:
        return False
    if isinstance(node.value, dict):
        enabled = node.get("enabled")
        return enabled is not None and enabled.value is False
    return node.value is False


def _accepted_values(node: ys.Node) -> ys.Node | None:
    """The arguments of an accepted_values test (top level or under ``arguments:``)."""
    if not isinstance(node.value, dict):
        return None
    args: ys.Node | None = node
    if node.written("test_name") != "accepted_values":
        args = node.get("accepted_values") or node.get("dbt.accepted_values")
    if args is None or not isinstance(args.value, dict):
        return None
    nested = args.get("arguments")
    if nested is not None and isinstance(nested.value, dict):
        return nested
    return args


def _relationship(node: ys.Node) -> Join | None:
    """A ``relationships`` test whose target is a model (``to: ref('m')``) and a plain
    ``field``, top level or under ``arguments:``; anything else (a ``source()`` target,
    Jinja) stays a test that is not imported."""
    if not isinstance(node.value, dict):
        return None
    args = node.get("relationships") or node.get("dbt.relationships")
    if args is None and node.written("test_name") == "relationships":
        args = node
    if args is None or not isinstance(args.value, dict):
        return None
    nested = args.get("arguments")
    if nested is not None and isinstance(nested.value, dict):
        args = nested
    to = ref_model(args.written("to"))
    target_field = args.written("field")
    if not to or not target_field or not _PLAIN.fullmatch(target_field.strip()):
        return None
    return Join(to, target_field.strip(), node.span())


def _test_name(node: ys.Node) -> str:
    if isinstance(node.value, dict):
        named = node.written("test_name")
        return named or next(iter(node.value), "?")
    return node.raw if node.kind == ys.SCALAR else "?"  # a list: no name to give
