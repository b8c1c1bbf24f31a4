"""A WrenAI v5 project folder (``wren_project.yml`` with ``schema_version: 5``).

The MDL half: ``models/<name>/metadata.yml`` (model and column
``properties.description`` -> glossary; calculated columns -> formula),
``cubes/<name>/metadata.yml`` (``measures[].expression`` -> formula) and
``relationships.yml`` (-> mapping).  A model's physical name is its ``table_reference``
(``schema``, ``table``); without one, the ``schema`` option, else
``wren_project.yml``'s ``schema``, else ``public``, and the model's own name.

The ``knowledge/`` half: NL->SQL pairs, rules, glossary terms.

- ``knowledge/sql/<slug>.md``: frontmatter ``nl`` and ``sql`` -> example (the
  notes below the frontmatter, when any, open the interpretation);
- ``knowledge/rules|caveats|metrics/*.md`` and the legacy ``instructions.md``
  -> domain, one unit per top-level section;
- ``knowledge/glossary/<term>.md`` -> glossary, one term per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from evidence_tool.importers import yaml_spans as ys
from evidence_tool.importers.base import (
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    element_id,
    malformed,
)
from evidence_tool.importers.spans import (
    after_bom,
    decode,
    frontmatter,
    opens_frontmatter,
    sections,
    trimmed,
)
from evidence_tool.importers.unit_parts import Units, fenced_sql, ident
from evidence_tool.unit import (
    DomainPayload,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
)

_REF = r'([A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")'
_EQUALITY = re.compile(rf"\s*{_REF}\s*\.\s*{_REF}\s*=\s*{_REF}\s*\.\s*{_REF}\s*")
# Starts only where a blank run starts: tried at every blank, a long run was quadratic.
_AND = re.compile(r"(?<!\s)\s+and\s+", re.IGNORECASE)


@dataclass
class Model:
    name: str
    schema: str
    table: str

    def table_name(self) -> str:
        return f"{ident(self.schema)}.{ident(self.table)}"

    def column(self, name: str) -> str:
        return f"{self.table_name()}.{ident(name)}"


def named(root: ys.Node, path: str) -> str:
    """A model's or cube's name: its ``name``, else its folder's (``models/<name>/...``)."""
    return root.text("name") or path.split("/")[1]


def check_layout(path: str, root: ys.Node) -> None:
    """Refuse a v1 (flat-file) project, whose models this importer would not find."""
    node = root.get("schema_version")
    if node is None:
        return
    if not isinstance(node.value, int) or isinstance(node.value, bool):
        raise malformed(path, node.line, "schema_version is not a number")
    if node.value < 2:
        raise malformed(
            path,
            node.line,
            f"a schema_version {node.value} project keeps its models in flat files; upgrade "
            "it with 'wren context upgrade' (v5 is read whole, v2-v4 for their models, cubes "
            "and relationships)",
        )


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def condition_columns(condition: str, models: dict[str, Model]) -> list[str] | None:
    """The columns of ``a.x = b.y [AND ...]`` over the relationship's models, else None."""
    if not condition.strip():
        return None
    out: list[str] = []
    for part in _AND.split(condition.strip()):
        match = _EQUALITY.fullmatch(part)
        if match is None:
            return None
        for model_name, column in (match.group(1, 2), match.group(3, 4)):
            model = models.get(_unquote(model_name))
            if model is None:
                return None
            out.append(model.column(_unquote(column)))
    return list(dict.fromkeys(out))


_MODEL = re.compile(r"models/([^/]+)/metadata\.ya?ml")
_CUBE = re.compile(r"cubes/([^/]+)/metadata\.ya?ml")
_VIEW = re.compile(r"views/([^/]+)/metadata\.ya?ml")
_RULES = re.compile(r"knowledge/(rules|caveats|metrics)/[^/]+\.md")
_SETTINGS = ("wren_project.yml", "knowledge/knowledge.yml")
_GENERATED = ("target/", ".wren/", "apps/")  # build output and runtime state
_SCHEMA_ONLY = re.compile(r"(models/[^/]+/ref_sql\.sql|views/[^/]+/sql\.ya?ml)")
# What a column or model holds besides what the units take.
_COLUMN_USED = {"name", "properties", "expression", "is_calculated"}
_MODEL_USED = {"name", "properties", "columns", "table_reference", "ref_sql"}


class WrenImporter:
    format = "wrenai"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {"schema": str}

    def read(self, source: ImportInput) -> ImportResult:
        return _Reader(source).run()


