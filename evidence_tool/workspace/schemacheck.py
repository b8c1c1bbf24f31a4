"""Descriptor schemas compiled once into a yes/no check, so start-up skips jsonschema.

Importing jsonschema and building its validator cost a no-op command ~0.1 s, yet a
descriptor is almost always valid.  ``conforms`` answers "is it valid?" with the
checks ``unit.schemacompile`` makes under the descriptor rules (JSON Schema's own:
patterns search, 1 equals 1.0); only a "no" calls jsonschema, which finds the error
and words the message, so every message stays the one jsonschema gives.  A schema
with a keyword the compiler does not know goes to jsonschema whole (``Unsupported``),
never a guess.  A hypothesis test checks both agree on good and damaged descriptors
(tests/perf/test_schemacheck.py).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from evidence_tool.unit.schemacompile import DESCRIPTOR, Check, Unsupported, compile_schema
from evidence_tool.unit.schemas import load_schema


@cache
def _compiled(name: str) -> Check | None:
    try:
        return compile_schema(load_schema(name), DESCRIPTOR)
    except Unsupported:
        return None


def conforms(data: Any, schema_name: str) -> bool:
    """True when ``data`` is valid against ``schemas/<schema_name>``; False means "ask
    jsonschema" (invalid, or a schema this compiler does not cover)."""
    check = _compiled(schema_name)
    if check is None:
        return False
    findings: list[Any] = []
    check(data, (), findings)
    return not findings
