"""Every rule of the schemas the two callers compile is exercised by the one compiler.

Each (schema node, keyword) of unit-metadata (the unit's rules) and of workspace,
installation and the evidence descriptor they refer to (the descriptor rules) is
compiled on its own and run on a pool of values (fixed ones plus ones next to the
rule's own bound, const or enum); the answer must be jsonschema's on every value, and
every rule must refuse at least one value, so none passes by checking nothing.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from evidence_tool.unit.schemacompile import (
    DESCRIPTOR,
    KEYWORDS,
    METADATA,
    Compiler,
    Rules,
    Unsupported,
    compile_schema,
)
from evidence_tool.unit.schemas import load_schema

SCHEMAS: dict[str, Rules] = {
    "unit-metadata.schema.json": METADATA,
    "workspace.schema.json": DESCRIPTOR,
    "installation.schema.json": DESCRIPTOR,
    "evidence-descriptor.schema.json": DESCRIPTOR,
}
_OBJECT = ("properties", "required", "additionalProperties")
_POOL: list[Any] = [
    None, True, False, 0, 1, 1.0, 1.5, -1, "", "a", "ward-7", "a b!", "Ab", "http",
    "https://x.org/a", "/abs", "en", [], ["a"], ["a", "a"], [1, 1.0], [None], [[1], [True]],
    {}, {"kind": "http"}, {"zz": 1}, {"descriptor_version": 1},
]  # fmt: skip


def _rules() -> list[tuple[str, dict[str, Any], str]]:
    """(schema file, node, keyword) for every constraining keyword of every node."""
    found: list[tuple[str, dict[str, Any], str]] = []

    def walk(name: str, node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(name, item)
        if not isinstance(node, dict):
            return
        keys = [k for k in node if k in KEYWORDS and k not in _OBJECT]
        keys += ["object"] if any(k in node for k in _OBJECT) else []
        found.extend((name, node, k) for k in keys)
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    walk(name, sub)
            elif key in ("items", "oneOf", "additionalProperties"):
                walk(name, value)

    for name in SCHEMAS:
        walk(name, load_schema(name))
    return found


RULES = _rules()


def _fragment(node: dict[str, Any], keyword: str) -> dict[str, Any]:
    if keyword == "object":
        return {k: node[k] for k in _OBJECT if k in node}
    extra = {"description": node["description"]} if "description" in node else {}
    return {keyword: node[keyword], **extra}


def _pool(node: dict[str, Any], keyword: str) -> list[Any]:
    arg = node.get(keyword)
    near: list[Any] = []
    if keyword in ("const", "enum"):
        near = list(arg) if isinstance(arg, list) else [arg, str(arg)]
    elif isinstance(arg, int | float) and not isinstance(arg, bool):
        n = int(arg)
        near = [arg - 1, arg, arg + 0.5, arg + 1, "x" * n, "x" * (n + 1), [1] * (n + 1)]
        near += ["x" * (n - 1), list(range(n - 1))] if n > 0 else []
    return _POOL + near


def _validator(root: dict[str, Any], fragment: dict[str, Any]) -> Any:
    registry: Registry = Registry()
    other = load_schema("evidence-descriptor.schema.json")
    registry = registry.with_resource(
        "evidence-descriptor.schema.json", Resource.from_contents(other)
    )
    schema = {"$schema": root["$schema"], "$defs": root.get("$defs", {}), **fragment}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def test_every_rule_of_both_callers_schemas_is_counted() -> None:
    by_keyword: dict[str, int] = {}
    for _, _, keyword in RULES:
        by_keyword[keyword] = by_keyword.get(keyword, 0) + 1
    # Every keyword the compiler knows is used by some shipped schema, and the count is
    # the schemas' own: a new rule shows up here, to be checked below.
    assert set(by_keyword) == (KEYWORDS - set(_OBJECT)) | {"object"}
    assert len(RULES) == 197, by_keyword


def test_every_shipped_schema_compiles_and_an_unknown_keyword_is_refused() -> None:
    for name, rules in SCHEMAS.items():
        compile_schema(load_schema(name), rules)
    with pytest.raises(Unsupported):
        compile_schema({"type": "object", "patternProperties": {}}, DESCRIPTOR)


def test_the_unit_enums_and_consts_are_strings_and_scalars() -> None:
    # Why one equality serves both callers: the unit checker compared enums with Python's
    # 'in' and consts as scalars; over string enums and a scalar const, JSON equality
    # (what jsonschema uses) gives the same answer on every value.
    unit = [(node, k) for name, node, k in RULES if name == "unit-metadata.schema.json"]
    enums = [node["enum"] for node, k in unit if k == "enum"]
    consts = [node["const"] for node, k in unit if k == "const"]
    assert len(enums) == 2 and all(isinstance(v, str) for e in enums for v in e)
    assert consts == [4]


# The unit's typed uniqueness (Rules.typed_unique) keeps 1 and 1.0 apart and compares
# unhashable items with Python's ==, where [1] equals [true]: it departs from JSON
# equality on exactly these two pool values, and only there.
_TYPED_UNIQUE = ([1, 1.0], [[1], [True]])


def test_each_rule_agrees_with_jsonschema_and_refuses_something() -> None:
    checked = refused = departures = 0
    for name, node, keyword in RULES:
        root = load_schema(name)
        fragment = _fragment(node, keyword)
        check = Compiler(root, SCHEMAS[name]).compile(fragment)
        validator = _validator(root, fragment)
        refusals = 0
        for value in _pool(node, keyword):
            findings: list[Any] = []
            check(value, (), findings)
            expected = validator.is_valid(value)
            if keyword == "uniqueItems" and SCHEMAS[name].typed_unique and value in _TYPED_UNIQUE:
                departures += 1
                expected = not expected
            assert (not findings) == expected, (name, fragment, value)
            refusals += bool(findings)
            checked += 1
        assert refusals, (name, fragment)
        refused += refusals
    assert checked >= len(RULES) * len(_POOL) and refused >= len(RULES)
    assert departures == 4 * len(_TYPED_UNIQUE)  # the unit schema's four uniqueItems
