"""Strict YAML 1.2 for frontmatter and managed YAML files.

Parsing runs on ruamel.yaml's C event parser (libyaml), and values are built
here from events so that anchors, aliases, explicit tags and duplicate keys
are refused before anything expands, every key keeps its line and column, and
plain scalars resolve by the YAML 1.2 core schema (``no`` and ``2024-01-01``
are strings).  ``dump`` is a small deterministic emitter for JSON-like data
whose output this loader reads back identically.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from evidence_tool.unit.yaml_doc import _SPECIAL_START, Path_, YamlDoc, YamlProblem, resolve_plain

__all__ = [
    "MAX_DEPTH",
    "Commented",
    "Form",
    "Path_",
    "YamlDoc",
    "YamlProblem",
    "block",
    "dump",
    "flow_list",
    "load",
    "load_events",
    "load_unique",
    "quote",
    "resolve_plain",
    "scalar",
]


def _pos(event: Any, line_offset: int = 0) -> tuple[int, int]:
    mark = event.start_mark
    return mark.line + 1 + line_offset, mark.column + 1


# Deeper than any file this tool writes or reads; refusing early keeps a hostile
# ``[[[[...`` or ``{a: {a: ...}}`` from costing quadratic time in the key paths.
MAX_DEPTH = 64


def load(text: str, *, line_offset: int = 0) -> YamlDoc:
    """Load one YAML document strictly; raise ``YamlProblem`` (E102 syntax/feature, E103 duplicate).

    Every line reported (problems and ``marks``) is ``line_offset`` plus the 1-based line
    within ``text``: pass the file line before ``text`` to get file coordinates.  Text as
    this tool writes it takes the line reader (yaml_fast), which builds the same document
    without a Python step per event; anything else, the event loader.
    """
    from evidence_tool.unit._speed.yaml_fast import load_canonical

    doc = load_canonical(text, line_offset)
    return doc if doc is not None else load_events(text, line_offset=line_offset)


def load_unique(text: str, *, line_offset: int = 0) -> YamlDoc:
    """``load``, refusing a key given twice (E103, raised) where ``load`` lists it: for
    readers with no findings to report it with, which must never pick one of the values."""
    doc = load(text, line_offset=line_offset)
    if doc.duplicates:
        dup = doc.duplicates[0]
        raise YamlProblem(dup.code, f"{dup.message}; keep one of them", dup.line, dup.column)
    return doc


def load_events(text: str, *, line_offset: int = 0) -> YamlDoc:
    """``load`` by libyaml's events: every document, every refusal with its position."""
    from ruamel.yaml.cyaml import CParser
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    tree = _Tree()
    try:
        _read_events(CParser(io.StringIO(text)), tree, line_offset)
    except YamlProblem:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = (mark.line + 1 + line_offset, mark.column + 1) if mark is not None else (None, None)
        raise _fail("E102", f"YAML syntax: {exc.problem or exc.context}", where) from None
    except (YAMLError, ValueError, UnicodeError) as exc:
        raise _fail("E102", f"YAML syntax: {exc}") from None
    if not tree.root_set:
        tree.doc.value = None
    return tree.doc


def _fail(code: str, msg: str, pos: tuple[int | None, int | None] = (None, None)) -> YamlProblem:
    return YamlProblem(code, msg, *pos)


