"""The Cortex Analyst semantic model, as a JSON Schema written from Snowflake's published
specification ("Cortex Analyst semantic model specification",
https://docs.snowflake.com/en/user-guide/snowflake-cortex/cortex-analyst/semantic-model-spec,
and "Cortex Analyst Verified Query Repository",
https://docs.snowflake.com/en/user-guide/snowflake-cortex/cortex-analyst/verified-query-repository:
``verified_at`` is seconds since the UNIX epoch).  Keys the specification does not list
are refused, so a typo in a publisher fails here rather than in Snowflake."""

from __future__ import annotations

from typing import Any

_TEXTS = {"type": "array", "items": {"type": "string"}}
_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_$]*$"}  # a logical name

_COLUMN = {
    "type": "object",
    "required": ["name", "expr", "data_type"],
    "additionalProperties": False,
    "properties": {
        "name": _NAME,
        "synonyms": _TEXTS,
        "description": {"type": "string"},
        "expr": {"type": "string", "minLength": 1},
        "data_type": {"type": "string", "minLength": 1},
        "unique": {"type": "boolean"},
        "sample_values": _TEXTS,
        "is_enum": {"type": "boolean"},
        "cortex_search_service": {"type": "object"},
        "cortex_search_service_name": {"type": "string"},
        "access_modifier": {"enum": ["public_access", "private_access"]},
    },
}
_METRIC = {
    "type": "object",
    "required": ["name", "expr"],
    "additionalProperties": False,
    "properties": {
        "name": _NAME,
        "synonyms": _TEXTS,
        "description": {"type": "string"},
        "expr": {"type": "string", "minLength": 1},
        "access_modifier": {"enum": ["public_access", "private_access"]},
    },
}
_TABLE = {
    "type": "object",
    "required": ["name", "base_table"],
    "additionalProperties": False,
    "properties": {
        "name": _NAME,
        "synonyms": _TEXTS,
        "description": {"type": "string"},
        "base_table": {
            "type": "object",
            "required": ["database", "schema", "table"],
            "additionalProperties": False,
            "properties": {
                k: {"type": "string", "minLength": 1} for k in ("database", "schema", "table")
            },
        },
        "primary_key": {"type": "object"},
        "dimensions": {"type": "array", "items": _COLUMN},
        "time_dimensions": {"type": "array", "items": _COLUMN},
        "facts": {"type": "array", "items": _COLUMN},
        "measures": {"type": "array", "items": _COLUMN},
        "metrics": {"type": "array", "items": _METRIC},
        "filters": {"type": "array", "items": _METRIC},
    },
}
_QUERY = {
    "type": "object",
    "required": ["name", "question", "sql"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "question": {"type": "string", "minLength": 1},
        "sql": {"type": "string", "minLength": 1},
        "verified_at": {"type": "integer", "minimum": 0},
        "verified_by": {"type": "string"},
        "use_as_onboarding_question": {"type": "boolean"},
    },
}
SEMANTIC_MODEL: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "tables"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "tables": {"type": "array", "minItems": 1, "items": _TABLE},
        "relationships": {"type": "array"},
        "metrics": {"type": "array", "items": _METRIC},
        "verified_queries": {"type": "array", "items": _QUERY},
        "custom_instructions": {"type": "string"},
        "module_custom_instructions": {"type": "object"},
    },
}


def structural_problems(model: dict[str, Any]) -> list[str]:
    """What the schema cannot say: logical table names unique in the model, and the
    names of a table's columns and metrics unique in that table (the specification's
    "unique" rule), verified query names unique."""
    problems = []
    tables = [t["name"] for t in model.get("tables", [])]
    problems += [f"table {n} twice" for n in {n for n in tables if tables.count(n) > 1}]
    for t in model.get("tables", []):
        names = [
            c["name"]
            for key in ("dimensions", "time_dimensions", "facts", "metrics", "filters")
            for c in t.get(key, [])
        ]
        problems += [f"{t['name']}.{n} twice" for n in {n for n in names if names.count(n) > 1}]
    queries = [q["name"] for q in model.get("verified_queries", [])]
    problems += [f"query {n} twice" for n in {n for n in queries if queries.count(n) > 1}]
    return problems
