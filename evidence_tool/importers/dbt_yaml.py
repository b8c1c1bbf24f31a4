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

from evidence_tool.importers.base import Span
from evidence_tool.importers.spans import after_bom, decode
from evidence_tool.importers.yaml_spans import Builder
from evidence_tool.unit.yaml_events import YamlEvent


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
    decoded = decode(raw[offset:], shown)  # a BOM holds no line break
    doc.root = _Builder(doc, decoded, offset).run()
    return doc


class _Builder(Builder):
    """The shared reader, in dbt's words; a scalar keeps its text as written (a key too:
    '01' stays '01'), and a block collection ends at its last child."""

    DOCUMENTS = "holds more than one YAML document"
    ALIAS = ANCHOR = "uses a YAML anchor or alias; write the values out"
    TAG = "uses a YAML tag ({tag})"
    DEEP = "nests YAML deeper than {depth} levels"

    def __init__(self, doc: YamlFile, text: str, offset: int) -> None:
        super().__init__(doc.raw, text, offset, 0, doc.shown)
        self.doc = doc

    def scalar(self, start: int, end: int, line: int, value: Any, text: str) -> YNode:
        return YNode(value, start, end, line, raw=text, doc=self.doc)

    def collection(self, mapping: bool, start: int, line: int) -> YNode:
        return YNode({} if mapping else [], start, start, line, doc=self.doc)

    def close(self, node: Any, event: YamlEvent) -> int:
        # A flow collection ends at its bracket; a block one where its last child ended.
        if event.end > event.start:
            return self.offset.end(event.start, self.offset(event.start), event.end)
        return int(node.end)

    def key(self, node: Any, line: int) -> str:
        if isinstance(node.value, dict | list):
            raise self.fail(node.line, "a mapping key must be a plain value")
        return node.raw if node.raw is not None else str(node.value)

    def keyed(self, parent: Any, key: str, key_node: Any) -> None:
        pass
