"""The YAML document a frontmatter loader builds, and YAML 1.2's plain scalars.

Shared by the event loader (yaml_strict) and the line reader (yaml_fast), which
build the same ``YamlDoc``; a module of its own so that neither imports the other
at load time.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

Path_ = tuple[Any, ...]


class YamlProblem(Exception):
    def __init__(self, code: str, message: str, line: int | None, column: int | None) -> None:
        super().__init__(message)
        self.code, self.message, self.line, self.column = code, message, line, column


@dataclass
class YamlDoc:
    value: Any
    # (line, column), 1-based, of each key (for mappings) or item, by path from the root.
    marks: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    # Duplicate keys do not stop the load (the first value is kept), so every other
    # problem of the same file is reported too.
    duplicates: list[YamlProblem] = field(default_factory=list)

    def mark(self, path: Path_) -> tuple[int | None, int | None]:
        return self.marks.get(path, (None, None))


_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")


def resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema resolution of a plain scalar."""
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT10.fullmatch(text):
        return int(text)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _INF.fullmatch(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


# Only a plain scalar starting with one of these can resolve to a non-string (null, bool,
# number) or be a YAML 1.1 special: the gate skips eight regexes for hashes, ids and paths.
_SPECIAL_START = frozenset("0123456789+-.~nNtTfFyYoO")
