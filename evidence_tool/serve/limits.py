"""Bounds on what one request may ask (each breach is a coded usage error, E901)."""

from __future__ import annotations

from evidence_tool.errors import UsageError
from evidence_tool.jsonvalue import JsonValue
from evidence_tool.unit.identifiers import ID_RE

MAX_QUERY_CHARS = 2000  # a question, not a document: bounded so one request stays cheap
MAX_LIMIT = 100
MAX_IDS = 1000  # ids of one cite-check list, names of one evidence_for list
MAX_NAME_CHARS = 200


def query(value: JsonValue) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError("'query' must be a non-empty string")
    if len(value) > MAX_QUERY_CHARS:
        raise UsageError(f"'query' holds {len(value)} characters; at most {MAX_QUERY_CHARS}")
    return value


def limit(value: JsonValue) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_LIMIT:
        raise UsageError(f"'limit' must be an integer from 1 to {MAX_LIMIT}, not {value!r}")
    return value


def unit_id(value: JsonValue) -> str:
    if not isinstance(value, str) or len(value) > 256 or not ID_RE.fullmatch(value):
        shown = value[:80] if isinstance(value, str) else value
        raise UsageError(
            f"{shown!r} is not a unit id: ids look like 'evidence:<area>:<name>' "
            "(lower-case letters, digits, '.', '_', '-')"
        )
    return value


def names(value: JsonValue, what: str) -> list[str]:
    """A list of strings (ids, table or column names) of bounded length."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"'{what}' must be a list of strings")
    if len(value) > MAX_IDS:
        raise UsageError(f"'{what}' holds {len(value)} items; at most {MAX_IDS}")
    if any(len(v) > MAX_NAME_CHARS for v in value if isinstance(v, str)):
        raise UsageError(f"an item of '{what}' is longer than {MAX_NAME_CHARS} characters")
    return [v for v in value if isinstance(v, str)]


def option(value: JsonValue, what: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME_CHARS:
        raise UsageError(f"'{what}' must be a string of at most {MAX_NAME_CHARS} characters")
    return value
