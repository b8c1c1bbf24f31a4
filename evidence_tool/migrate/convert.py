"""Legacy typed content -> a v4 unit and its canonical file, checked to be lossless.

The check is the definition of lossless: ``validate(unit) == []`` (the
canonical text parses back to the same unit) and the unit's canonical JSON
equals the legacy typed content.  When it fails, each field is tried alone
among placeholder fields to name the one v4 cannot hold, and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.migrate.content import expected_content
from evidence_tool.migrate.legacy import LegacyUnit
from evidence_tool.migrate.problems import Problem
from evidence_tool.unit import (
    PAYLOAD_CLASSES,
    AppliesTo,
    EnumValue,
    Metadata,
    Unit,
    parse_unit,
    render,
    validate,
)
from evidence_tool.unit import fields as F


@dataclass(frozen=True)
class Converted:
    legacy: LegacyUnit
    unit: Unit
    text: str

    @property
    def target(self) -> str:
        return f"evidence/curated/{self.unit.kind}/{self.legacy.name}.md"

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")


def _obj(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _strs(value: JsonValue) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def unit_from_content(content: JsonObject) -> Unit:
    """Build the typed v4 unit from its canonical JSON shape (no interpretation: content.py
    has checked the type of every value)."""
    meta = _obj(content["metadata"])
    applies = _obj(meta.get("applies_to", {}))
    metadata = Metadata(
        id=str(meta["id"]),
        kind=str(meta["kind"]),
        language=str(meta["language"]),
        purposes=_strs(meta["purposes"]),
        applies_to=AppliesTo(
            *(_strs(applies.get(k, [])) for k in ("concepts", "tables", "columns"))
        ),
    )
    values: dict[str, str | tuple[str, ...] | tuple[EnumValue, ...]] = {}
    for name, value in _obj(content["payload"]).items():
        if name == "values" and isinstance(value, list):
            values[name] = tuple(
                EnumValue(str(e["value"]), str(e["meaning"])) for e in map(_obj, value)
            )
        else:
            values[name] = _strs(value) if isinstance(value, list) else str(value)
    return Unit(metadata, str(content["title"]), PAYLOAD_CLASSES[metadata.kind](**values))


def _holds(content: JsonObject) -> tuple[bool, Unit, list[Diagnostic]]:
    unit = unit_from_content(content)
    problems = validate(unit)
    return (not problems and unit.to_json() == content), unit, problems


def convert(legacy: LegacyUnit) -> Converted | list[Problem]:
    """The v4 unit for ``legacy``, or the E160 problems naming each field v4 cannot hold."""
    content, problems = expected_content(legacy)
    if content is None:
        return problems
    ok, unit, _ = _holds(content)
    if ok:
        return Converted(legacy, unit, render(unit))
    return _attribute(legacy, content) or [
        legacy.problem(
            ("payload",), "v4 cannot hold this unit's fields together (no single field is at fault)"
        )
    ]


# Placeholders that v4 certainly holds; mapping keeps one table and one column so the
# "at least one" rule holds whichever of the two is being tried.
_PLACEHOLDER: JsonObject = {
    F.TEXT: "x",
    F.LIST: [],
    F.TABLES: ["s.t"],
    F.COLUMNS: ["s.t.c"],
    F.SCALAR: "x",
    F.COLUMN: "s.t.c",
    F.URL: "https://example.org/",
    F.VALUES: [{"value": "x", "meaning": ""}],
    F.SQL: "1",
}


def _probe(content: JsonObject, keep: str) -> JsonObject:
    stored = _obj(content["payload"])
    payload: JsonObject = {
        spec.name: stored[spec.name] if spec.name == keep else _PLACEHOLDER[spec.type]
        for spec in F.FIELDS[_kind(content)]
    }
    title = content["title"] if keep == "title" else "x"
    return {"metadata": content["metadata"], "title": title, "payload": payload}


def _kind(content: JsonObject) -> str:
    return str(_obj(content["metadata"])["kind"])


def _attribute(legacy: LegacyUnit, content: JsonObject) -> list[Problem]:
    out = []
    names = ["title"] + [spec.name for spec in F.FIELDS[_kind(content)]]
    for name in names:
        probe = _probe(content, name)
        ok, unit, _ = _holds(probe)
        if ok:
            continue
        back = parse_unit(render(unit))
        path = ("title",) if name == "title" else ("payload", name)
        want = probe["title"] if name == "title" else _obj(probe["payload"])[name]
        got: JsonValue = None
        if back.unit is not None:
            data = back.unit.to_json()
            got = data["title"] if name == "title" else _obj(data["payload"]).get(name)
        out.append(legacy.problem(path, explain(back.errors, want, got)))
    return out


_LEADS = {
    "E110": "it holds a line that Markdown reads as a title (a level-1 heading); "
    "a v4 unit has exactly one",
    "E111": "it holds a line that Markdown reads as a level-2 heading outside a code "
    "fence, which v4 reads as structure",
    "E112": "it holds a line that Markdown reads as a field heading outside a code fence, "
    "so v4 would split the field",
    "E113": "v4 would end the field early (a heading or an unclosed code fence in it "
    "swallows what follows)",
}
_DETAILED = {
    "E109": "a v4 file cannot hold it",
    "E114": "v4 refuses it",
    "E115": "it is not one PostgreSQL expression, as v4 formula SQL must be",
    "E116": "it is not an absolute http(s) URL, as a v4 URL must be",
}
_HEADING = re.compile(r"'(#{1,6} [^']*)'")
_FIELD_PREFIX = re.compile(r"^'## [^']*':? ")


def _short(value: JsonValue) -> str:
    text = repr(value)
    return text if len(text) <= 70 else text[:67] + "..."


def explain(diags: list[Diagnostic], want: JsonValue, got: JsonValue) -> str:
    """Why v4 does not hold a value: from the parser's findings, or from what it reads back."""
    if diags:
        first = next((d for d in diags if d.code in _LEADS), diags[0])
        if first.code in _LEADS:
            line = _HEADING.search(first.message) if first.code != "E113" else None
            return _LEADS[first.code] + (f" (the line '{line.group(1)}')" if line else "")
        detail = _FIELD_PREFIX.sub("", first.message)
        return f"{_DETAILED.get(first.code, 'v4 refuses it')}: {detail}"
    if isinstance(want, list) and isinstance(got, list) and len(got) != len(want):
        return (
            f"a line in it reads as the start of another entry in v4, so v4 would read "
            f"{len(got)} entries instead of {len(want)}"
        )
    if isinstance(want, str) and isinstance(got, str):
        if got and want.startswith(got) and len(got) < len(want):
            return (
                "v4 would end the field early: a line in it reads as a heading of another "
                f"field, so only {_short(got)} would remain"
            )
        if want.strip() == got.strip():
            return "v4 trims blank lines and blanks around it, so they would be lost"
    return f"v4 would read it back as {_short(got)} instead of {_short(want)}"
