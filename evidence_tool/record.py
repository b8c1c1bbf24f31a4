"""Typed records and their JSON: the one base the library's records derive from.

A record is a frozen ``msgspec.Struct``; its JSON is derived from its fields, in the
order they are declared, by one serializer instead of a hand-written pair per class:

- ``to_json()`` gives the JSON object (arrays as lists, enums as their values).  A field
  whose value is ``UNSET`` is left out; a class declared with ``omit_defaults=True``
  also leaves out every field still at its default.  That is how each record keeps its
  JSON byte for byte: a key that was written only when set is ``UNSET`` or defaulted, a
  key that was always written (``null`` included) is a plain field.
- ``from_json(obj)`` checks a parsed JSON object against the fields' types and builds
  the record.  A wrong shape raises ``msgspec.ValidationError``: a ``ValueError`` whose
  message names the field's path (``Expected `str`, got `int` - at `$.staged[0].path```),
  so the readers of files that map ``ValueError`` to their coded error keep doing so,
  now with the field named.

Warnings (``errors.EvidenceWarning``, a dataclass every layer uses) are written in
their own key order (``EvidenceWarning.to_dict``): a record names its warning fields in
``_warning_fields`` and ``to_json`` writes them that way.

A record or output view whose JSON is not its fields (computed keys such as a citation
check's ``ok``, keys in another order, fields kept out of the JSON) names its keys in
``_keys``: each a field or a property, written in that order through the same serializer
(``"from=source"`` where the key is spelled otherwise than the attribute, ``"op=entry.op"``
for an attribute of a field); ``"key?"`` is left out while its value is None or ``()``,
and ``"*attr"`` writes the keys of a dict (or view) there.  A computed key is not read
back: ``from_json`` ignores it and the property gives it again.
``View`` (``jsonvalue.View``, re-exported here) gives a dataclass that same ``to_json``
without loading msgspec; a record whose unknown keys are kept (a journal entry's) names the
dict field that holds them in ``_rest``.

This module is a leaf beside ``jsonvalue``: it imports msgspec (a few ms), so the
modules that ``tht --help`` loads import it only where they build records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar

import msgspec
from msgspec import UNSET, UnsetType, field

from evidence_tool.jsonvalue import View

if TYPE_CHECKING:
    from evidence_tool.jsonvalue import JsonObject

__all__ = [
    "UNSET",
    "AnyObject",
    "Record",
    "UnsetType",
    "View",
    "field",
    "field_of",
    "from_json",
]

# A field that holds a JSON object as parsed (a review item, a staged change): checked to
# be an object, its contents kept as they are.  ``JsonObject`` is a recursive alias that
# msgspec cannot resolve; this is the same object to the type checker.
AnyObject = dict[str, Any]

T = TypeVar("T")


def _lists(value: Any) -> Any:
    """``value`` with every tuple a list (``to_builtins`` keeps tuples as tuples)."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_lists(v) for v in value]
    return value


class Record(msgspec.Struct, View, frozen=True):
    """A typed record: its JSON is its fields, in order (the module docstring says how).

    A subclass says ``frozen=True`` again (``class X(Record, frozen=True)``): the config is
    inherited at run time, but mypy reads a subclass without it as a mutable dataclass."""

    _warning_fields: ClassVar[tuple[str, ...]] = ()
    _rest: ClassVar[str | None] = None  # a dict field whose keys stand beside the others
    # the ValueError a damaged value raises from ``from_json`` (where a package maps its
    # damaged files to its own exception); msgspec.ValidationError where None
    _error: ClassVar[type[Exception] | None] = None
    # a settings section (workspace.yaml ``retrieval``): ``from_json`` names it in a damaged
    # value's message, as ``field_of`` does, and reads None (no section) as the defaults
    _section: ClassVar[str | None] = None

    def _fields_json(self) -> JsonObject:  # View.to_json of a record without ``_keys``
        # ``to_builtins`` shares the record's strings (an encode and decode round trip
        # copied every unit text a refresh holds: 12 MiB at 15,500 units); its tuples
        # become lists here, as JSON arrays read back.
        out: JsonObject = _lists(msgspec.to_builtins(self))
        for name in self._warning_fields:
            out[name] = [w.to_dict() for w in getattr(self, name)]
        if self._rest is not None:
            rest = out.pop(self._rest)
            out.update(rest if isinstance(rest, dict) else {})
        return out

    @classmethod
    def from_json(cls, data: Any) -> Self:  # JSON boundary: a parsed JSON value
        if cls._section is not None and data is None:
            return cls()
        if cls._section is not None:
            return field_of(cls, {cls._section: data}, cls._section, cls._error)
        if cls._rest is not None and isinstance(data, dict):
            known = set(cls.__struct_fields__) - {cls._rest}
            data = {k: v for k, v in data.items() if k in known} | {
                cls._rest: {k: v for k, v in data.items() if k not in known}
            }
        return from_json(cls, data, cls._error)


def from_json(kind: type[T], data: object, error: type[Exception] | None = None) -> T:
    """``data`` (a parsed JSON value) as a ``kind`` (a record, a union of records with a
    tag, a tuple or map of them).  A wrong shape raises ``msgspec.ValidationError`` (a
    ValueError naming the path), or ``error`` with its message where a package maps its
    damaged files to its own exception; this is the one place a reader catches it."""
    try:
        return msgspec.convert(data, kind)
    except msgspec.ValidationError as exc:
        if error is None:
            raise
        raise error(str(exc)) from None


def field_of(kind: type[T], obj: JsonObject, key: str, error: type[Exception] | None = None) -> T:
    """``obj[key]`` as a ``kind`` (None where the key is missing): ``from_json`` with the
    key named in the message (``'retire': Expected `array`, got `str```)."""
    try:
        return msgspec.convert(obj.get(key), kind)
    except msgspec.ValidationError as exc:
        raise (error or ValueError)(f"{key!r}: {exc}") from None
