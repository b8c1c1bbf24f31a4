"""Block YAML for files other tools read (a Cortex semantic model, dbt properties):
``yaml_strict``'s scalars and keys, plus what a reviewer of such a file needs --
a ``# comment`` line above a list entry (the unit id and revision it came from) and
multi-line text as a literal block (``|``), so SQL and prose read as written.

Every document this writes loads back with ``yaml_strict.load`` to the same values
(tests/publish check it on every published file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evidence_tool.unit.yaml_strict import _key, flow_list, scalar

# Characters a YAML reader refuses raw or reads differently (yaml_strict.quote escapes them).
_NEEDS_ESCAPE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)

__all__ = ["Commented", "dump"]


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


def _text(value: str, pad: str) -> str:
    """A string value after ``key:`` or ``- ``: a literal block for multi-line text."""
    if "\n" in value and _literal_ok(value):
        body = value[:-1] if value.endswith("\n") else value
        chomp = "" if value.endswith("\n") else "-"
        inner = pad + "  "
        lines = "\n".join(inner + ln if ln else "" for ln in body.split("\n"))
        return f"|{chomp}\n{lines}"
    return scalar(value)


def _comment(text: str, pad: str) -> str:
    return "".join(f"{pad}# {ln}".rstrip() + "\n" for ln in text.split("\n"))


def dump(value: Any, *, flow_keys: frozenset[str] = frozenset()) -> str:
    """Block-style YAML of dicts, lists and scalars; ``Commented`` values get their comment
    above them; lists under ``flow_keys`` are written in flow style."""
    out: list[str] = []
    _emit(value, 0, out, flow_keys)
    return "".join(out)


def _emit(value: Any, indent: int, out: list[str], flow_keys: frozenset[str]) -> None:
    pad = " " * indent
    if isinstance(value, Commented):
        out.append(_comment(value.comment, pad))
        _emit(value.value, indent, out, flow_keys)
    elif isinstance(value, Mapping):
        _mapping(value, indent, out, flow_keys)
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            if isinstance(item, Commented):
                out.append(_comment(item.comment, pad))
                item = item.value
            if isinstance(item, Mapping) and item:
                sub: list[str] = []
                _mapping(item, indent + 2, sub, flow_keys)
                out.append(pad + "- " + "".join(sub)[indent + 2 :])
            elif isinstance(item, str):
                out.append(f"{pad}- {_text(item, pad)}\n")
            elif isinstance(item, Sequence):
                out.append(f"{pad}- {flow_list(list(item))}\n")
            else:
                out.append(f"{pad}- {scalar(item)}\n")
    else:
        out.append(pad + (_text(value, pad) if isinstance(value, str) else scalar(value)) + "\n")


def _mapping(value: Mapping[Any, Any], indent: int, out: list[str], flow: frozenset[str]) -> None:
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
            _mapping(item, indent + 2, out, flow)
        elif isinstance(item, Sequence) and not isinstance(item, str):
            if key in flow or not item:
                out.append(f"{pad}{k}: {flow_list(list(item))}\n")
            else:
                out.append(f"{pad}{k}:\n")
                _emit(list(item), indent + 2, out, flow)
        elif isinstance(item, Mapping):
            out.append(f"{pad}{k}: {{}}\n")
        elif isinstance(item, str):
            out.append(f"{pad}{k}: {_text(item, pad)}\n")
        else:
            out.append(f"{pad}{k}: {scalar(item)}\n")
