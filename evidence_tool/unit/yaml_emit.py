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
from typing import Any, NamedTuple

from evidence_tool.unit.yaml_strict import _key, flow_list, scalar

# Characters a YAML reader refuses raw or reads differently (yaml_strict.quote escapes them).
_NEEDS_ESCAPE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)

__all__ = ["Commented", "Form", "block", "dump"]


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
    """How a document is laid out: the files other tools read (``dump``) or the managed
    files (``yaml_strict.dump``: text always quoted, a list under its key not indented)."""

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


def _comment(text: str, pad: str) -> str:
    return "".join(f"{pad}# {ln}".rstrip() + "\n" for ln in text.split("\n"))


def dump(value: Any, *, flow_keys: frozenset[str] = frozenset()) -> str:
    """Block-style YAML of dicts, lists and scalars; ``Commented`` values get their comment
    above them; lists under ``flow_keys`` are written in flow style."""
    return block(value, Form(flow_keys))


def block(value: Any, form: Form) -> str:
    """``value`` as a block-style YAML document laid out as ``form`` says."""
    out: list[str] = []
    _emit(value, 0, out, form)
    return "".join(out)


def _inline(item: Any, pad: str, form: Form) -> str:
    """A value on the line of its key or dash: a sequence in flow style, ``{}`` for an
    empty mapping (a non-empty one is never inline)."""
    if isinstance(item, str):
        return _text(item, pad, form.literal)
    if isinstance(item, Sequence):
        return flow_list(list(item))
    return "{}" if isinstance(item, Mapping) else scalar(item)


def _emit(value: Any, indent: int, out: list[str], form: Form) -> None:
    pad = " " * indent
    if isinstance(value, Commented):
        out.append(_comment(value.comment, pad))
        _emit(value.value, indent, out, form)
    elif isinstance(value, Mapping):
        _mapping(value, indent, out, form)
    elif isinstance(value, Sequence) and not isinstance(value, str):
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
            and not isinstance(item, str)
            and item
            and key not in form.flow_keys
        ):
            out.append(f"{pad}{k}:\n")
            _emit(list(item), indent + form.list_indent, out, form)
        else:
            out.append(f"{pad}{k}: {_inline(item, pad, form)}\n")
