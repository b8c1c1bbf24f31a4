"""dbt's elements as both readers give them (project folder, manifest), and their helpers.

``dbt_project`` and ``dbt_manifest`` read a project into these; ``dbt`` turns them into
units.  Kept apart from both so that no dbt module imports another in a circle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.importers.base import ImportInput, ImportResult, Span, malformed
from evidence_tool.importers.dbt_docs import DocsBlock, Rendered, docs_blocks, render
from evidence_tool.importers.dbt_semantic import Element
from evidence_tool.importers.unit_parts import ident
from evidence_tool.importers.yaml_spans import Builder, Node, YamlFile, load
from evidence_tool.unit.yaml_events import YamlEvent

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


def qualify(schema: str, table: str) -> str:
    return f"{ident(schema)}.{ident(table)}"


def render_text(node: Node | None, blocks: dict[str, DocsBlock], shown: str) -> Text | None:
    """A YAML description node rendered, with its span and the docs blocks' spans."""
    if node is None or node.value is None or isinstance(node.value, dict | list):
        return None
    rendered: Rendered = render(node.raw, blocks, shown, node.line)
    if not rendered.text:
        return None
    spans = [node.span(), *(b.span for b in rendered.blocks)]
    return Text(rendered.text, spans, rendered.jinja, f"{shown}:{node.line}")


def rest(result: ImportResult, element: str, node: Node, handled: frozenset[str]) -> None:
    """Every non-empty key of ``node`` outside ``handled`` is listed as not imported."""
    pairs = node.value.items() if isinstance(node.value, dict) else ()
    for key, child in pairs:
        if key not in handled and child.value not in (None, "", [], {}):
            result.omit(element, key, child.span())


def no_jinja(node: Node | None, shown: str, what: str) -> str:
    """A name as text; E504 when it is missing, not text, or Jinja (names are never rendered)."""
    if node is None or node.value is None or isinstance(node.value, dict | list):
        line = node.line if node is not None else None
        raise malformed(shown, line, f"{what} has no name")
    text = node.raw
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
    return load(f.read_bytes(source.max_bytes), source.shown(path), path, builder=DbtBuilder)


class DbtBuilder(Builder):
    """The shared YAML reader, in dbt's words; a scalar keeps its text as written (a key
    too: '01' stays '01'), and a block collection ends at its last child."""

    DOCUMENTS = "holds more than one YAML document"
    ALIAS = ANCHOR = "uses a YAML anchor or alias; write the values out"
    TAG = "uses a YAML tag ({tag})"
    DEEP = "nests YAML deeper than {depth} levels"

    def scalar(self, start: int, end: int, line: int, value: Any, text: str) -> Node:
        return Node(value, start, end, line, self.doc, text)  # trailing blanks cut by spans

    def close(self, node: Node, event: YamlEvent) -> int:
        # A flow collection ends at its bracket; a block one where its last child ended.
        if event.end > event.start:
            return self.offset.end(event.start, self.offset(event.start), event.end)
        return node.end

    def key(self, node: Node, line: int) -> str:
        if isinstance(node.value, dict | list):
            raise self.fail(node.line, "a mapping key must be a plain value")
        return node.raw


def element(node: Node, name: str, table: str | None, shown: str, model: str = "") -> Element:
    data = node.plain() if isinstance(node.value, dict) else {}
    return Element(name, data, table, [node.span()], f"{shown}:{node.line}", model)


def docs_of(source: ImportInput, paths: list[str]) -> dict[str, DocsBlock]:
    blocks: dict[str, DocsBlock] = {}
    for f in source.files:
        if not f.path.lower().endswith(".md") or not under(f.path, paths):
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


def under(path: str, roots: list[str]) -> bool:
    return any(root in ("", ".") or path.startswith(root.rstrip("/") + "/") for root in roots)