class _Tree:
    """The document the events build: its open collections, innermost last.

    Stack entries: [dict, path, pending_key, key_mark, seen_keys, start] for mappings,
    [list, path, start] for sequences; ``start`` is always last.
    """

    __slots__ = ("doc", "root_set", "stack")

    def __init__(self) -> None:
        self.doc = YamlDoc(None)
        self.stack: list[list[Any]] = []
        self.root_set = False

    def attach(self, value: Any, pos: tuple[int, int]) -> bool:
        """Attach a finished value to its parent (a duplicate key is E103, kept out of the
        mapping); True if it was a mapping key."""
        stack, doc = self.stack, self.doc
        if not stack:
            doc.value, self.root_set = value, True
            doc.marks[()] = pos
            return False
        top = stack[-1]
        if isinstance(top[0], dict):
            if top[2] is _NO_KEY:
                if not (value is None or isinstance(value, str | int | float | bool)):
                    raise _fail("E102", "a mapping key must be a plain value", pos)
                # (type, value): ``1`` and ``true`` are different keys; a set keeps this linear.
                typed = (type(value), value)
                if typed in top[4]:
                    doc.duplicates.append(_fail("E103", f"duplicate key '{value}'", pos))
                    top[2], top[3] = _DISCARD, pos
                    return True
                top[4].add(typed)
                top[2], top[3] = value, pos
                return True
            if top[2] is not _DISCARD:
                top[0][top[2]] = value
                doc.marks[(*top[1], top[2])] = top[3]
            top[2] = _NO_KEY
            return False
        doc.marks[(*top[1], len(top[0]))] = pos
        top[0].append(value)
        return False


def _read_events(parser: Any, tree: _Tree, line_offset: int) -> None:
    """Build ``tree`` from the parser's events, refusing a second document, aliases,
    anchors, tags and nesting past MAX_DEPTH before anything expands."""
    stack, attach = tree.stack, tree.attach
    documents = 0
    while True:
        event = parser.get_event()
        if event is None:
            break
        name = type(event).__name__
        if name == "StreamEndEvent":
            break
        if name == "DocumentStartEvent":
            documents += 1
            if documents > 1:
                raise _fail("E102", "only one YAML document is allowed", _pos(event, line_offset))
            continue
        if name in ("StreamStartEvent", "DocumentEndEvent"):
            continue
        pos = _pos(event, line_offset)
        if name == "AliasEvent":
            raise _fail("E102", "YAML aliases (*name) are not allowed", pos)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _fail("E102", f"YAML anchors (&{anchor}) are not allowed", pos)
        tag = getattr(event, "tag", None)
        if tag is not None:
            raise _fail("E102", f"YAML tags ({tag}) are not allowed", pos)
        if name == "ScalarEvent":
            plain = event.style in (None, "") and event.implicit[0]
            value = resolve_plain(event.value) if plain else event.value
            attach(value, pos)
        elif name in ("MappingStartEvent", "SequenceStartEvent"):
            if len(stack) >= MAX_DEPTH:
                raise _fail("E102", f"YAML nested deeper than {MAX_DEPTH} levels", pos)
            path = _child_path(stack)
            if name == "MappingStartEvent":
                stack.append([{}, path, _NO_KEY, None, set(), pos])
            else:
                stack.append([[], path, pos])
        elif name in ("MappingEndEvent", "SequenceEndEvent"):
            done = stack.pop()
            attach(done[0], done[-1])


class _NoKey:
    def __repr__(self) -> str:
        return "<no key>"


_NO_KEY = _NoKey()
_DISCARD = _NoKey()  # the key of a duplicate entry, whose value is dropped


def _child_path(stack: list[list[Any]]) -> Path_:
    if not stack:
        return ()
    top = stack[-1]
    if isinstance(top[0], dict):
        return (*top[1], top[2]) if top[2] not in (_NO_KEY, _DISCARD) else top[1]
    return (*top[1], len(top[0]))


# ---------------------------------------------------------------------------
# Emitting

# Plain in block and flow context alike: no indicators, ': ' or ' #', no blank at either end.
_PLAIN_SAFE = re.compile(r"\w([\w./@+=()'-]|:(?=[\w./@+=()'-])| (?=[\w./@+=()'-]))*")
# libyaml refuses ':' inside plain scalars of a flow collection.
_PLAIN_SAFE_FLOW = re.compile(r"\w([\w./@+=()'-]| (?=[\w./@+=()'-]))*")
# YAML 1.1 readers take these as booleans, numbers or dates: quote them for interop.
_YAML11_SPECIAL = re.compile(
    r"(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)"
    r"|[-+]?(0b[01_]+|0[0-7_]+|[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|[0-9][0-9_]*(\.[0-9_]*)?)"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*"
)