class _Reader:
    def __init__(self, source: ImportInput) -> None:
        self.source = source
        self.result = ImportResult()
        self.units = Units(self.result, source.language)
        self.models: dict[str, Model] = {}
        self.docs: dict[str, ys.YamlFile] = {}

    def load(self, f: SourceFile) -> ys.YamlFile:
        if f.path not in self.docs:
            raw = f.read_bytes(self.source.max_bytes)
            self.docs[f.path] = ys.load(raw, self.source.shown(f.path), f.path)
        return self.docs[f.path]

    def run(self) -> ImportResult:
        self.default_schema = self.project_schema()
        model_files = [f for f in self.source.files if _MODEL.fullmatch(f.path)]
        for f in model_files:
            self.register_model(f)
        for f in self.source.files:
            self.read_file(f)
        return self.result

    def project_schema(self) -> str:
        """The schema of models without one (the option, else the project's, else public)."""
        project = self.source.file("wren_project.yml")
        root = self.mapping(project) if project is not None else None
        if project is not None and root is not None:
            check_layout(self.source.shown(project.path), root)
        option = self.source.options.get("schema")
        if isinstance(option, str) and option.strip():
            return option.strip()
        named = root.text("schema") if root is not None else None
        return named or "public"

    def register_model(self, f: SourceFile) -> None:
        root = self.mapping(f)
        name = named(root, f.path)
        ref = root.get("table_reference")
        schema = ref.text("schema") if ref is not None else None
        table = ref.text("table") if ref is not None else None
        self.models[name] = Model(name, schema or self.default_schema, table or name)

    def mapping(self, f: SourceFile) -> ys.Node:
        root = self.load(f).root
        if root is None or root.kind != ys.MAPPING:
            shown = self.source.shown(f.path)
            raise malformed(shown, root.line if root else 1, "is not a YAML mapping")
        return root

    def read_file(self, f: SourceFile) -> None:
        path = f.path
        if path in _SETTINGS:
            self.result.skip("project settings")
        elif path.startswith(_GENERATED):
            self.result.skip("generated file")
        elif _SCHEMA_ONLY.fullmatch(path):
            self.result.skip("model or view SQL")
        elif path.endswith(".gitkeep"):
            self.result.skip("placeholder")
        elif _MODEL.fullmatch(path):
            self.read_model(f)
        elif _CUBE.fullmatch(path):
            self.read_cube(f)
        elif path == "relationships.yml":
            self.read_relationships(f)
        elif _VIEW.fullmatch(path):
            doc = self.load(f)
            span = doc.root.span() if doc.root is not None else None
            what = "view statement and description (a query over models, not a table)"
            self.result.omit(f"wrenai view {self.source.shown(path)}", what, span)
        else:
            self.read_knowledge(f)

    def read_knowledge(self, f: SourceFile) -> None:
        path, shown = f.path, self.source.shown(f.path)
        match = _RULES.fullmatch(path)
        if path.startswith("knowledge/sql/") and path.endswith(".md"):
            raw = f.read_bytes(self.source.max_bytes)
            sql_pair(raw, path, shown, self.units, self.result)
        elif match or path == "instructions.md":
            raw = f.read_bytes(self.source.max_bytes)
            group = match.group(1) if match else "instructions"
            rule_sections(raw, path, shown, group, self.units, self.result)
        elif re.fullmatch(r"knowledge/glossary/[^/]+\.md", path):
            raw = f.read_bytes(self.source.max_bytes)
            glossary_term(raw, path, shown, self.units, self.result)
        else:
            what = "the whole file (not part of the WrenAI v5 layout this importer reads)"
            self.result.omit(f"file {shown}", what)

    def read_model(self, f: SourceFile) -> None:
        doc, root = self.load(f), self.mapping(f)
        model = self.models[named(root, f.path)]
        where = f"wrenai model {model.name}"
        self.describe(
            root,
            element_id(PREFIX, "model", model.name),
            model.name,
            where,
            tables=(model.table_name(),),
        )
        extras = sorted(set(root.value) - _MODEL_USED)
        for col in doc.items(root, "columns"):
            if col.kind != ys.MAPPING or not col.text("name"):
                raise malformed(doc.shown, col.line, "a column needs a name")
            extras += [f"column {k}" for k in sorted(set(col.value) - _COLUMN_USED)]
            self.read_column(model, col)
        if extras:
            what = ", ".join(dict.fromkeys(extras))
            self.result.omit(where, what)

    def describe(
        self,
        node: ys.Node,
        uid: str,
        name: str,
        where: str,
        *,
        tables: tuple[str, ...] = (),
        columns: tuple[str, ...] = (),
    ) -> None:
        """A glossary unit from ``properties.description``; other properties not imported."""
        props = node.get("properties")
        if props is None or props.kind != ys.MAPPING:
            return
        for key in sorted(set(props.value) - {"description"}):
            self.result.omit(where, f"properties.{key}", props.value[key].span())
        text = props.text("description")
        if text is None:
            return
        # A model or cube without ``name`` is named by its folder: no name to cite then.
        spans = [n.span() for n in (node.get("name"), props.value["description"]) if n is not None]
        self.units.add(
            uid, name, GlossaryPayload(text), spans, tables=tables, columns=columns, where=where
        )

    def read_column(self, model: Model, col: ys.Node) -> None:
        name = str(col.text("name"))
        where = f"wrenai model {model.name} column {name}"
        self.describe(
            col,
            element_id(PREFIX, "column", model.name, name),
            f"{model.name}.{name}",
            where,
            columns=(model.column(name),),
        )
        expression = col.text("expression")
        if expression is None or col.get("is_calculated") is None:
            return
        if col.value["is_calculated"].value is not True:
            return
        spans = [col.value["name"].span(), col.value["expression"].span()]
        self.formula(
            element_id(PREFIX, "calculated", model.name, name),
            name,
            expression,
            spans,
            (model.table_name(),),
            where,
        )

    def formula(
        self, uid: str, name: str, sql: str, spans: list[Span], tables: tuple[str, ...], where: str
    ) -> None:
        if "{{" in sql or "{%" in sql:
            self.result.review(
                "not-representable",
                f"{where}: the expression holds a template ({sql!r}); a formula is one "
                "PostgreSQL expression, so it is not imported: write it without the template",
                uid,
            )
            return
        self.units.add(uid, name, FormulaPayload(name, sql), spans, tables=tables, where=where)

    def read_cube(self, f: SourceFile) -> None:
        doc, root = self.load(f), self.mapping(f)
        name = named(root, f.path)
        where = f"wrenai cube {name}"
        base = root.text("base_object")
        model = self.models.get(base or "")
        tables = (model.table_name(),) if model else ()
        self.describe(root, element_id(PREFIX, "cube", name), name, where, tables=tables)
        for m in doc.items(root, "measures"):
            mname, expression = m.text("name"), m.text("expression")
            if mname is None or expression is None:
                raise malformed(doc.shown, m.line, "a cube measure needs a name and an expression")
            spans = [m.value["name"].span(), m.value["expression"].span()]
            self.formula(
                element_id(PREFIX, "cube", name, mname),
                f"{name}.{mname}",
                expression,
                spans,
                tables,
                f"{where} measure {mname}",
            )
            if "type" in m.value:
                self.result.omit(f"{where} measure {mname}", "type", m.value["type"].span())
        for key in ("dimensions", "time_dimensions", "hierarchies", "refresh_time"):
            if key in root.value:
                what = {"time_dimensions": "time dimensions (and their time grains)"}.get(
                    key, key.replace("_", " ")
                )
                self.result.omit(where, what, root.value[key].span())

    def read_relationships(self, f: SourceFile) -> None:
        doc, root = self.load(f), self.mapping(f)
        for rel in doc.items(root, "relationships"):
            name, models = rel.text("name"), rel.get("models")
            names = [str(m.value) for m in models.items()] if models is not None else []
            if name is None or len(names) != 2:
                raise malformed(doc.shown, rel.line, "a relationship needs a name and two models")
            self.read_relationship(rel, name, names)

    def read_relationship(self, rel: ys.Node, name: str, names: list[str]) -> None:
        uid = element_id(PREFIX, "relationship", name)
        where = f"wrenai relationship {name}"
        missing = [n for n in names if n not in self.models]
        if missing:
            self.result.review(
                "invalid-element",
                f"{where} joins {', '.join(repr(n) for n in missing)}, which the project has no "
                "model folder for; correct the name (or add the model) and refresh",
                uid,
            )
            return
        known = [self.models[n] for n in names]
        condition = rel.text("condition") or ""
        columns = condition_columns(condition, {m.name: m for m in known})
        if columns is None:
            self.result.review(
                "not-representable",
                f"{where}: the condition {condition!r} is not column equalities between "
                f"{names[0]} and {names[1]}; the mapping keeps the tables only",
                uid,
            )
            columns = []
        if "join_type" in rel.value:
            self.result.omit(where, "join_type", rel.value["join_type"].span())
        payload = MappingPayload(name, tuple(m.table_name() for m in known), tuple(columns))
        self.units.add(
            uid,
            name,
            payload,
            [rel.span()],
            tables=payload.tables,
            columns=payload.columns,
            where=where,
        )


