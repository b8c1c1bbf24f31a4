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
from evidence_tool.unit.yaml_events import YamlEvent, YamlSyntaxError, events
from evidence_tool.unit.yaml_strict import MAX_DEPTH, resolve_plain

MAPPING, SEQUENCE, SCALAR = "mapping", "sequence", "scalar"


@dataclass
class Node:
    kind: str
    start: int  # byte offsets into the raw file
    end: int
    line: int  # 1-based line of the node's first byte
    # mapping: key -> value node; sequence: item nodes; scalar: the resolved value
    value: Any = None
    keys: dict[str, Node] = field(default_factory=dict)  # mapping: key -> its key scalar

    def get(self, key: str) -> Node | None:
        return self.value.get(key) if self.kind == MAPPING else None

    def items(self) -> list[Node]:
        return list(self.value) if self.kind == SEQUENCE else []

    def text(self, key: str) -> str | None:
        """The stripped string under ``key``, or None when absent, empty or not a scalar."""
        node = self.get(key)
        if node is None or node.kind != SCALAR or node.value is None:
            return None
        value = str(node.value).strip()
        return value or None

    def plain(self) -> Any:
        if self.kind == MAPPING:
            return {k: v.plain() for k, v in self.value.items()}
        if self.kind == SEQUENCE:
            return [v.plain() for v in self.value]
        return self.value


@dataclass
class YamlFile:
    path: str  # as messages show it
    span_path: str  # as spans name it (relative to the source's root)
    raw: bytes
    root: Node | None

    def span(self, node: Node) -> Span:
        return Span(self.span_path, node.start, node.end, self.raw[node.start : node.end].decode())

    def items(self, node: Node, key: str) -> list[Node]:
        """The entries of the list under ``key`` ([] when absent or null); E504 for a non-list."""
        items = node.get(key)
        if items is None or items.value is None:
            return []
        if items.kind != SEQUENCE:
            raise malformed(self.path, items.line, f"'{key}' is not a list")
        return items.items()

    def scalar_text(self, node: Node) -> str:
        """A scalar as written: ``007`` stays ``007`` (its value would be the number 7)."""
        if isinstance(node.value, str):
            return node.value
        return self.raw[node.start : node.end].decode()


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


def _trim(raw: bytes, start: int, end: int) -> int:
    """A block node ends where the next token starts: drop the blanks and newlines between."""
    while end > start and raw[end - 1 : end] in (b" ", b"\t", b"\r", b"\n"):
        end -= 1
    return end


def load(raw: bytes, path: str, span_path: str, start: int = 0, end: int | None = None) -> YamlFile:
    """The YAML document in ``raw[start:end]`` (the whole file by default)."""
    end = len(raw) if end is None else end
    try:
        text = raw[start:end].decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, start + exc.start) + 1
        raise malformed(path, line, "is not UTF-8 text") from None
    bom = 1 if text.startswith("\ufeff") else 0
    line0 = raw.count(b"\n", 0, start)
    root = _Builder(raw, text, start, line0, path).run(bom)
    return YamlFile(path, span_path, raw, root)


class _Builder:
    def __init__(self, raw: bytes, text: str, base: int, line0: int, path: str) -> None:
        self.raw, self.text, self.line0, self.path = raw, text, line0, path
        self.offset = _Offsets(text, base)
        # [node, pending key (str | None), key node] for mappings; [node] for sequences
        self.stack: list[list[Any]] = []
        self.root: Node | None = None

    def fail(self, event: YamlEvent, why: str) -> SourceError:
        return malformed(self.path, event.line + self.line0, why)

    def run(self, bom: int) -> Node | None:
        if bom:  # positions count from after the BOM
            self.offset = _Offsets(self.text[bom:], self.offset.base + 3)
        documents = 0
        try:
            for event in events(self.text[bom:] if bom else self.text):
                if event.kind == "stream-end":
                    break
                if event.kind == "document-start":
                    documents += 1
                    if documents > 1:
                        raise self.fail(event, "only one YAML document is allowed")
                elif event.kind not in ("stream-start", "document-end"):
                    self.event(event)
        except YamlSyntaxError as exc:
            line = exc.line + self.line0 if exc.line is not None else None
            raise malformed(self.path, line, f"YAML syntax: {exc.message}") from None
        return self.root

    def event(self, event: YamlEvent) -> None:
        if event.kind == "alias":
            raise self.fail(event, "YAML aliases (*name) are not allowed")
        if event.anchor is not None:
            raise self.fail(event, f"YAML anchors (&{event.anchor}) are not allowed")
        if event.tag is not None:
            raise self.fail(event, f"YAML tags ({event.tag}) are not allowed")
        start = self.offset(event.start)
        line = event.line + self.line0
        if event.kind == "scalar":
            value = resolve_plain(event.value or "") if event.plain else event.value
            end = _trim(self.raw, start, self.offset(event.end))
            self.attach(Node(SCALAR, start, end, line, value), event)
        elif event.kind in ("mapping-start", "sequence-start"):
            if len(self.stack) >= MAX_DEPTH:
                raise self.fail(event, f"YAML nested deeper than {MAX_DEPTH} levels")
            mapping = event.kind == "mapping-start"
            node = Node(MAPPING if mapping else SEQUENCE, start, start, line, {} if mapping else [])
            self.stack.append([node, None, None] if mapping else [node])
        elif event.kind in ("mapping-end", "sequence-end"):
            node = self.stack.pop()[0]
            node.end = _trim(self.raw, node.start, self.offset(event.end))
            self.attach(node, event)

    def attach(self, node: Node, event: YamlEvent) -> None:
        if not self.stack:
            self.root = node
            return
        top = self.stack[-1]
        parent: Node = top[0]
        if parent.kind == SEQUENCE:
            parent.value.append(node)
        elif top[2] is None:  # a key
            if node.kind != SCALAR or isinstance(node.value, float):
                raise self.fail(event, "a mapping key must be a plain name")
            key = str(node.value)
            if key in parent.value:
                raise self.fail(event, f"duplicate key '{key}'")
            top[1], top[2] = key, node
        else:
            parent.value[top[1]] = node
            parent.keys[top[1]] = top[2]
            top[1], top[2] = None, None