def _needs_quotes(text: str, flow: bool = False) -> bool:
    if not (_PLAIN_SAFE_FLOW if flow else _PLAIN_SAFE).fullmatch(text):
        return True
    if text[0] not in _SPECIAL_START:
        return False
    return not isinstance(resolve_plain(text), str) or bool(_YAML11_SPECIAL.fullmatch(text))


# Characters libyaml refuses to read raw (YAML's c-printable complement, plus the BOM).
_NONPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def quote(text: str) -> str:
    """A double-quoted YAML scalar: JSON escapes, non-printables escaped too."""
    text = json.dumps(text, ensure_ascii=False)
    return _NONPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_KEY_CACHE: dict[tuple[Any, bool], str] = {}


def scalar(value: Any, *, flow: bool = False) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError("non-finite floats are not emitted")
        return repr(value)
    if isinstance(value, str):
        return quote(value) if _needs_quotes(value, flow) else value
    raise TypeError(f"cannot emit {type(value).__name__}")


def flow_list(values: list[Any] | tuple[Any, ...]) -> str:
    return "[" + ", ".join(_flow(v) for v in values) + "]"


def _flow(value: Any) -> str:
    """Flow style for any JSON-like value: nested lists and mappings included."""
    if isinstance(value, list | tuple):
        return flow_list(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k, flow=True)}: {_flow(v)}" for k, v in value.items()) + "}"
    return scalar(value, flow=True)


# YAML caps an implicit key at 1024 characters; a longer key needs the explicit '? ' form.
_MAX_IMPLICIT_KEY = 1000


def _key(key: Any, *, flow: bool = False, pad: str = "") -> str:
    """A mapping key, written so that ':' and the value can follow it directly."""
    text = _KEY_CACHE.get((key, flow)) if isinstance(key, str) else None
    if text is None:
        text = scalar(key, flow=flow)
        if isinstance(key, str) and len(_KEY_CACHE) < 4096:  # keys repeat: id, path, kind...
            _KEY_CACHE[(key, flow)] = text
    if len(text) <= _MAX_IMPLICIT_KEY:
        return text
    return f"? {text} " if flow else f"? {text}\n{pad}"


def dump(value: Any, *, flow_keys: frozenset[str] = frozenset()) -> str:
    """Block-style YAML for dicts/lists/scalars; lists under ``flow_keys`` in flow style.
    The managed files' form of ``block``: text always quoted, a list under its key not
    indented."""
    return block(value, Form(flow_keys, literal=False, list_indent=0))


# Characters a YAML reader refuses raw or reads differently (``quote`` escapes them).
_NEEDS_ESCAPE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)


@dataclass(frozen=True)
class Commented:
    """A value written with ``comment`` on the line(s) above it (a list entry or a key)."""

    value: Any
    comment: str


def _literal_ok(text: str) -> bool:
    """A literal block keeps ``text`` exactly: no carriage return or character YAML must
    escape, no leading space (it would read as indentation), no whitespace-only line and
    no trailing blank lines (chomping would change them)."""
    if not text.strip() or text[0] in " \t" or "\r" in text or text.endswith("\n\n"):
        return False
    if _NEEDS_ESCAPE.search(text):
        return False
    return all(ln.strip() or not ln for ln in text.split("\n"))


class Form(NamedTuple):
    """How a document is laid out: the files other tools read (``yaml_emit.dump``) or the
    managed files (``dump``: text always quoted, a list under its key not indented)."""

    flow_keys: frozenset[str]  # lists under these keys in flow style
    literal: bool = True  # multi-line text as a literal block where it reads back exactly
    list_indent: int = 2  # a block list under a key: indented by this much


