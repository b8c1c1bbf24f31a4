"""dbt's YAML files, loaded with the byte range of every node.

A dbt property file is user YAML, so it is read as strictly as the tool's own
files (one document, no duplicate keys, no anchors, aliases or tags, nested at
most 64 levels; plain scalars by the YAML 1.2 core schema) and every problem is
E504 naming the file and line.  Each node keeps its exact byte range so a unit
can cite the bytes it came from (a description scalar, a test block, a metric).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import Span, after_bom, malformed, utf8
from evidence_tool.unit.yaml_events import YamlEvent, YamlSyntaxError, events
from evidence_tool.unit.yaml_strict import MAX_DEPTH, resolve_plain


@dataclass
class YNode:
    """A YAML node: ``value`` is a dict of str -> YNode, a list of YNode, or a scalar."""

    value: Any
    start: int  # byte offsets into the file
    end: int
    line: int  # 1-based line of the node's first byte
    raw: str | None = None  # a scalar's text as written (quotes removed): '01' stays '01'
    doc: YamlFile | None = field(default=None, repr=False)

    def get(self, key: str) -> YNode | None:
        return self.value.get(key) if isinstance(self.value, dict) else None

    def text(self, key: str) -> str | None:
        """A scalar child as text (numbers as written), None when absent or null."""
        child = self.get(key)
        if child is None or child.value is None or isinstance(child.value, dict | list):
            return None
        return child.raw if child.raw is not None else str(child.value)

    def items(self) -> Iterator[tuple[str, YNode]]:
        if isinstance(self.value, dict):
            yield from self.value.items()

    def seq(self) -> list[YNode]:
        return self.value if isinstance(self.value, list) else []

    def plain(self) -> Any:
        """The node as plain Python data (positions dropped)."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value

    def span(self) -> Span:
        assert self.doc is not None
        return self.doc.span(self.start, self.end)


@dataclass
class YamlFile:
    path: str  # relative to the source root (what spans name)
    shown: str  # workspace-relative (what messages name)
    raw: bytes
    root: YNode | None = None

    def span(self, start: int, end: int) -> Span:
        # Block collections end where the next token starts: trailing blanks are not the node's.
        while end > start and self.raw[end - 1 : end] in (b" ", b"\t", b"\r", b"\n"):
            end -= 1
        return Span(self.path, start, end, self.raw[start:end].decode("utf-8"))

    def line(self, offset: int) -> int:
        return self.raw.count(b"\n", 0, offset) + 1


def load(path: str, shown: str, raw: bytes) -> YamlFile:
    """The file's root node with byte ranges; E504 naming file and line for any problem."""
    doc = YamlFile(path, shown, raw)
    offset = after_bom(raw)
    text = utf8(raw[offset:], shown)  # a BOM holds no line break
    if "\x00" in text:
        raise malformed(shown, doc.line(raw.index(b"\x00")), "holds a NUL byte")
    doc.root = _Builder(doc, text, offset).run()
    return doc


class _Builder:
    def __init__(self, doc: YamlFile, text: str, offset: int) -> None:
        self.doc, self.text, self.offset = doc, text, offset
        self.ascii = len(text) == len(doc.raw) - offset
        self._at = (0, offset)  # (char index, byte offset) of the last start converted

    def byte(self, index: int) -> int:
        """Byte offset of character ``index``: event starts only grow, so count forward."""
        if self.ascii:
            return self.offset + index
        char, byte = self._at
        if index < char:
            char, byte = 0, self.offset
        byte += len(self.text[char:index].encode("utf-8"))
        self._at = (index, byte)
        return byte

    def end_byte(self, start_index: int, start_byte: int, end_index: int) -> int:
        if self.ascii:
            return self.offset + end_index
        return start_byte + len(self.text[start_index:end_index].encode("utf-8"))

    def fail(self, line: int, why: str) -> SourceError:
        return malformed(self.doc.shown, line, why)

    def run(self) -> YNode | None:
        try:
            return self._events(events(self.text))
        except YamlSyntaxError as exc:
            raise malformed(self.doc.shown, exc.line, f"YAML syntax: {exc.message}") from None

    def _events(self, stream: Iterator[YamlEvent]) -> YNode | None:
        # Stack entries: [node, pending key (str | None), key line, seen keys].
        stack: list[list[Any]] = []
        root: YNode | None = None
        documents = 0
        for event in stream:
            kind, line = event.kind, event.line
            if kind == "stream-end":
                break
            if kind == "document-start":
                documents += 1
                if documents > 1:
                    raise self.fail(line, "holds more than one YAML document")
                continue
            if kind in ("stream-start", "document-end"):
                continue
            if kind == "alias" or event.anchor is not None:
                raise self.fail(line, "uses a YAML anchor or alias; write the values out")
            if event.tag is not None:
                raise self.fail(line, f"uses a YAML tag ({event.tag})")
            if kind in ("mapping-end", "sequence-end"):
                done = stack.pop()[0]
                if event.end > event.start:  # a flow collection ends at its bracket
                    done.end = self.end_byte(event.start, self.byte(event.start), event.end)
                root = self._attach(stack, done) or root
                continue
            start = self.byte(event.start)
            if kind == "scalar":
                text = event.value or ""
                value = resolve_plain(text) if event.plain else text
                end = self.end_byte(event.start, start, event.end)
                node = YNode(value, start, end, line, raw=text, doc=self.doc)
                root = self._attach(stack, node) or root
            else:
                if len(stack) >= MAX_DEPTH:
                    raise self.fail(line, f"nests YAML deeper than {MAX_DEPTH} levels")
                value = {} if kind == "mapping-start" else []
                stack.append([YNode(value, start, start, line, doc=self.doc), None, 0, set()])
        return root

    def _attach(self, stack: list[list[Any]], node: YNode) -> YNode | None:
        """Put a finished node into its parent; return it when it is the root."""
        if not stack:
            return node
        top = stack[-1]
        parent: YNode = top[0]
        parent.end = max(parent.end, node.end)
        if isinstance(parent.value, list):
            parent.value.append(node)
            return None
        if top[1] is None:
            if isinstance(node.value, dict | list):
                raise self.fail(node.line, "a mapping key must be a plain value")
            key = node.raw if node.raw is not None else str(node.value)
            if key in top[3]:
                raise self.fail(node.line, f"duplicate key '{key}'")
            top[3].add(key)
            top[1], top[2] = key, node.line
            return None
        parent.value[top[1]] = node
        top[1] = None
        return None
