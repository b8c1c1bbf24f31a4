"""Access to the JSON Schemas shipped in ``evidence_tool/schemas`` (``schemas/`` in the repo)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

# Beside the package's modules in every install; read as files, since importlib.resources
# loads tempfile, zipfile and the compressors (start-up time, docs/performance.md).
_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@cache
def load_schema(name: str) -> dict[str, Any]:  # JSON boundary: a schema file as parsed
    """Load ``schemas/<name>`` (e.g. ``unit-metadata.schema.json`` or ``cli/envelope.schema.json``).

    Left as parsed JSON for jsonschema and for the compiler that walks it
    (schemacompile.py): a schema is data about JSON, not a record of ours."""
    schema: dict[str, Any] = json.loads(  # JSON boundary
        _SCHEMAS.joinpath(*name.split("/")).read_text(encoding="utf-8")
    )
    return schema
