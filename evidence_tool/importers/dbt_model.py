"""dbt's elements as both readers give them (project folder, manifest), and their helpers.

``dbt_project`` and ``dbt_manifest`` read a project into these; ``dbt`` turns them into
units.  Kept apart from both so that no dbt module imports another in a circle.

Node selection (the ``select`` and ``exclude`` options) is the subset of ``dbt ls
--select`` that names models without a graph: a name or a ``*``/``?`` glob (matched
against the model's name and the folders of its fqn, as dbt does for a bare word:
``staging`` is every model under ``models/staging``), ``path:<prefix or glob>`` (the
model's files, project-relative) and ``tag:<glob>``.  Selectors separated by spaces (or
given as a YAML list) are a union; a comma joins selectors into an intersection
(``staging,tag:nightly``).  Graph operators (``+``, ``@``, ``n+``) and other methods are
E902: they would select what the import cannot see.

Docs blocks and ``{{ doc('name') }}``: a description is rendered the way dbt renders it
for docs, each ``doc()`` call replaced by its block's text.  Any other Jinja is not
rendered (it would need the project's variables and macros): the element is a review
item, never a guess.  Meanings of enum values are read only from lists that name the
value literally (docs/importers.md, "### dbt", gives the three shapes).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.importers.base import ImportInput, ImportResult, Span, malformed, option_error
from evidence_tool.importers.dbt_semantic import Element
from evidence_tool.importers.spans import after_bom, decode
from evidence_tool.importers.unit_parts import ident
from evidence_tool.importers.yaml_spans import Builder, Node, YamlFile, load
from evidence_tool.unit.yaml_events import YamlEvent

_METHODS = ("path", "tag")


@dataclass(frozen=True)
class Selectable:
    """What selection sees of one model."""

    name: str
    fqn: tuple[str, ...]  # project name, folders under the model path, model name
    paths: tuple[str, ...]  # project-relative files that define or describe it
    tags: tuple[str, ...]


Criterion = tuple[str, str]  # (method: "" | "path" | "tag", value)
Selector = tuple[Criterion, ...]  # an intersection


def selectors(value: object, where: str) -> tuple[Selector, ...] | None:
    """The union of selectors an option names (None when the option is absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        words = value.split()
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        words = [w for v in value for w in v.split()]
    else:
        raise option_error(where, f"{value!r} is not a selector text or a list of them")
    if not words:
        raise option_error(where, "no selector; give a model name, a glob, path:... or tag:...")
    return tuple(_selector(word, where) for word in words)


def _selector(word: str, where: str) -> Selector:
    criteria = []
    for part in word.split(","):
        if not part or part[0] in "+@" or part[-1] == "+" or (part[0].isdigit() and "+" in part):
            raise option_error(
                where,
                f"{word!r}: graph operators (+, @) select by lineage, which an import does "
                "not read; name the models, a folder, path: or tag:",
            )
        method, sep, rest = part.partition(":")
        if not sep:
            criteria.append(("", part))
        elif method in _METHODS and rest:
            criteria.append((method, rest.rstrip("/") if method == "path" else rest))
        else:
            raise option_error(
                where,
                f"{word!r}: the method {method!r} is not supported here; supported: a name "
                "or glob, path:, tag:",
            )
    return tuple(criteria)


def _matches(node: Selectable, criterion: Criterion) -> bool:
    method, value = criterion
    if method == "tag":
        return any(fnmatch.fnmatchcase(t, value) for t in node.tags)
    if method == "path":
        return any(
            p == value or p.startswith(value + "/") or fnmatch.fnmatchcase(p, value)
            for p in node.paths
        )
    return fnmatch.fnmatchcase(node.name, value) or any(
        fnmatch.fnmatchcase(part, value) for part in node.fqn
    )


def _any(node: Selectable, union: Sequence[Selector]) -> bool:
    return any(all(_matches(node, c) for c in selector) for selector in union)


@dataclass(frozen=True)
class Selection:
    select: tuple[Selector, ...] | None = None
    exclude: tuple[Selector, ...] | None = None

    @classmethod
    def of(cls, options: dict[str, object], key: str) -> Selection:
        return cls(
            selectors(options.get("select"), f"{key}.options.select"),
            selectors(options.get("exclude"), f"{key}.options.exclude"),
        )

    def chooses(self, node: Selectable) -> bool:
        if self.select is not None and not _any(node, self.select):
            return False
        return not (self.exclude is not None and _any(node, self.exclude))


# The tag's argument is taken whole and trimmed by hand: a lazy group before optional
# blanks backtracks quadratically on a tag left open over a long blank run.
_BLOCK_TAG = re.compile(r"\{%-?\s*(docs|enddocs)\b([^%]*)%\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOC_CALL = re.compile(
    r"\{\{-?\s*doc\(\s*(['\"])([^'\"]*)\1\s*(?:,\s*(['\"])([^'\"]*)\3\s*)?\)\s*-?\}\}"
)
_JINJA = re.compile(r"\{\{|\{%|\{#")


@dataclass(frozen=True)
class DocsBlock:
    name: str
    text: str  # the block's contents without surrounding blank space
    span: Span  # exactly those bytes
    where: str  # "models/docs.md:3"


def docs_blocks(path: str, shown: str, raw: bytes) -> list[DocsBlock]:
    """Every ``{% docs name %}...{% enddocs %}`` block of one Markdown file (E504 for a block
    never closed, an enddocs without docs, a nested block, or a name that is not one)."""
    bom = after_bom(raw)
    text = decode(raw[bom:], shown)  # a BOM holds no line break: the line is the file's
    blocks: list[DocsBlock] = []
    open_at: tuple[str, int, int] | None = None  # (name, content start char, line)
    where = _Cursor(text, bom)  # line numbers and byte offsets, counted forward once
    for match in _BLOCK_TAG.finditer(text):
        if match.group(1) == "enddocs" and open_at is not None:
            name, begin, _ = open_at
            body = text[begin : match.start()]
            stripped = body.strip()
            lead = len(body) - len(body.lstrip())
            start = where.byte(begin + lead)
            end = start + len(stripped.encode("utf-8"))
            first = where.line(begin + lead)
            # The span keeps the bytes as they are; the text a unit states has plain line ends.
            text_lf = stripped.replace("\r\n", "\n")
            blocks.append(
                DocsBlock(name, text_lf, Span(path, start, end, stripped), f"{shown}:{first}")
            )
            open_at = None
            continue
        line = where.line(match.start())
        if match.group(1) == "enddocs":
            raise malformed(shown, line, "{% enddocs %} without a {% docs name %} before it")
        if open_at is not None:
            raise malformed(
                shown,
                line,
                f"a docs block opens inside the block '{open_at[0]}' (line "
                f"{open_at[2]}); close it with {{% enddocs %}} first",
            )
        name = match.group(2).strip()
        name = name[:-1].rstrip() if name.endswith("-") else name
        if not _NAME.fullmatch(name):
            raise malformed(shown, line, f"'{name}' is not a docs block name")
        open_at = (name, match.end(), line)
    if open_at is not None:
        raise malformed(
            shown, open_at[2], f"the docs block '{open_at[0]}' is never closed with {{% enddocs %}}"
        )
    return blocks


class _Cursor:
    """Line number and byte offset of character positions asked for in increasing order:
    each step counts only the text since the last one, so a file of many blocks is read
    once rather than from its start per block."""

    def __init__(self, text: str, bom: int) -> None:
        self.text, self.pos, self.lines, self.bytes = text, 0, 1, bom

    def _to(self, pos: int) -> None:
        assert pos >= self.pos
        part = self.text[self.pos : pos]
        self.lines += part.count("\n")
        self.bytes += len(part.encode("utf-8"))
        self.pos = pos

    def line(self, pos: int) -> int:
        self._to(pos)
        return self.lines

    def byte(self, pos: int) -> int:
        self._to(pos)
        return self.bytes


@dataclass
class Rendered:
    text: str  # the description with every doc() replaced
    blocks: list[DocsBlock] = field(default_factory=list)  # the blocks used, in order
    jinja: bool = False  # other Jinja is left: not representable


def render(description: str, blocks: dict[str, DocsBlock], shown: str, line: int) -> Rendered:
    """The description as dbt's docs show it; E504 for a doc() that names no block."""
    used: list[DocsBlock] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(4) if match.group(4) is not None else match.group(2)
        block = blocks.get(name)
        if block is None:
            raise malformed(
                shown, line, f"doc('{name}') names no docs block in the project's .md files"
            )
        if block not in used:
            used.append(block)
        return block.text

    text = _DOC_CALL.sub(replace, description).strip()
    return Rendered(text, used, bool(_JINJA.search(text)))


# The three list shapes that give a value's meaning, one value per line:
#   - value: meaning   (also '*', '+', and '=' or ' - ' or an en/em dash for ':')
#   value = meaning
#   | value | meaning |
# Each shape is read by hand, in one pass over the line: as patterns, their lazy groups
# between optional blanks backtracked quadratically (cubically for a table row) on a
# line with a long blank run.
_DASHES = "-\u2013\u2014"
_QUOTES = ("`", "'", '"', "**")


def _unquote(value: str) -> str:
    for q in _QUOTES:
        if len(value) >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            return value[len(q) : -len(q)].strip()
    return value


def _row(line: str) -> tuple[str, str] | None:
    """``| value | meaning | ...``: a line that opens with a cell and has two more bars."""
    body = line.lstrip()
    if not body.startswith("|"):
        return None
    cells = body[1:].split("|", 2)
    if len(cells) < 3 or not cells[0]:
        return None
    return cells[0].strip() or cells[0][-1], cells[1].strip()


def _bullet(line: str) -> tuple[str, str] | None:
    """``- value: meaning`` (or ``=``, or a dash after a blank, for the colon); the value
    ends at the first separator that blank space and a meaning follow."""
    body = line.lstrip()
    if len(body) < 2 or body[0] not in "-*+" or not body[1].isspace():
        return None
    rest = body[1:]
    k = len(rest) - len(rest.lstrip())  # the value starts after this blank run
    last = len(rest.rstrip())  # a meaning needs a non-blank character before this

    def meaning(p: int) -> str | None:
        if rest[p] in ":=":
            after = p + 1
        elif rest[p].isspace() and rest[p + 1 : p + 2] and rest[p + 1] in _DASHES:
            after = p + 2
        else:
            return None
        return rest[after:].strip() if last > after + 1 and rest[after].isspace() else None

    for p in range(k + 1, len(rest)):
        found = meaning(p)
        if found is not None:
            return rest[k:p].rstrip(), found
    # As the pattern did, a separator right after a blank run of two or more: a blank value.
    for p, least in ((k, 2), (k - 1, 3)):
        found = meaning(p) if k >= least and p < len(rest) else None
        if found is not None:
            return "", found
    return None


def _equals(line: str) -> tuple[str, str] | None:
    """``value = meaning``: the first ``=``, with no bar before it."""
    body = line.lstrip()
    eq = body.find("=")
    if eq < 1 or "|" in body[:eq]:
        return None
    meaning = body[eq + 1 :].strip()
    return (body[:eq].rstrip(), meaning) if meaning else None


def meanings(text: str, values: list[str]) -> dict[str, str]:
    """Meaning per value, from the first line of a recognized shape that names it literally."""
    wanted = set(values)
    found: dict[str, str] = {}
    for line in text.splitlines():
        for shape in (_row, _bullet, _equals):
            pair = shape(line)
            if pair is None:
                continue
            value, meaning = _unquote(pair[0]), pair[1].strip()
            if value in wanted and meaning and value not in found and set(meaning) - set("-:| "):
                found[value] = meaning
            break
    return found


DEFAULT_SCHEMA = "public"
# Matched against the stripped value: blanks around the call, and between ``=`` and the
# version, as optional groups next to ``[^)]*`` backtracked quadratically.


_REF = re.compile(r"""ref\(\s*(['"])([^'"]+)\1\s*(?:,\s*(?:v|version)\s*=[^)]*)?\)""")


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
