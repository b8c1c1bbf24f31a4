"""Narrowing a command's JSON result (``JsonValue``) where a body or a text reporter reads
a field: each check is the one the shape promises, and a broken promise is a bug (exit 70)."""

from __future__ import annotations

from evidence_tool.jsonvalue import JsonObject, JsonValue


def obj(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def arr(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        raise TypeError(f"expected a JSON array, got {type(value).__name__}")
    return value


def objs(value: JsonValue) -> list[JsonObject]:
    return [obj(v) for v in arr(value)]


def strs(value: JsonValue) -> list[str]:
    return [text(v) for v in arr(value)]


def text(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a JSON string, got {type(value).__name__}")
    return value
