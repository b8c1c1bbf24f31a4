"""Metadata rules, compiled once from ``schemas/unit-metadata.schema.json``.

The schema is the one source of the rules; this module turns the subset of
JSON Schema it uses into plain Python checks (jsonschema itself costs
130-190 µs per unit, SPEC.md 12) and maps each failure to a stable code.
A test checks the compiled checker against jsonschema on generated input.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlDoc

Check = Callable[[Any, tuple[Any, ...], list[tuple[tuple[Any, ...], str, str]]], None]


def _is_integer(v: Any) -> bool:
    # JSON Schema's integer is a number with no fractional part: 4.0 is one, true is not.
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def _json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality for scalars: booleans are not numbers, 4 equals 4.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "boolean": lambda v: isinstance(v, bool),
}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def compile_schema(schema: JsonObject) -> Check:
    """Compile a schema node into a function appending (path, keyword, message) findings."""
    steps = (
        _type_check,
        _const_check,
        _enum_check,
        _pattern_check,
        _min_length_check,
        _min_items_check,
        _unique_check,
        _items_check,
        _object_check,
    )
    checks = [c for step in steps if (c := step(schema)) is not None]

    def run(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        for c in checks:
            c(v, p, out)

    return run


def _object(node: JsonValue) -> JsonObject:
    return node if isinstance(node, dict) else {}


def _int(node: JsonValue) -> int:
    if not isinstance(node, int):
        raise TypeError(f"a schema count must be an integer, got {node!r}")
    return node


def _type_check(schema: JsonObject) -> Check | None:
    """``type``: the value's JSON type."""
    if "type" not in schema:
        return None
    type_name = str(schema["type"])
    is_type = _TYPES[type_name]

    def check_type(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        if not is_type(v):
            out.append((p, "type", f"must be of type {type_name}, got {_describe(v)}"))

    return check_type


def _const_check(schema: JsonObject) -> Check | None:
    """``const``: exactly this JSON value."""
    if "const" not in schema:
        return None
    const = schema["const"]
    return lambda v, p, out: (
        None
        if _json_equal(v, const)
        else out.append((p, "const", f"must be {const!r}, got {_describe(v)}"))
    )


def _enum_check(schema: JsonObject) -> Check | None:
    """``enum``: one of the listed values, with the closest one suggested."""
    if "enum" not in schema:
        return None
    listed = schema["enum"]
    allowed = tuple(listed) if isinstance(listed, list) else ()

    def check_enum(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        if (isinstance(v, str | int) and v not in allowed) or not isinstance(v, str | int):
            close = difflib.get_close_matches(str(v), [str(a) for a in allowed], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            out.append(
                (
                    p,
                    "enum",
                    f"must be one of {', '.join(map(str, allowed))}, got {_describe(v)}{hint}",
                )
            )

    return check_enum


def _pattern_check(schema: JsonObject) -> Check | None:
    """``pattern``: a string of the required form."""
    if "pattern" not in schema:
        return None
    # fullmatch: JSON Schema's '$' is end of input; Python's also matches before a final newline.
    regex = re.compile(str(schema["pattern"]))
    # The schema's description of the form, where it has one: "the required form" alone
    # leaves the user guessing (issue 34).
    form = schema.get("description")
    wanted = f": write {form}" if isinstance(form, str) else ""
    problem = "does not have the required form" + wanted
    return lambda v, p, out: (
        None
        if not isinstance(v, str) or regex.fullmatch(v)
        else out.append((p, "pattern", f"{_describe(v)} {problem}"))
    )


def _min_length_check(schema: JsonObject) -> Check | None:
    """``minLength``: a string no shorter than this."""
    if "minLength" not in schema:
        return None
    n = _int(schema["minLength"])
    return lambda v, p, out: (
        None
        if not isinstance(v, str) or len(v) >= n
        else out.append((p, "minLength", "must not be empty"))
    )


def _min_items_check(schema: JsonObject) -> Check | None:
    """``minItems``: a list with at least this many items."""
    if "minItems" not in schema:
        return None
    n = _int(schema["minItems"])
    return lambda v, p, out: (
        None
        if not isinstance(v, list) or len(v) >= n
        else out.append((p, "minItems", f"needs at least {n} item(s)"))
    )


def _unique_check(schema: JsonObject) -> Check | None:
    """``uniqueItems``: no item listed twice (JSON equality: 1 is not true)."""
    if not schema.get("uniqueItems"):
        return None

    def check_unique(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        if isinstance(v, list):
            # JSON equality keeps types apart (1 is not true): key by (type, value);
            # only unhashable items (lists, mappings) are compared one by one.
            keys: set[tuple[type, Any]] = set()
            others: list[Any] = []
            for item in v:
                try:
                    key = (type(item), item)
                    repeated = key in keys
                    keys.add(key)
                except TypeError:
                    repeated = any(item == s and type(item) is type(s) for s in others)
                    others.append(item)
                if repeated:
                    out.append((p, "uniqueItems", f"lists {_describe(item)} twice"))
                    return

    return check_unique


def _items_check(schema: JsonObject) -> Check | None:
    """``items``: every item of a list against the item schema."""
    if "items" not in schema:
        return None
    item_check = compile_schema(_object(schema["items"]))

    def check_items(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        if isinstance(v, list):
            for i, item in enumerate(v):
                item_check(item, (*p, i), out)

    return check_items


def _object_check(schema: JsonObject) -> Check | None:
    """``properties`` / ``required`` / ``additionalProperties: false`` of a mapping."""
    if not (schema.get("type") == "object" or "properties" in schema):
        return None
    props = {k: compile_schema(_object(s)) for k, s in _object(schema.get("properties")).items()}
    listed = schema.get("required", [])
    required = tuple(str(k) for k in listed) if isinstance(listed, list) else ()
    closed = schema.get("additionalProperties") is False
    names = list(props)

    def check_object(v: Any, p: tuple[Any, ...], out: list[Any]) -> None:
        if not isinstance(v, dict):
            return
        for key in required:
            if key not in v:
                out.append(((*p, key), "required", f"'{key}' is required"))
        for key, item in v.items():
            if key in props:
                props[key](item, (*p, key), out)
            elif closed:
                close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.5)
                hint = (
                    f"; did you mean '{close[0]}'?"
                    if close
                    else f"; allowed keys: {', '.join(names)}"
                )
                out.append(((*p, key), "additionalProperties", f"unknown key '{key}'{hint}"))

    return check_object


@cache
def _metadata_check() -> Check:
    return compile_schema(load_schema("unit-metadata.schema.json"))


def _code(path: tuple[Any, ...], keyword: str, value: Any) -> str:
    if keyword == "additionalProperties":
        return "E104"
    if keyword == "required":
        return "E105"
    top = path[0] if path else None
    if top == "id":
        return "E122"
    if top == "schema_version" and _is_integer(value):
        return "E107"
    return "E106"


def check_metadata(doc: YamlDoc) -> list[Diagnostic]:
    """Every metadata finding with its code and the line of the offending key."""
    if not isinstance(doc.value, dict):
        line, col = doc.mark(())
        return [
            Diagnostic(
                "E102",
                "the frontmatter must be a YAML mapping of keys to values",
                line=line,
                column=col,
            )
        ]
    findings: list[tuple[tuple[Any, ...], str, str]] = []
    _metadata_check()(doc.value, (), findings)
    out: list[Diagnostic] = []
    for path, keyword, message in findings:
        value = _lookup(doc.value, path)
        code = _code(path, keyword, value)
        mark_path = path if keyword != "required" else path[:-1]
        line, col = doc.mark(mark_path) if mark_path in doc.marks else doc.mark(path[:1])
        if line is None:
            line, col = doc.mark(())
        where = ".".join(str(x) for x in path)
        if code == "E107":
            message = _version_message(value)
        out.append(
            Diagnostic(code, f"{where}: {message}" if where else message, line=line, column=col)
        )
    return out


def _version_message(value: float) -> str:
    value = int(value)
    if 1 <= value <= 3:
        return (
            f"schema_version {value} is a legacy unit; convert it with "
            "'tht evidence migrate <workspace-root>'"
        )
    return f"schema_version {value} is not supported; this tool reads schema_version 4"


def _lookup(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value
