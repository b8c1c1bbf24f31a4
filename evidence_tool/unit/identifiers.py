"""Identifier forms, taken from the metadata schema so there is one source of the rules."""

from __future__ import annotations

import re

from evidence_tool.unit import fields as F
from evidence_tool.unit.schemas import load_schema

_APPLIES = load_schema("unit-metadata.schema.json")["properties"]["applies_to"]["properties"]
_META = load_schema("unit-metadata.schema.json")["properties"]

TABLE_RE = re.compile(_APPLIES["tables"]["items"]["pattern"])
COLUMN_RE = re.compile(_APPLIES["columns"]["items"]["pattern"])
ID_RE = re.compile(_META["id"]["pattern"])
LANGUAGE_RE = re.compile(_META["language"]["pattern"])
# The field types whose values are references, and the form of each.
REFERENCE_RE = {F.TABLES: TABLE_RE, F.COLUMNS: COLUMN_RE, F.COLUMN: COLUMN_RE}
