"""Access to the JSON Schemas shipped in ``evidence_tool/schemas`` (``schemas/`` in the repo)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>`` (e.g. ``unit-metadata.schema.json`` or ``cli/envelope.schema.json``)."""
    ref = resources.files("evidence_tool").joinpath("schemas", *name.split("/"))
    schema: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return schema
