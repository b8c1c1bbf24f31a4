"""Access to the JSON Schemas shipped in ``evidence_tool/schemas`` (``schemas/`` in the repo)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load_schema(name: str) -> dict[str, Any]:  # JSON boundary: a schema file as parsed
    """Load ``schemas/<name>`` (e.g. ``unit-metadata.schema.json`` or ``cli/envelope.schema.json``).

    Left as parsed JSON for jsonschema and for the compilers that walk it (metadata.py,
    schemacheck.py): a schema is data about JSON, not a record of ours."""
    ref = resources.files("evidence_tool").joinpath("schemas", *name.split("/"))
    schema: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))  # JSON boundary
    return schema
