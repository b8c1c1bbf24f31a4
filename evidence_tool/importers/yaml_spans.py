"""Strict YAML for importers, with the exact byte span of every node.

An importer cites the bytes each unit came from, so every mapping, sequence
and scalar here keeps its start and end offset in the raw file.  The rules are
the strict loader's (``unit.yaml_strict``): one document, no anchors, aliases
or tags, no duplicate keys, YAML 1.2 core scalars; any breach is E504 naming
the file and line (``base.malformed``), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import Span, malformed
from evidence_tool.importers.spans import BOM, after_bom, decode
from evidence_tool.unit.yaml_events import YamlEvent, YamlSyntaxError, events
from evidence_tool.unit.yaml_strict import MAX_DEPTH, resolve_plain

MAPPING, SEQUENCE, SCALAR = "mapping", "sequence", "scalar"


@dataclass
class Node:
    """A YAML node: ``value`` is a dict of key -> Node, a list of Node, or a scalar's value."""

    value: Any
    start: int  # byte offsets into the raw file
    end: int
    line: int  # 1-based line of the node's first byte
    doc: YamlFile = field(repr=False)  # the file it is in
    raw: str = ""  # a scalar's text as written (quotes removed): '007' stays '007'

    @property
    def kind(self) -> str:
        value = self.value
        return (
            MAPPING if isinstance(value, dict) else SEQUENCE if isinstance(value, list) else SCALAR
        )

    def get(self, key: str) -> Node | None:
        return self.value.get(key) if isinstance(self.value, dict) else None

    def items(self) -> list[Node]:
        return self.value if isinstance(self.value, list) else []

    def text(self, key: str) -> str | None:
        """The stripped string under ``key``, or None when absent, empty or not a scalar."""
        node = self.get(key)
        if node is None or node.kind != SCALAR or node.value is None:
            return None
        value = str(node.value).strip()
        return value or None

    def written(self, key: str) -> str | None:
        """The scalar under ``key`` as written (numbers too), None when absent or null."""
        node = self.get(key)
        return None if node is None or node.value is None or node.kind != SCALAR else node.raw

    def plain(self) -> Any:
        """The node as plain Python data (positions dropped)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value

    def span(self) -> Span:
        return self.doc.span(self)


@dataclass
class YamlFile:
    shown: str  # as messages show it (workspace-relative)
    path: str  # as spans name it (relative to the source's root)
    raw: bytes
    root: Node | None = None

    def span(self, node: Node) -> Span:
        end = _trim(self.raw, node.start, node.end)
        return Span(self.path, node.start, end, self.raw[node.start : end].decode())

    def items(self, node: Node, key: str) -> list[Node]:
        """The entries of the list under ``key`` ([] when absent or null); E504 for a non-list."""
        items = node.get(key)
        if items is None or items.value is None:
            return []
        if items.kind != SEQUENCE:
            raise malformed(self.shown, items.line, f"'{key}' is not a list")
        return items.items()


class _Offsets:
    """Character index -> byte offset, asked in stream order (so one pass over the text)."""

    def __init__(self, text: str, base: int) -> None:
        self.text, self.base = text, base
        self.ascii = text.isascii()
        self.char, self.byte = 0, 0

    def __call__(self, index: int) -> int:
        if self.ascii:
            return self.base + index
        if index < self.char:
            self.char, self.byte = 0, 0
        self.byte += len(self.text[self.char : index].encode("utf-8"))
        self.char = index
        return self.base + self.byte

    def end(self, start: int, start_byte: int, index: int) -> int:
        """The byte offset of ``index``, counted from the node's ``start`` (whose offset is
        ``start_byte``) and not remembered: the next event may start before a scalar's end."""
        if self.ascii:
            return self.base + index
        return start_byte + len(self.text[start:index].encode("utf-8"))


def _trim(raw: bytes, start: int, end: int) -> int:
    """A block node ends where the next token starts: drop the blanks and newlines between."""
    while end > start and raw[end - 1 : end] in (b" ", b"\t", b"\r", b"\n"):
        end -= 1
    return end