def _text(value: str, pad: str, literal: bool) -> str:
    """A string value after ``key:`` or ``- ``: a literal block for multi-line text."""
    if literal and "\n" in value and _literal_ok(value):
        body = value[:-1] if value.endswith("\n") else value
        chomp = "" if value.endswith("\n") else "-"
        inner = pad + "  "
        lines = "\n".join(inner + ln if ln else "" for ln in body.split("\n"))
        return f"|{chomp}\n{lines}"
    return scalar(value)


# In a comment, what some YAML reader takes for a line break (CR, NEL, LS, PS: the rest
# of the line would be read as YAML), refuses raw (NUL, C0/C1 controls, lone surrogates,
# U+FFFE/U+FFFF) or shows otherwise than stored (a BOM, bidi controls); a newline starts
# the next comment line and a tab is kept.
_COMMENT_ESCAPE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufeff\ufffe\uffff]"
)


def _escaped(match: re.Match[str]) -> str:
    """``\\r``, ``\\x00``, ``\\u2028``: as Python writes them (errors.printable's form)."""
    code = ord(match.group())
    return "\\r" if code == 13 else f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _comment(text: str, pad: str) -> str:
    """``text`` as ``# `` lines, one per line of it, each escaped so that it stays a comment."""
    return "".join(
        f"{pad}# {_COMMENT_ESCAPE.sub(_escaped, ln)}".rstrip() + "\n" for ln in text.split("\n")
    )


def block(value: Any, form: Form) -> str:
    """``value`` as a block-style YAML document laid out as ``form`` says."""
    out: list[str] = []
    _emit(value, 0, out, form)
    return "".join(out)


_TEXT = (str, bytes, bytearray)  # not lists: bytes are refused, never written as numbers


def _inline(item: Any, pad: str, form: Form) -> str:
    """A value on the line of its key or dash: a sequence in flow style, ``{}`` for an
    empty mapping (a non-empty one is never inline)."""
    if isinstance(item, str):
        return _text(item, pad, form.literal)
    if isinstance(item, Sequence) and not isinstance(item, _TEXT):
        return flow_list(list(item))
    return "{}" if isinstance(item, Mapping) else scalar(item)


def _emit(value: Any, indent: int, out: list[str], form: Form) -> None:
    pad = " " * indent
    if isinstance(value, Commented):
        out.append(_comment(value.comment, pad))
        _emit(value.value, indent, out, form)
    elif isinstance(value, Mapping):
        _mapping(value, indent, out, form)
    elif isinstance(value, Sequence) and not isinstance(value, _TEXT):
        if not value:
            out.append(pad + "[]\n")
        for item in value:
            if isinstance(item, Commented):
                out.append(_comment(item.comment, pad))
                item = item.value
            if isinstance(item, Mapping) and item:
                sub: list[str] = []
                _mapping(item, indent + 2, sub, form)
                out.append(pad + "- " + "".join(sub)[indent + 2 :])
            else:
                out.append(f"{pad}- {_inline(item, pad, form)}\n")
    else:
        out.append(pad + _inline(value, pad, form) + "\n")


def _mapping(value: Mapping[Any, Any], indent: int, out: list[str], form: Form) -> None:
    pad = " " * indent
    if not value:
        out.append(pad + "{}\n")
        return
    for key, item in value.items():
        if isinstance(item, Commented):
            out.append(_comment(item.comment, pad))
            item = item.value
        k = _key(key, pad=pad)
        if isinstance(item, Mapping) and item:
            out.append(f"{pad}{k}:\n")
            _mapping(item, indent + 2, out, form)
        elif (
            isinstance(item, Sequence)
            and not isinstance(item, _TEXT)
            and item
            and key not in form.flow_keys
        ):
            out.append(f"{pad}{k}:\n")
            _emit(list(item), indent + form.list_indent, out, form)
        else:
            out.append(f"{pad}{k}: {_inline(item, pad, form)}\n")
