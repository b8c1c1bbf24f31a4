"""Descriptor schemas compiled once into a yes/no check, so start-up skips jsonschema.

Importing jsonschema and building its validator cost a no-op command ~0.1 s, yet a
descriptor is almost always valid.  ``conforms`` answers "is it valid?" with plain
Python compiled from the schema; only a "no" calls jsonschema, which finds the error
and words the message, so every message stays the one jsonschema gives.  The compiler
knows the keywords the shipped schemas use; any other keyword makes the whole schema
go to jsonschema (``Unsupported``), never a guess.  A hypothesis test checks both
agree on good and damaged descriptors (tests/perf/test_schemacheck.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit.schemas import load_schema

Check = Callable[[Any], bool]

# Words that never constrain a value (annotations, and the containers of definitions).
_IGNORED = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "default"})


class Unsupported(Exception):
    """The schema uses a keyword this compiler does not know: validate with jsonschema."""


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _number,
    # JSON Schema's integer is a number without a fraction: 4.0 is one, true is not.
    "integer": lambda v: _number(v) and (isinstance(v, int) or float(v).is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema has it: true is not 1, 1 equals 1.0, deep for containers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _number(a) and _number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class _Compiler:
    """Compiles one schema document; ``$ref`` reaches its ``$defs`` or another shipped file."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.root = load_schema(name)
        self.refs: dict[str, Check] = {}

    def ref(self, target: str) -> Check:
        if target not in self.refs:
            # Filled in before compiling, so a schema that refers to itself terminates.
            slot: list[Check] = []
            self.refs[target] = lambda v: slot[0](v)
            if target.startswith("#/"):
                node: Any = self.root
                for part in target[2:].split("/"):
                    node = node[part]
                slot.append(self.compile(node))
            elif re.fullmatch(r"[a-z-]+\.schema\.json", target):
                slot.append(_Compiler(target).compile(load_schema(target)))
            else:
                raise Unsupported(f"$ref {target}")
        return self.refs[target]

    def compile(self, schema: JsonValue) -> Check:
        if schema is True:
            return lambda v: True
        if schema is False:
            return lambda v: False
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema))
        checks: list[Check] = []
        for key, arg in schema.items():
            if key in _IGNORED or key in ("properties", "additionalProperties", "required"):
                continue
            make = getattr(self, "k_" + key.lstrip("$"), None)
            if make is None:
                raise Unsupported(key)
            checks.append(make(arg))
        if any(k in schema for k in ("properties", "additionalProperties", "required")):
            checks.append(self.object_check(schema))
        return lambda v: all(c(v) for c in checks)

    # -- keywords (k_ + the keyword as the schema spells it) -------------------
    def k_ref(self, target: str) -> Check:
        return self.ref(target)

    def k_type(self, name: str | list[str]) -> Check:
        tests = [_TYPES[n] for n in ([name] if isinstance(name, str) else name)]
        return lambda v: any(t(v) for t in tests)

    def k_const(self, const: Any) -> Check:
        return lambda v: json_equal(v, const)

    def k_enum(self, allowed: list[Any]) -> Check:
        return lambda v: any(json_equal(v, a) for a in allowed)

    def k_pattern(self, pattern: str) -> Check:
        regex = re.compile(pattern)  # jsonschema searches: the schemas anchor with ^ and $
        return lambda v: not isinstance(v, str) or regex.search(v) is not None

    def k_minLength(self, n: int) -> Check:
        return lambda v: not isinstance(v, str) or len(v) >= n

    def k_maxLength(self, n: int) -> Check:
        return lambda v: not isinstance(v, str) or len(v) <= n

    def k_minItems(self, n: int) -> Check:
        return lambda v: not isinstance(v, list) or len(v) >= n

    def k_maxItems(self, n: int) -> Check:
        return lambda v: not isinstance(v, list) or len(v) <= n

    def k_minimum(self, n: float) -> Check:
        return lambda v: not _number(v) or v >= n

    def k_exclusiveMinimum(self, n: float) -> Check:
        return lambda v: not _number(v) or v > n

    def k_maximum(self, n: float) -> Check:
        return lambda v: not _number(v) or v <= n

    def k_exclusiveMaximum(self, n: float) -> Check:
        return lambda v: not _number(v) or v < n

    def k_uniqueItems(self, unique: bool) -> Check:
        def check(v: Any) -> bool:
            if not unique or not isinstance(v, list):
                return True
            return not any(json_equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])

        return check

    def k_items(self, schema: Any) -> Check:
        item = self.compile(schema)
        return lambda v: not isinstance(v, list) or all(item(x) for x in v)

    def k_oneOf(self, schemas: list[Any]) -> Check:
        branches = [self.compile(s) for s in schemas]
        return lambda v: sum(1 for b in branches if b(v)) == 1

    def object_check(self, schema: JsonObject) -> Check:
        properties, listed = schema.get("properties"), schema.get("required")
        props = (
            {k: self.compile(s) for k, s in (properties or {}).items()}
            if isinstance(properties, dict)
            else {}
        )
        required = tuple(str(k) for k in listed) if isinstance(listed, list) else ()
        extra = schema.get("additionalProperties", True)
        other = self.compile(extra)

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            if any(k not in v for k in required):
                return False
            for key, value in v.items():
                prop = props.get(key)
                if not (prop(value) if prop is not None else other(value)):
                    return False
            return True

        return check


@cache
def _compiled(name: str) -> Check | None:
    try:
        return _Compiler(name).compile(load_schema(name))
    except Unsupported:
        return None


def conforms(data: Any, schema_name: str) -> bool:
    """True when ``data`` is valid against ``schemas/<schema_name>``; False means "ask
    jsonschema" (invalid, or a schema this compiler does not cover)."""
    check = _compiled(schema_name)
    return check is not None and check(data)
