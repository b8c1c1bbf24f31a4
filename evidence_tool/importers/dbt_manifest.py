"""dbt's ``manifest.json`` (v12), read node by node.

A manifest can be 100 MB, most of it macros and compiled SQL.  The file is
memory-mapped and the span toolkit's scanner (``spans.Scanner``) finds the byte
range of each member of the top-level objects, so only the nodes the importer needs (models, tests, semantic
models, metrics) are parsed, one at a time, with ``json.loads``.  A span is
the exact bytes of the JSON value it cites (a description string with its
quotes, a test node, a measure).
"""

from __future__ import annotations

import json
import mmap
import re
from typing import Any

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import (
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    malformed,
)
from evidence_tool.importers.dbt_model import (
    Column,
    EnumTest,
    Model,
    Selectable,
    Selection,
    Text,
    qualify,
    ref_model,
)
from evidence_tool.importers.dbt_semantic import Element, Semantic
from evidence_tool.importers.spans import BOM, Scanner, after_bom
from evidence_tool.jsonvalue import JsonObject

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