PREFIX = "wrenai"
# Frontmatter keys WrenAI writes that no unit field holds.
_PAIR_EXTRAS = ("source", "datasource", "tags", "created_at")


def _span(raw: bytes, path: str, start: int, end: int) -> Span:
    return Span(path, start, end, raw[start:end].decode("utf-8"))


def sql_pair(raw: bytes, path: str, shown: str, units: Units, result: ImportResult) -> None:
    """One example from a ``knowledge/sql`` file; a file without ``nl`` and ``sql`` (which
    WrenAI skips too) is listed as not imported."""
    decode(raw, shown)  # E504 for a file that is not text
    front = frontmatter(raw)
    if front is None and opens_frontmatter(raw):
        raise malformed(shown, 1, "the frontmatter opened here is never closed by '---'")
    if front is None:
        result.omit(f"file {shown}", "the whole file (no frontmatter with nl and sql)")
        return
    doc = ys.load(raw, shown, path, front[0], front[1])
    root = doc.root
    if root is not None and root.kind != ys.MAPPING:
        raise malformed(shown, root.line, "the frontmatter is not a mapping")
    nl, sql = (root.get("nl"), root.get("sql")) if root else (None, None)
    for key, node in (("nl", nl), ("sql", sql)):
        if node is not None and (node.kind != ys.SCALAR or node.value is None):
            raise malformed(shown, node.line, f"'{key}' is not a text")
    if nl is None or sql is None or not str(nl.value).strip() or not str(sql.value).strip():
        result.omit(f"file {shown}", "the whole file (the frontmatter lacks nl or sql)")
        return
    spans = [nl.span(), sql.span()]
    notes_at = trimmed(raw, front[2], len(raw))
    parts = [fenced_sql(str(sql.value))]
    if notes_at[0] < notes_at[1]:
        spans.append(_span(raw, path, *notes_at))
        parts.insert(0, spans[-1].text)
    assert root is not None
    for key in _PAIR_EXTRAS:
        if key in root.value:
            where = f"wrenai sql pair {shown}"
            result.omit(where, key, root.value[key].span())
    stem = PurePosixPath(path).stem
    units.add(
        element_id(PREFIX, "sql", stem),
        str(nl.value).strip(),
        ExamplePayload(str(nl.value).strip(), "\n\n".join(parts)),
        spans,
        where=shown,
    )


