"""A line reader for YAML as this tool writes it: frontmatter and flat managed files.

``yaml_strict.load`` builds values from libyaml's events, one Python step per event:
most of a unit's parse time for a frontmatter of ten lines.  What the renderer writes
is a small subset of YAML, read here a line at a time with regexes:

    key: plain            key: "json-escaped"        key: [a, "b c"]
    key:                  (then lines indented by two: ``  key: value``, one level)

``load_canonical`` returns exactly the ``YamlDoc`` the event loader builds (value with
its types, marks with the same line, column and order, no duplicates), or None for
any text it cannot vouch for: comments, blank lines, tabs, block sequences, indicators
(``? & * ! | > %``), characters YAML reads as line breaks or refuses (NEL, LS, PS, BOM,
non-printables), escapes YAML and JSON do not read alike, duplicate keys, other
indentation, trailing blanks, long keys, keys that are not strings (``true:``).  The
caller then runs the event loader, so every refusal keeps its code and message.
tests/unit/test_yaml_fast.py proves the equivalence on rendered and mutated frontmatter.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evidence_tool.unit.yaml_doc import _BOOL, _SPECIAL_START, Path_, YamlDoc, resolve_plain

# Characters of a plain scalar after its first (a word character): no indicator, no
# blank, no ':' (allowed inside when a safe character follows, as in block context).
_SAFE = r"[\w./@+=()'-]"
_PLAIN_BLOCK = rf"\w{_SAFE}*(?:[: ](?={_SAFE}){_SAFE}*)*"
_PLAIN_FLOW = rf"\w{_SAFE}*(?: (?={_SAFE}){_SAFE}*)*"  # libyaml refuses ':' in flow plains
# Raw characters a double-quoted scalar may hold here: printable, no line break of any
# YAML version (NEL, LS, PS), no BOM; escapes only where JSON and YAML agree.
_RAW = '[^"\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]'
_ESCAPE = r'\\(?:["\\/bfnrt]|u(?![dD][89a-fA-F])[0-9a-fA-F]{4})'
_QUOTED = f'"{_RAW}*(?:{_ESCAPE}{_RAW}*)*"'  # unrolled: linear on any input
_ITEM = f"(?:{_PLAIN_FLOW}|{_QUOTED})"
# One line: a key of letters, digits and '_' at column 1 or 3, then nothing (a nested
# mapping follows) or one blank and a plain, double-quoted or flow-list value.
_LINE = re.compile(
    rf"(  )?([A-Za-z_][A-Za-z0-9_]{{0,63}}):"
    rf"(?: (?:({_PLAIN_BLOCK})|({_QUOTED})|(\[(?:{_ITEM}(?:, {_ITEM})*)?\])))?"
)
_ITEM_RE = re.compile(_ITEM)

# Keys that resolve to null or a boolean (so ``true`` and ``True`` are one key): left to
# the event loader, so every key here is the string it spells.
_NOT_STRING_KEYS = frozenset({"null", "Null", "NULL", *_BOOL})


def _plain(text: str) -> Any:
    # Only a scalar starting with one of _SPECIAL_START can resolve to a non-string.
    return resolve_plain(text) if text[0] in _SPECIAL_START else text


def _quoted(token: str) -> str:
    return json.loads(token) if "\\" in token else token[1:-1]


def _items(flow: str, base: int, line: int, path: Path_, marks: dict[Path_, Any]) -> list[Any]:
    """The scalars of a flow list found at 1-based column ``base``, each item's mark set."""
    items = []
    for i, item in enumerate(_ITEM_RE.finditer(flow, 1)):
        marks[(*path, i)] = (line, base + item.start())
        text = item.group()
        items.append(_quoted(text) if text[0] == '"' else _plain(text))
    return items


def load_canonical(text: str, line_offset: int = 0) -> YamlDoc | None:
    """The document ``yaml_strict.load_events`` would build, or None when ``text`` is not
    in the subset this reader vouches for (see the module docstring)."""
    if not text.endswith("\n"):
        return None
    root: dict[str, Any] = {}
    marks: dict[Path_, tuple[int, int]] = {}
    # The open nested mapping: its parent key (None: no mapping open), the key's mark,
    # its entries.
    parent: str | None = None
    parent_mark = (0, 0)
    inner: dict[str, Any] = {}
    line = line_offset
    for text_line in text[:-1].split("\n"):
        line += 1
        m = _LINE.fullmatch(text_line)
        if m is None:
            return None
        indent, key, plain, quoted, flow = m.groups()
        if key in _NOT_STRING_KEYS:
            return None
        if indent is not None:
            if parent is None or key in inner or m.end() == m.end(2) + 1:
                return None  # no mapping open, a duplicate (E103), or a second level
            path: Path_ = (parent, key)
            target, mark = inner, (line, 3)
        else:
            if parent is not None:  # the nested mapping ends: attach it, as the events do
                if not inner:
                    return None
                marks[(parent,)], parent = parent_mark, None
            if key in root:
                return None  # a duplicate: the event loader reports it (E103)
            if m.end() == m.end(2) + 1:  # ``key:`` and nothing: a nested mapping follows
                parent, parent_mark, inner = key, (line, 1), {}
                root[key] = inner  # the key's place; the mapping is attached when it ends
                continue
            path, target, mark = (key,), root, (line, 1)
        if plain is not None:
            target[key] = _plain(plain)
        elif quoted is not None:
            target[key] = _quoted(quoted)
        else:
            target[key] = _items(flow, m.start(5) + 1, line, path, marks)
        marks[path] = mark
    if parent is not None:
        if not inner:
            return None
        marks[(parent,)] = parent_mark
    if not root:
        return None
    marks[()] = (line_offset + 1, 1)
    return YamlDoc(root, marks)
