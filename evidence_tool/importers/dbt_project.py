"""A dbt project folder: ``dbt_project.yml``, property files under the model paths, docs blocks.

Property files are read in path order, each node with its byte range; docs
blocks come from the ``.md`` files under ``docs-paths`` (default: the model
paths).  Names (models, columns, metrics) are never rendered: Jinja in one is
E504; Jinja in a description other than ``doc()`` is a review item.
"""

from __future__ import annotations

import re

from evidence_tool.importers import yaml_spans as ys
from evidence_tool.importers.base import ImportInput, ImportResult, malformed
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
    no_jinja,
    qualify,
    ref_model,
    render_text,
    rest,
    under,
    yaml_file,
)
from evidence_tool.importers.dbt_semantic import Element, Semantic

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