def load(
    raw: bytes,
    shown: str,
    path: str,
    start: int = 0,
    end: int | None = None,
    builder: type[Builder] | None = None,
) -> YamlFile:
    """The YAML document in ``raw[start:end]`` (the whole file by default); ``builder``: the
    reader's dialect (``Builder`` by default)."""
    end = len(raw) if end is None else end
    doc = YamlFile(shown, path, raw)
    line0 = raw.count(b"\n", 0, start)
    start += after_bom(raw[start : start + len(BOM)])  # a BOM holds no line break
    text = decode(raw[start:end], shown, line0 + 1)
    doc.root = (builder or Builder)(doc, text, start, line0).run()
    return doc


class Builder:
    """Nodes with byte offsets from the strict YAML events.  The WrenAI and Cortex importers
    use it as it is; dbt's (``dbt_model.DbtBuilder``) words its messages its own way, keeps
    keys as written and ends a block collection at its last child: one reader, two faces."""

    DOCUMENTS = "only one YAML document is allowed"
    ALIAS = "YAML aliases (*name) are not allowed"
    ANCHOR = "YAML anchors (&{anchor}) are not allowed"
    TAG = "YAML tags ({tag}) are not allowed"
    DEEP = "YAML nested deeper than {depth} levels"

    def __init__(self, doc: YamlFile, text: str, base: int, line0: int) -> None:
        self.doc, self.raw, self.text, self.line0 = doc, doc.raw, text, line0
        self.offset = _Offsets(text, base)
        # [node, pending key (str | None), key node] for mappings; [node] for sequences
        self.stack: list[list[Any]] = []
        self.root: Node | None = None

    def fail(self, line: int | None, why: str) -> SourceError:
        return malformed(self.doc.shown, line, why)

    def run(self) -> Node | None:
        documents = 0
        try:
            for event in events(self.text):
                if event.kind == "stream-end":
                    break
                if event.kind == "document-start":
                    documents += 1
                    if documents > 1:
                        raise self.fail(event.line + self.line0, self.DOCUMENTS)
                elif event.kind not in ("stream-start", "document-end"):
                    self.event(event)
        except YamlSyntaxError as exc:
            line = exc.line + self.line0 if exc.line is not None else None
            raise self.fail(line, f"YAML syntax: {exc.message}") from None
        return self.root

    def event(self, event: YamlEvent) -> None:
        line = event.line + self.line0
        if event.kind == "alias":
            raise self.fail(line, self.ALIAS)
        if event.anchor is not None:
            raise self.fail(line, self.ANCHOR.format(anchor=event.anchor))
        if event.tag is not None:
            raise self.fail(line, self.TAG.format(tag=event.tag))
        if event.kind in ("mapping-end", "sequence-end"):
            node = self.stack.pop()[0]
            node.end = self.close(node, event)
            self.attach(node, line)
            return
        start = self.offset(event.start)
        if event.kind == "scalar":
            text = event.value or ""
            value = resolve_plain(text) if event.plain else text
            end = self.offset.end(event.start, start, event.end)
            self.attach(self.scalar(start, end, line, value, text), line)
        elif event.kind in ("mapping-start", "sequence-start"):
            if len(self.stack) >= MAX_DEPTH:
                raise self.fail(line, self.DEEP.format(depth=MAX_DEPTH))
            mapping = event.kind == "mapping-start"
            node = self.collection(mapping, start, line)
            self.stack.append([node, None, None] if mapping else [node])

    def scalar(self, start: int, end: int, line: int, value: Any, text: str) -> Node:
        return Node(value, start, _trim(self.raw, start, end), line, self.doc, text)

    def collection(self, mapping: bool, start: int, line: int) -> Node:
        return Node({} if mapping else [], start, start, line, self.doc)

    def close(self, node: Node, event: YamlEvent) -> int:
        """Where a finished collection ends: here, where the next token starts."""
        return _trim(self.raw, node.start, self.offset(event.end))

    def key(self, node: Node, line: int) -> str:
        if node.kind != SCALAR or isinstance(node.value, float):
            raise self.fail(line, "a mapping key must be a plain name")
        return str(node.value)

    def attach(self, node: Node, line: int) -> None:
        if not self.stack:
            self.root = node
            return
        top = self.stack[-1]
        parent = top[0]
        parent.end = max(parent.end, node.end)  # dbt's block collections end at their last child
        if isinstance(parent.value, list):
            parent.value.append(node)
        elif top[2] is None:  # a key
            key = self.key(node, line)
            if key in parent.value:
                raise self.fail(line, f"duplicate key '{key}'")
            top[1], top[2] = key, node
        else:
            parent.value[top[1]] = node
            top[1], top[2] = None, None
