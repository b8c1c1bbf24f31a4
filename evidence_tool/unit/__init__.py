"""The v4 unit format: parse, render, validate.  Pure: no I/O beyond the text given."""

from evidence_tool.unit.fields import FIELDS, KINDS, PURPOSES, FieldSpec, is_italian
from evidence_tool.unit.hashing import canonical_json, content_hash, file_hash, sha256_hex
from evidence_tool.unit.model import (
    PAYLOAD_CLASSES,
    AppliesTo,
    DomainPayload,
    EnumPayload,
    EnumValue,
    ExamplePayload,
    FormulaPayload,
    GlossaryPayload,
    MappingPayload,
    Metadata,
    NormalizationPayload,
    Payload,
    ReferencePayload,
    Unit,
)
from evidence_tool.unit.parse import MAX_BYTES, ParseResult, parse, parse_unit
from evidence_tool.unit.render import render
from evidence_tool.unit.validate import validate

__all__ = [
    "FIELDS",
    "KINDS",
    "MAX_BYTES",
    "PAYLOAD_CLASSES",
    "PURPOSES",
    "AppliesTo",
    "DomainPayload",
    "EnumPayload",
    "EnumValue",
    "ExamplePayload",
    "FieldSpec",
    "FormulaPayload",
    "GlossaryPayload",
    "MappingPayload",
    "Metadata",
    "NormalizationPayload",
    "ParseResult",
    "Payload",
    "ReferencePayload",
    "Unit",
    "canonical_json",
    "content_hash",
    "file_hash",
    "is_italian",
    "parse",
    "parse_unit",
    "render",
    "sha256_hex",
    "validate",
]
