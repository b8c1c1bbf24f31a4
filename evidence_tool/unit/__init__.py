"""The v4 unit format: parse, render, validate.  Pure: no I/O beyond the text given.

Names are loaded on first use (``evidence_tool.lazy``): the archive hashes without
loading the parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.unit.fields import FIELDS as FIELDS
    from evidence_tool.unit.fields import KINDS as KINDS
    from evidence_tool.unit.fields import PURPOSES as PURPOSES
    from evidence_tool.unit.fields import FieldSpec as FieldSpec
    from evidence_tool.unit.fields import is_italian as is_italian
    from evidence_tool.unit.hashing import canonical_json as canonical_json
    from evidence_tool.unit.hashing import content_hash as content_hash
    from evidence_tool.unit.hashing import file_hash as file_hash
    from evidence_tool.unit.hashing import sha256_hex as sha256_hex
    from evidence_tool.unit.model import PAYLOAD_CLASSES as PAYLOAD_CLASSES
    from evidence_tool.unit.model import AppliesTo as AppliesTo
    from evidence_tool.unit.model import DomainPayload as DomainPayload
    from evidence_tool.unit.model import EnumPayload as EnumPayload
    from evidence_tool.unit.model import EnumValue as EnumValue
    from evidence_tool.unit.model import ExamplePayload as ExamplePayload
    from evidence_tool.unit.model import FormulaPayload as FormulaPayload
    from evidence_tool.unit.model import GlossaryPayload as GlossaryPayload
    from evidence_tool.unit.model import MappingPayload as MappingPayload
    from evidence_tool.unit.model import Metadata as Metadata
    from evidence_tool.unit.model import NormalizationPayload as NormalizationPayload
    from evidence_tool.unit.model import Payload as Payload
    from evidence_tool.unit.model import ReferencePayload as ReferencePayload
    from evidence_tool.unit.model import Unit as Unit
    from evidence_tool.unit.parse import MAX_BYTES as MAX_BYTES
    from evidence_tool.unit.parse import ParseResult as ParseResult
    from evidence_tool.unit.parse import parse as parse
    from evidence_tool.unit.parse import parse_unit as parse_unit
    from evidence_tool.unit.parse import validate as validate
    from evidence_tool.unit.render import render as render

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
        "validate": "parse",
    },
)
