"""YAML as a stream of events with their positions, for readers that must know where
each value sits in its file (a source importer gives every unit the byte spans it came
from).

ruamel.yaml belongs to ``unit`` (the import contracts of pyproject.toml): a reader
elsewhere gets values through ``yaml_strict.load`` and positions through ``events``,
never from ruamel itself.  Refusals (anchors, tags, several documents) stay the
reader's: an event says what it is, the reader says what it allows.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass

# ruamel's event class -> kind
_KINDS = {
    "StreamStartEvent": "stream-start",
    "StreamEndEvent": "stream-end",
    "DocumentStartEvent": "document-start",
    "DocumentEndEvent": "document-end",
    "MappingStartEvent": "mapping-start",
    "MappingEndEvent": "mapping-end",
    "SequenceStartEvent": "sequence-start",
    "SequenceEndEvent": "sequence-end",
    "ScalarEvent": "scalar",
    "AliasEvent": "alias",
}


@dataclass(frozen=True, slots=True)
class YamlEvent:
    """One parser event; ``start``/``end`` are character indexes into the text parsed."""

    kind: str  # a value of _KINDS
    start: int
    end: int
    line: int  # 1-based line of ``start``
    value: str | None = None  # a scalar's text, quotes and escapes resolved
    plain: bool = False  # unquoted and untagged: resolve with yaml_strict.resolve_plain
    anchor: str | None = None  # &name on a node, or the name an alias (*name) refers to
    tag: str | None = None


class YamlSyntaxError(Exception):
    """Text that is not YAML; ``line`` is 1-based when the parser knows it."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message, self.line = message, line


def events(text: str) -> Iterator[YamlEvent]:
    """Every event of ``text`` in order, up to and including ``stream-end``."""
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    parser = CParser(io.StringIO(text))
    try:
        while (event := parser.get_event()) is not None:
            yield _event(event)
            if type(event).__name__ == "StreamEndEvent":
                return
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise YamlSyntaxError(str(exc.problem or exc.context), line) from None
    except (YAMLError, ValueError, UnicodeError) as exc:
        raise YamlSyntaxError(str(exc), None) from None


def _event(event: object) -> YamlEvent:
    kind = _KINDS[type(event).__name__]
    start, end = event.start_mark, event.end_mark  # type: ignore[attr-defined]
    value = getattr(event, "value", None) if kind == "scalar" else None
    implicit = getattr(event, "implicit", None)
    style = getattr(event, "style", None)
    return YamlEvent(
        kind,
        start.index,
        end.index,
        start.line + 1,
        value,
        kind == "scalar" and style in (None, "") and bool(implicit and implicit[0]),
        getattr(event, "anchor", None),
        getattr(event, "tag", None),
    )