def rule_sections(
    raw: bytes, path: str, shown: str, group: str, units: Units, result: ImportResult
) -> None:
    """One domain unit per top-level section of a rules-like file."""
    decode(raw, shown)  # E504 for a file that is not text
    file_title, found = sections(raw)
    stem = PurePosixPath(path).stem
    used: dict[str, int] = {}
    for section in found:
        body = trimmed(raw, section.body_start, section.end)
        if body[0] >= body[1]:
            result.skip("empty section")
            continue
        name = section.title or file_title or stem.replace("-", " ").replace("_", " ")
        key = section.title or "intro"
        used[key] = used.get(key, 0) + 1
        suffix = (f"{key}-{used[key]}",) if used[key] > 1 else (key,)
        text = raw[body[0] : body[1]].decode("utf-8")
        units.add(
            element_id(PREFIX, group, stem, *suffix),
            name,
            DomainPayload(text),
            [_span(raw, path, *trimmed(raw, section.start, section.end))],
            where=f"{shown} section {name!r}",
        )


def glossary_term(raw: bytes, path: str, shown: str, units: Units, result: ImportResult) -> None:
    """A ``knowledge/glossary/<term>.md`` file: the term is its opening heading (else the
    file name), the definition the rest."""
    decode(raw, shown)  # E504 for a file that is not text
    stem = PurePosixPath(path).stem
    file_title, found = sections(raw)
    term = file_title or stem.replace("-", " ").replace("_", " ")
    start = found[0].start if found else len(raw)
    if len(found) == 1 and found[0].title is not None and file_title is None:
        term, start = found[0].title, found[0].body_start
    body = trimmed(raw, start, len(raw))
    if body[0] >= body[1]:
        result.omit(f"file {shown}", "the term (no definition)")
        return
    units.add(
        element_id(PREFIX, "glossary", stem),
        term,
        GlossaryPayload(raw[body[0] : body[1]].decode("utf-8")),
        [_span(raw, path, *trimmed(raw, after_bom(raw), len(raw)))],
        where=shown,
    )
