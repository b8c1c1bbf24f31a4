"""Metadata rules, compiled once from ``schemas/unit-metadata.schema.json``.

The schema is the one source of the rules; ``unit.schemacompile`` turns it into
plain Python checks (the unit's rules: ``METADATA``) and this module maps each
failure to a stable code. A test checks the compiled checker against jsonschema
on generated input.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from evidence_tool.errors import Diagnostic
from evidence_tool.unit.schemacompile import METADATA, Check, Finding, compile_schema, is_integer
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlDoc


@cache
def _metadata_check() -> Check:
    return compile_schema(load_schema("unit-metadata.schema.json"), METADATA)


def _code(path: tuple[Any, ...], keyword: str, value: Any) -> str:
    if keyword == "additionalProperties":
        return "E104"
    if keyword == "required":
        return "E105"
    top = path[0] if path else None
    if top == "id":
        return "E122"
    if top == "schema_version" and is_integer(value):
        return "E107"
    return "E106"


def check_metadata(doc: YamlDoc) -> list[Diagnostic]:
    """Every metadata finding with its code and the line of the offending key."""
    if not isinstance(doc.value, dict):
        line, col = doc.mark(())
        return [
            Diagnostic(
                "E102",
                "the frontmatter must be a YAML mapping of keys to values",
                line=line,
                column=col,
            )
        ]
    findings: list[Finding] = []
    _metadata_check()(doc.value, (), findings)
    out: list[Diagnostic] = []
    for path, keyword, message in findings:
        value = _lookup(doc.value, path)
        code = _code(path, keyword, value)
        mark_path = path if keyword != "required" else path[:-1]
        line, col = doc.mark(mark_path) if mark_path in doc.marks else doc.mark(path[:1])
        if line is None:
            line, col = doc.mark(())
        where = ".".join(str(x) for x in path)
        if code == "E107":
            message = _version_message(value)
        out.append(
            Diagnostic(code, f"{where}: {message}" if where else message, line=line, column=col)
        )
    return out


def _version_message(value: float) -> str:
    value = int(value)
    if 1 <= value <= 3:
        return (
            f"schema_version {value} is a legacy unit; convert it with "
            "'tht evidence migrate <workspace-root>'"
        )
    return f"schema_version {value} is not supported; this tool reads schema_version 4"


def _lookup(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value
