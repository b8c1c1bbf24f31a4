"""Snowflake Cortex Analyst semantic model YAML (one model per ``.yaml``/``.yml`` file).

Per logical table (``base_table`` gives the physical ``schema.table``; the
database is not a unit field): ``dimensions``, ``time_dimensions``, ``facts``
(and legacy ``measures``) with a ``description`` -> glossary with their
``synonyms``; an ``expr`` that is more than one column -> formula; a
dimension's ``sample_values`` -> enum whose meanings come only from a
description that lists them (``S = in store, W = web``), else the review item
``meaning-missing``; ``metrics`` and ``filters`` -> formula (their description
-> glossary).  Model-level ``metrics`` -> formula, ``relationships`` ->
mapping, ``verified_queries`` -> example, ``custom_instructions`` -> domain.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from evidence_tool.importers import yaml_spans as ys
from evidence_tool.importers.base import (
    ImportInput,
    ImportResult,
    Span,
    element_id,
    malformed,
)
from evidence_tool.importers.unit_parts import Units, fenced_sql, ident
from evidence_tool.unit import (
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
)

PREFIX = "cortex"
_SUFFIXES = (".yaml", ".yml")
_COLUMN_LISTS = ("dimensions", "time_dimensions", "facts", "measures")
_COLUMN_USED = {"name", "description", "synonyms", "expr", "sample_values"}
_TABLE_USED = {"name", "description", "synonyms", "base_table", "metrics", "filters"}
_TABLE_USED |= set(_COLUMN_LISTS)
_MODEL_USED = {"name", "description", "tables", "relationships", "metrics", "verified_queries"}
_MODEL_USED |= {"custom_instructions", "module_custom_instructions"}
_QUERY_USED = {"name", "question", "sql"}
_COLUMN_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"')


class CortexImporter:
    format = "cortex"
    options: ClassVar[dict[str, type | tuple[type, ...]]] = {}

    def read(self, source: ImportInput) -> ImportResult:
        result = ImportResult()
        units = Units(result, source.language)
        for f in source.files:
            if not f.path.lower().endswith(_SUFFIXES):
                what = "the whole file (a semantic model is a .yaml file)"
                result.omit(f"file {source.shown(f.path)}", what)
                continue
            doc = ys.load(f.read_bytes(source.max_bytes), source.shown(f.path), f.path)
            _Model(doc, units, result).read()
        return result


# Where a value's meaning is given: ``V = m``, ``V: m``, ``V -> m``, ``V → m``.
_GIVES = re.compile(r"(?<!\s)\s*(?:=|:|->|→)")  # starts where a blank run starts
_WORD = re.compile(r"\w")
_QUOTE = "'\"`"
# Bounds that keep the reading linear: a sample value longer than VALUE_MAX characters is
# never found in the description (the walk back from a separator stops there), and a
# "meaning" longer than MEANING_MAX is prose, not a value's meaning (without the bound,
# k values named in one long clause would copy that clause k times).
VALUE_MAX = 200
MEANING_MAX = 500


def _meanings(description: str | None, values: list[str]) -> dict[str, str]:
    """Meanings a description gives its values as ``V = meaning`` / ``V: meaning``, separated
    by commas, semicolons or lines; a value it does not name gets none (never a guess).

    One pass over the description: at each separator, the values that end right before it
    (a closing quote and blanks between allowed; not the tail of a word) are looked up in
    a trie of the values written backwards, so the work does not grow with values times
    description.  The first mention of a value with a meaning wins.
    """
    if not description or not values:
        return {}
    trie: dict[str, Any] = {}
    for value in values:
        if 0 < len(value) <= VALUE_MAX:
            node = trie
            for ch in reversed(value):
                node = node.setdefault(ch, {})
            node[""] = value  # a value ends here
    text = description
    found: dict[str, str] = {}
    ends = _Ends(text)
    for sep in _GIVES.finditer(text):
        stop = sep.start()
        named = _named_before(text, stop, trie)
        if text[stop - 1 : stop] in _QUOTE and stop > 0:
            named += _named_before(text, stop - 1, trie)  # an optional closing quote
        named = [v for v in named if v not in found]
        if not named:
            continue
        end = ends.after(sep.end())
        meaning = text[sep.end() : end].strip() if end - sep.end() <= MEANING_MAX else ""
        for value in named if meaning else []:
            found.setdefault(value, meaning)
    return {v: found[v] for v in values if v in found}


def _named_before(text: str, stop: int, trie: dict[str, Any]) -> list[str]:
    """The values that end at ``stop`` and do not continue a word before them."""
    out, node, pos = [], trie, stop
    while True:
        value = node.get("")
        if value is not None and (pos == 0 or _WORD.match(text[pos - 1]) is None):
            out.append(value)
        if pos == 0 or stop - pos >= VALUE_MAX or text[pos - 1] not in node:
            return out
        node, pos = node[text[pos - 1]], pos - 1


class _Ends:
    """Where the meaning after a position ends (a comma, semicolon, line end, a full stop
    before a blank or at the end), for positions asked in increasing order: the text is
    scanned forward once."""

    def __init__(self, text: str) -> None:
        self.text, self.end = text, -1

    def after(self, start: int) -> int:
        if self.end >= start:
            return self.end
        text, i = self.text, start
        n = len(text)
        while i < n:
            ch = text[i]
            if ch in ",;\n" or (ch == "." and (i + 1 == n or text[i + 1].isspace())):
                break
            i += 1
        self.end = i
        return i


class _Model:
    def __init__(self, doc: ys.YamlFile, units: Units, result: ImportResult) -> None:
        self.doc, self.units, self.result = doc, units, result
        root = doc.root
        if root is None or root.kind != ys.MAPPING:
            raise malformed(doc.shown, root.line if root else 1, "is not a YAML mapping")
        name = root.text("name")
        if name is None:
            raise malformed(doc.shown, root.line, "a semantic model needs a 'name'")
        self.root, self.name = root, name
        self.tables: dict[str, tuple[str, dict[str, str]]] = {}  # name -> (table, columns)

    def span(self, node: ys.Node, key: str) -> list[Span]:
        return [node.value[key].span()] if key in node.value else []

    def extras(self, node: ys.Node, used: set[str], where: str) -> None:
        for key in node.value:
            if key not in used:
                self.result.omit(where, key, node.value[key].span())

    def sequence(self, node: ys.Node, key: str) -> list[ys.Node]:
        items = self.doc.items(node, key)
        for item in items:
            if item.kind != ys.MAPPING or (item.text("name") is None and key != "verified_queries"):
                raise malformed(self.doc.shown, item.line, f"an entry of '{key}' needs a name")
        return items

    def scalars(self, node: ys.Node, key: str) -> list[str]:
        """The texts of a list of scalars as written; E504 for a non-list or a nested entry."""
        out = []
        for item in self.doc.items(node, key):
            if item.kind != ys.SCALAR:
                raise malformed(self.doc.shown, item.line, f"an entry of '{key}' is not a value")
            text = item.raw.strip() if item.value is not None else ""
            if text:
                out.append(text)
        return out

    def read(self) -> None:
        root, where = self.root, f"cortex model {self.name}"
        self.glossary(root, element_id(PREFIX, self.name), self.name, where)
        for table in self.sequence(root, "tables"):
            self.read_table(table)
        for rel in self.sequence(root, "relationships"):
            self.read_relationship(rel)
        for metric in self.sequence(root, "metrics"):
            self.logical(metric, (self.name, "metric"), (), where)
        for i, query in enumerate(self.sequence(root, "verified_queries")):
            self.read_query(query, i)
        self.instructions()
        self.extras(root, _MODEL_USED, where)

    def glossary(
        self, node: ys.Node, uid: str, name: str, where: str, **applies: tuple[str, ...]
    ) -> None:
        description = node.text("description")
        synonyms = node.get("synonyms")
        words = tuple(self.scalars(node, "synonyms"))
        if description is None:
            if words and synonyms is not None:
                what = "synonyms (no description to hold them)"
                self.result.omit(where, what, synonyms.span())
            return
        spans = (
            self.span(node, "name") + self.span(node, "description") + self.span(node, "synonyms")
        )
        payload = GlossaryPayload(description, tuple(dict.fromkeys(words)))
        self.units.add(uid, name, payload, spans, where=where, **applies)

    def read_table(self, table: ys.Node) -> None:
        name = str(table.text("name"))
        where = f"cortex model {self.name} table {name}"
        base = table.get("base_table")
        schema = base.text("schema") if base is not None else None
        physical = base.text("table") if base is not None else None
        if schema is None or physical is None:
            raise malformed(
                self.doc.shown, table.line, f"table {name!r} needs base_table with schema and table"
            )
        qualified = f"{ident(schema)}.{ident(physical)}"
        assert base is not None
        if "database" in base.value:
            self.result.omit(where, "base_table database", base.value["database"].span())
        self.glossary(table, element_id(PREFIX, self.name, name), name, where, tables=(qualified,))
        columns: dict[str, str] = {}
        self.tables[name] = (qualified, columns)
        for key in _COLUMN_LISTS:
            for col in self.sequence(table, key):
                self.read_column(col, key, name, qualified, columns)
        for metric in self.sequence(table, "metrics"):
            self.logical(metric, (self.name, name, "metric"), (qualified,), where)
        for filt in self.sequence(table, "filters"):
            self.logical(filt, (self.name, name, "filter"), (qualified,), where)
        self.extras(table, _TABLE_USED, where)

    def read_column(
        self, col: ys.Node, key: str, table: str, qualified: str, columns: dict[str, str]
    ) -> None:
        name = str(col.text("name"))
        where = f"cortex model {self.name} table {table} {key[:-1].replace('_', ' ')} {name}"
        expr = col.text("expr") or name
        physical = None
        if _COLUMN_NAME.fullmatch(expr):  # one column, not an expression over several
            physical = f"{qualified}.{expr if expr.startswith(chr(34)) else ident(expr)}"
        if physical is not None:
            columns[name] = physical
        applies = {"columns": (physical,)} if physical else {"tables": (qualified,)}
        uid = element_id(PREFIX, self.name, table, name)
        self.glossary(col, uid, f"{table}.{name}", where, **applies)
        if physical is None:
            spans = self.span(col, "name") + self.span(col, "expr")
            self.units.add(
                f"{uid}.expr",
                f"{table}.{name}",
                FormulaPayload(name, expr),
                spans,
                tables=(qualified,),
                where=where,
            )
        if "sample_values" in col.value:
            if key == "dimensions":
                self.enum(col, f"{uid}.values", f"{table}.{name}", physical, where)
            else:
                what = "sample values (samples of a range, not a list of values)"
                self.result.omit(where, what, col.value["sample_values"].span())
        self.extras(col, _COLUMN_USED, where)

    def enum(self, col: ys.Node, uid: str, name: str, physical: str | None, where: str) -> None:
        node = col.value["sample_values"]
        values = list(dict.fromkeys(self.scalars(col, "sample_values")))
        if not values:
            return
        if physical is None:
            self.result.review(
                "not-representable",
                f"{where}: sample values of an expression ({col.text('expr')!r}) are not the "
                "values of one column; they are not imported",
                uid,
            )
            return
        meanings = _meanings(col.text("description"), values)
        missing = [v for v in values if v not in meanings]
        if missing:
            self.result.review(
                "meaning-missing",
                f"{where}: no meaning for {', '.join(repr(v) for v in missing)}; list them in "
                "the description ('V = meaning, ...') or write the meanings in the unit",
                uid,
            )
        payload = EnumPayload(physical, tuple(EnumValue(v, meanings.get(v, "")) for v in values))
        spans = [*self.span(col, "name"), node.span()]
        if meanings:
            spans += self.span(col, "description")
        self.units.add(uid, name, payload, spans, columns=(physical,), where=where)

    def logical(
        self, node: ys.Node, parts: tuple[str, ...], tables: tuple[str, ...], where: str
    ) -> None:
        """A metric or filter: its ``expr`` as a formula, its description as a glossary."""
        name = str(node.text("name"))
        where = f"{where} {parts[-1]} {name}"
        uid = element_id(PREFIX, *parts, name)
        expr = node.text("expr")
        if expr is None:
            raise malformed(self.doc.shown, node.line, f"{parts[-1]} {name!r} needs an expr")
        spans = self.span(node, "name") + self.span(node, "expr")
        self.units.add(uid, name, FormulaPayload(name, expr), spans, tables=tables, where=where)
        self.glossary(node, f"{uid}.term", name, where, tables=tables)
        self.extras(node, {"name", "expr", "description", "synonyms"}, where)

    def read_relationship(self, rel: ys.Node) -> None:
        name = str(rel.text("name"))
        where = f"cortex model {self.name} relationship {name}"
        found = [self.tables.get(rel.text(k) or "") for k in ("left_table", "right_table")]
        sides = [side for side in found if side is not None]
        if len(sides) != 2:
            raise malformed(
                self.doc.shown,
                rel.line,
                f"relationship {name!r} joins a table the model does not define",
            )
        columns: list[str] = []
        pairs = rel.get("relationship_columns")
        for pair in pairs.items() if pairs is not None else []:
            for key, (qualified, known) in zip(("left_column", "right_column"), sides, strict=True):
                column = pair.text(key)
                if column is not None:
                    columns.append(known.get(column) or f"{qualified}.{ident(column)}")
        tables = (sides[0][0], sides[1][0])
        payload = MappingPayload(name, tables, tuple(dict.fromkeys(columns)))
        self.units.add(
            element_id(PREFIX, self.name, "relationship", name),
            name,
            payload,
            [rel.span()],
            tables=tables,
            columns=payload.columns,
            where=where,
        )
        self.extras(rel, {"name", "left_table", "right_table", "relationship_columns"}, where)

    def read_query(self, query: ys.Node, index: int) -> None:
        question, sql = query.text("question"), query.text("sql")
        label = query.text("name") or question or str(index + 1)
        where = f"cortex model {self.name} verified query {label}"
        if question is None or sql is None:
            raise malformed(self.doc.shown, query.line, "a verified query needs a question and sql")
        spans = self.span(query, "question") + self.span(query, "sql")
        uid = element_id(PREFIX, self.name, "query", label)
        self.units.add(uid, question, ExamplePayload(question, fenced_sql(sql)), spans, where=where)
        self.extras(query, _QUERY_USED, where)

    def instructions(self) -> None:
        where = f"cortex model {self.name}"
        text = self.root.text("custom_instructions")
        if text is not None:
            self.units.add(
                element_id(PREFIX, self.name, "instructions"),
                f"{self.name} instructions",
                DomainPayload(text),
                self.span(self.root, "custom_instructions"),
                where=where,
            )
        modules = self.root.get("module_custom_instructions")
        parts = modules.value if modules is not None and modules.kind == ys.MAPPING else {}
        for key, node in parts.items():
            body = str(node.value).strip() if node.kind == ys.SCALAR and node.value else ""
            if body:
                self.units.add(
                    element_id(PREFIX, self.name, "instructions", key),
                    f"{self.name} instructions: {key.replace('_', ' ')}",
                    DomainPayload(body),
                    [node.span()],
                    where=where,
                )
