"""One compiler from the shipped JSON Schemas to plain Python checks.

jsonschema costs 130-190 µs per unit (SPEC.md 12) and ~0.1 s to import in every
command that opens a workspace; these checks cost microseconds.  Two callers use them:
``unit.metadata`` words each finding for the author (with a stable code), and
``workspace.descriptor`` only asks "is the descriptor valid?" (any finding means "let
jsonschema find and word the error").  A compiled check appends ``(path, keyword,
message)`` findings; no findings means valid.

Where the two callers' rules differ, ``Rules`` names the difference; everything else
is one rule.  The compiler knows the keywords the shipped schemas use; any other
keyword raises ``Unsupported``, never a guess.  Tests check both callers against
jsonschema (tests/unit/test_unit_properties.py, tests/perf/test_schemacheck.py) and
that every keyword of every shipped schema compiles (tests/unit/test_schemacompile.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from evidence_tool.unit.schemas import load_schema

# A schema as parsed: data about JSON, walked here, never a record of ours.
Schema = dict[str, Any]
Finding = tuple[tuple[Any, ...], str, str]
Check = Callable[[Any, tuple[Any, ...], list[Finding]], None]


class Rules(NamedTuple):
    """The two places where the callers' rules differ (a tuple: dataclasses costs a
    command that opens a workspace 10 ms to import when nothing else loaded it)."""

    # pattern: True matches the whole string (unit front matter: "a\n" is not a one-line
    # id, whatever Python's '$' allows); False searches as jsonschema does, so that a
    # descriptor the check accepts is one jsonschema accepts.
    fullmatch: bool
    # uniqueItems: True compares (type, value), so 1 and 1.0 are two items (the unit
    # rule, hashed: a unit may list many tags); False is JSON equality (1 equals 1.0).
    typed_unique: bool


METADATA = Rules(fullmatch=True, typed_unique=True)
DESCRIPTOR = Rules(fullmatch=False, typed_unique=False)

# Words that never constrain a value (annotations, and the containers of definitions).
_IGNORED = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "default"})
# Every keyword the compiler checks; tests count them against the shipped schemas.
KEYWORDS = frozenset(
    {
        "type", "const", "enum", "pattern", "minLength", "maxLength", "minItems",
        "maxItems", "uniqueItems", "minimum", "maximum", "exclusiveMinimum",
         "items", "oneOf", "$ref", "properties", "required",
        "additionalProperties",
    }
)  # fmt: skip


class Unsupported(Exception):
    """The schema uses a keyword this compiler does not know."""


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _number,
    # JSON Schema's integer is a number without a fraction: 4.0 is one, true is not.
    "integer": lambda v: _number(v) and (isinstance(v, int) or float(v).is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def is_integer(v: Any) -> bool:
    """JSON Schema's integer: 4 and 4.0 are, true and 4.5 are not."""
    return _TYPES["integer"](v)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema has it: true is not 1, 1 equals 1.0, deep for containers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _number(a) and _number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def closest(word: str, names: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The name most like ``word`` (ties go to the greater name, whatever the order), or None."""
    import difflib  # only a finding needs it: off the start-up path of a valid descriptor

    close = difflib.get_close_matches(word, names, n=1, cutoff=cutoff)
    return close[0] if close else None


def describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# keyword: (the values it applies to, the test of a value against n, the finding's words).
_LIMITS: dict[str, tuple[Callable[[Any], bool], Callable[[Any, Any], bool], str]] = {
    "minLength": (_TYPES["string"], lambda v, n: len(v) >= n, "must not be empty"),
    "maxLength": (_TYPES["string"], lambda v, n: len(v) <= n, "must be at most {n} characters"),
    "minItems": (_TYPES["array"], lambda v, n: len(v) >= n, "needs at least {n} item(s)"),
    "maxItems": (_TYPES["array"], lambda v, n: len(v) <= n, "takes at most {n} item(s)"),
    "minimum": (_number, lambda v, n: v >= n, "must be at least {n}"),
    "maximum": (_number, lambda v, n: v <= n, "must be at most {n}"),
    "exclusiveMinimum": (_number, lambda v, n: v > n, "must be greater than {n}"),
}


def _limit(keyword: str, n: Any) -> Check:
    applies, ok, words = _LIMITS[keyword]
    if applies is not _number and not isinstance(n, int):
        raise TypeError(f"a schema count must be an integer, got {n!r}")
    message = words.format(n=n)
    return lambda v, p, out: (
        None if not applies(v) or ok(v, n) else out.append((p, keyword, message))
    )


def _all(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def run(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
        for c in checks:
            c(v, p, out)

    return run


class Compiler:
    """Compiles one schema document; ``$ref`` reaches its ``$defs`` or another shipped file."""

    def __init__(self, root: Schema, rules: Rules) -> None:
        self.root = root
        self.rules = rules
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        """A check appending (path, keyword, message) for each way ``v`` breaks ``schema``."""
        if isinstance(schema, bool):
            return (lambda v, p, out: None) if schema else self._never
        if not isinstance(schema, dict):
            raise Unsupported(repr(schema))
        unknown = schema.keys() - KEYWORDS - _IGNORED
        if unknown:
            raise Unsupported(", ".join(sorted(unknown)))
        # A fixed order, so the unit's diagnostics keep theirs whatever the schema's.
        steps = (
            self._type, self._const, self._enum, self._pattern, self._limits, self._unique,
            self._items, self._one_of, self._ref, self._object,
        )  # fmt: skip
        return _all([c for step in steps if (c := step(schema)) is not None])

    @staticmethod
    def _never(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
        out.append((p, "false", f"{describe(v)} is not allowed here"))

    def _type(self, schema: Schema) -> Check | None:
        if "type" not in schema:
            return None
        named = schema["type"]
        names = [named] if isinstance(named, str) else [str(n) for n in named or []]
        tests = [_TYPES[n] for n in names]
        wanted = " or ".join(names)
        # One type (every unit rule): a direct call, as this runs for every node of every unit.
        fits = tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests))

        def check_type(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            if not fits(v):
                out.append((p, "type", f"must be of type {wanted}, got {describe(v)}"))

        return check_type

    def _const(self, schema: Schema) -> Check | None:
        if "const" not in schema:
            return None
        const = schema["const"]
        return lambda v, p, out: (
            None
            if json_equal(v, const)
            else out.append((p, "const", f"must be {const!r}, got {describe(v)}"))
        )

    def _enum(self, schema: Schema) -> Check | None:
        """One of the listed values, with the closest one suggested."""
        if "enum" not in schema:
            return None
        listed = schema["enum"]
        allowed = tuple(listed) if isinstance(listed, list) else ()
        words = [str(a) for a in allowed]
        # A string equals only a listed string: a set lookup, not a walk of the list.
        strings = frozenset(a for a in allowed if isinstance(a, str))

        def check_enum(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            found = v in strings if isinstance(v, str) else any(json_equal(v, a) for a in allowed)
            if not found:
                close = closest(str(v), words)
                hint = f"; did you mean '{close}'?" if close else ""
                message = f"must be one of {', '.join(words)}, got {describe(v)}{hint}"
                out.append((p, "enum", message))

        return check_enum

    def _pattern(self, schema: Schema) -> Check | None:
        if "pattern" not in schema:
            return None
        regex = re.compile(str(schema["pattern"]))
        match = regex.fullmatch if self.rules.fullmatch else regex.search
        # The schema's description of the form, where it has one: "the required form"
        # alone leaves the user guessing (issue 34).
        form = schema.get("description")
        problem = "does not have the required form" + (
            f": write {form}" if isinstance(form, str) else ""
        )
        return lambda v, p, out: (
            None
            if not isinstance(v, str) or match(v)
            else out.append((p, "pattern", f"{describe(v)} {problem}"))
        )

    def _limits(self, schema: Schema) -> Check | None:
        """minLength, maxLength, minItems, maxItems, minimum, maximum, exclusiveMinimum."""
        checks = [_limit(k, schema[k]) for k in _LIMITS if k in schema]
        return _all(checks) if checks else None

    def _unique(self, schema: Schema) -> Check | None:
        """No item listed twice."""
        if not schema.get("uniqueItems"):
            return None
        typed = self.rules.typed_unique

        def check_unique(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            if not isinstance(v, list):
                return
            # Typed: key by (type, value); only unhashable items are compared one by one.
            keys: set[tuple[type, Any]] = set()
            others: list[Any] = []
            for i, item in enumerate(v):
                if not typed:
                    repeated = any(json_equal(item, seen) for seen in v[:i])
                else:
                    try:
                        key = (type(item), item)
                        repeated = key in keys
                        keys.add(key)
                    except TypeError:
                        repeated = any(item == s and type(item) is type(s) for s in others)
                        others.append(item)
                if repeated:
                    out.append((p, "uniqueItems", f"lists {describe(item)} twice"))
                    return

        return check_unique

    def _items(self, schema: Schema) -> Check | None:
        if "items" not in schema:
            return None
        item_check = self.compile(schema["items"])

        def check_items(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            if isinstance(v, list):
                for i, item in enumerate(v):
                    item_check(item, (*p, i), out)

        return check_items

    def _one_of(self, schema: Schema) -> Check | None:
        if "oneOf" not in schema:
            return None
        branches = [self.compile(s) for s in schema["oneOf"] or []]

        def check_one_of(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            fits = 0
            for branch in branches:
                found: list[Finding] = []
                branch(v, p, found)
                fits += not found
            if fits != 1:
                out.append((p, "oneOf", f"{describe(v)} must match exactly one listed form"))

        return check_one_of

    def _ref(self, schema: Schema) -> Check | None:
        if "$ref" not in schema:
            return None
        target = str(schema["$ref"])
        if target not in self.refs:
            # Filled in before compiling, so a schema that refers to itself terminates.
            slot: list[Check] = []
            self.refs[target] = lambda v, p, out: slot[0](v, p, out)
            if target.startswith("#/"):
                node: Any = self.root
                for part in target[2:].split("/"):
                    node = node[part]
                slot.append(self.compile(node))
            elif re.fullmatch(r"[a-z-]+\.schema\.json", target):
                other = load_schema(target)
                slot.append(Compiler(other, self.rules).compile(other))
            else:
                raise Unsupported(f"$ref {target}")
        return self.refs[target]

    def _object(self, schema: Schema) -> Check | None:
        """``properties`` / ``required`` / ``additionalProperties`` of a mapping."""
        if not any(k in schema for k in ("properties", "additionalProperties", "required")):
            return None
        properties = schema.get("properties")
        props = (
            {k: self.compile(s) for k, s in properties.items()}
            if isinstance(properties, dict)
            else {}
        )
        listed = schema.get("required", [])
        required = tuple(str(k) for k in listed) if isinstance(listed, list) else ()
        extra = schema.get("additionalProperties", True)
        other = None if isinstance(extra, bool) else self.compile(extra)
        closed = extra is False
        names = list(props)

        def check_object(v: Any, p: tuple[Any, ...], out: list[Finding]) -> None:
            if not isinstance(v, dict):
                return
            for key in required:
                if key not in v:
                    out.append(((*p, key), "required", f"'{key}' is required"))
            for key, item in v.items():
                if key in props:
                    props[key](item, (*p, key), out)
                elif other is not None:
                    other(item, (*p, key), out)
                elif closed:
                    close = closest(str(key), names, cutoff=0.5)
                    hint = (
                        f"; did you mean '{close}'?"
                        if close
                        else f"; allowed keys: {', '.join(names)}"
                    )
                    out.append(((*p, key), "additionalProperties", f"unknown key '{key}'{hint}"))

        return check_object


def compile_schema(schema: Schema, rules: Rules = METADATA) -> Check:
    """Compile a schema document under ``rules`` (``Unsupported`` for an unknown keyword)."""
    return Compiler(schema, rules).compile(schema)
