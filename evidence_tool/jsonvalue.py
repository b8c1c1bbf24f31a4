"""The JSON value, as a type: what crosses the boundary to files, envelopes and services.

Records inside the library are typed (``record.Record``, enums); they meet JSON only
in their ``to_json`` / ``from_json`` pair, in the readers and writers of files, and in
the CLI's envelope.  There a value is typed as what JSON can hold, not ``Any``: a
reader must narrow it (``isinstance``) before it trusts a field, which is exactly the
check a file written by hand needs.

``View`` is the one ``to_json`` of records and output views (``record.py``'s docstring
says how ``_keys`` name a view's keys); it is here, without msgspec, so that a module
whose results are only views does not load msgspec.
"""

from __future__ import annotations

import dataclasses
import os
from enum import Enum
from operator import attrgetter
from typing import Any, ClassVar, TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"

__all__ = ["JsonObject", "JsonValue", "View", "json_value"]


def json_value(value: Any) -> Any:
    """One value of a view (or a summary a layer builds) as JSON: views and records by
    their ``to_json``, warnings by their ``to_dict``, containers element by element."""
    if value is None or isinstance(value, (str, int, float)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, View):
        return value.to_json()
    to_json = getattr(value, "to_json", None)
    if to_json is not None:
        return to_json()
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    to_dict = getattr(value, "to_dict", None)  # errors.EvidenceWarning, a layer above
    if to_dict is not None:
        return to_dict()
    if dataclasses.is_dataclass(value):
        return {f.name: json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


_PAIRS: dict[type, tuple[tuple[str, attrgetter[Any]], ...]] = {}


def _pairs(kind: type[View]) -> tuple[tuple[str, attrgetter[Any]], ...]:
    """(key, getter) per entry of ``kind._keys``."""
    pairs = _PAIRS.get(kind)
    if pairs is None:
        split = (k.partition("=") for k in kind._keys)
        pairs = _PAIRS[kind] = tuple(
            (key, attrgetter(attr or key.strip("*?"))) for key, _, attr in split
        )
    return pairs


class View:
    """What has a JSON form: records, and the dataclasses that name their ``_keys``."""

    __slots__ = ()
    _keys: ClassVar[tuple[str, ...]] = ()  # empty: a record's fields, in declared order

    def to_json(self) -> JsonObject:  # JSON boundary: files, HTTP, the --json envelope
        if not self._keys:
            return self._fields_json()
        out: JsonObject = {}
        for key, get in _pairs(type(self)):
            value = get(self)
            if key[0] == "*":
                out.update(json_value(value))
            elif key[-1] != "?":
                out[key] = json_value(value)
            elif value is not None and value != ():
                out[key[:-1]] = json_value(value)
        return out

    def _fields_json(self) -> JsonObject:
        raise TypeError(f"{type(self).__name__} names no _keys")
