"""The v4 unit format: parse, render, validate.  Pure: no I/O beyond the text given.

Names are loaded on first use (``evidence_tool.lazy``): the archive hashes without
loading the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
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

lazy_face(
    __name__,
    {
        "AppliesTo": "model",
        "DomainPayload": "model",
        "EnumPayload": "model",
        "EnumValue": "model",
        "ExamplePayload": "model",
        "FIELDS": "fields",
        "FieldSpec": "fields",
        "FormulaPayload": "model",
        "GlossaryPayload": "model",
        "KINDS": "fields",
        "MAX_BYTES": "parse",
        "MappingPayload": "model",
        "Metadata": "model",
        "NormalizationPayload": "model",
        "PAYLOAD_CLASSES": "model",
        "PURPOSES": "fields",
        "ParseResult": "parse",
        "Payload": "model",
        "ReferencePayload": "model",
        "Unit": "model",
        "canonical_json": "hashing",
        "content_hash": "hashing",
        "file_hash": "hashing",
        "is_italian": "fields",
        "parse": "parse",
        "parse_unit": "parse",
        "render": "render",
        "sha256_hex": "hashing",
        "validate": "validate",
    },
)
