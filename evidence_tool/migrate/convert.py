"""Legacy typed content -> a v4 unit and its canonical file, checked to be lossless.

``expected_content`` is the legacy reader's contract (docs/legacy-formats.md, "Typed
content"): what each stored value means, in v4's canonical JSON shape, or why it has
none.  The check is the definition of lossless: ``validate(unit) == []`` (the
canonical text parses back to the same unit) and the unit's canonical JSON
equals the legacy typed content.  When it fails, each field is tried alone
among placeholder fields to name the one v4 cannot hold, and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_tool.archive.objects import HEX64
from evidence_tool.errors import Diagnostic
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.migrate.legacy import METADATA_KEYS, LegacyUnit
from evidence_tool.migrate.reading import FieldPath, Problem
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
from evidence_tool.unit.hashing import canonical_json, sha256_hex
from evidence_tool.unit.metadata import check_metadata
from evidence_tool.unit.yaml_strict import YamlDoc

APPLIES_KEYS = ("concepts", "tables", "columns")


def describe(value: JsonValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "a string"


class _Reader:
    """Collects problems while turning stored values into typed ones."""

    def __init__(self, unit: LegacyUnit) -> None:
        self.unit = unit
        self.problems: list[Problem] = []

    def bad(self, path: FieldPath, reason: str) -> None:
        self.problems.append(self.unit.problem(path, reason))

    def string(self, path: FieldPath, value: JsonValue, what: str = "a string") -> str | None:
        if not isinstance(value, str):
            self.bad(path, f"must be {what}, got {describe(value)}")
            return None
        return value

    def text(self, path: FieldPath, value: JsonValue, required: bool) -> str | None:
        """Markdown text: trailing line breaks are not part of the value (YAML '|' adds one)."""
        raw = self.string(path, value, "Markdown text (a string)")
        if raw is None:
            return None
        text = raw.rstrip("\n")
        if "\r" in text:
            self.bad(
                path,
                "contains a carriage return (CR): a v4 file reads CRLF as LF and refuses a "
                "bare CR, so v4 cannot keep this text",
            )
        elif "\x00" in text:
            self.bad(path, "contains a NUL character, which a v4 file cannot hold")
        elif required and not text.strip():
            self.bad(path, "is required in v4 and empty")
        return text

    def strings(self, path: FieldPath, value: JsonValue) -> list[str] | None:
        if not isinstance(value, list):
            self.bad(path, f"must be a list of strings, got {describe(value)}")
            return None
        out: list[str] = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                self.bad(
                    (*path, i),
                    f"is {describe(item)}, not a string: v4 list values are strings "
                    "(quote the value in the legacy file if it is meant as text)",
                )
            elif item in out:
                self.bad(
                    (*path, i),
                    f"repeats {item!r} (first at [{out.index(item)}]): a v4 list holds each "
                    "value once, so one copy would be lost",
                )
            else:
                out.append(item)
        return out


def expected_content(unit: LegacyUnit) -> tuple[JsonObject | None, list[Problem]]:
    """The v4 ``to_json()`` shape the legacy unit means, or the problems that prevent it
    (a unit's JSON form: ``convert`` builds the v4 unit from it)."""
    r = _Reader(unit)
    metadata = _metadata(r)
    title = _title(r)
    payload = _payload(r, str(metadata["kind"])) if metadata else None  # a known kind
    if unit.version >= 2:
        _check_hash(r)
    if r.problems or metadata is None or title is None or payload is None:
        return None, r.problems
    return {"metadata": metadata, "title": title, "payload": payload}, []


def _check_hash(r: _Reader) -> None:
    """v2/v3: the stored hash must match the stored content, else the file was edited by
    hand after the legacy writer and no one can say which of the two is meant."""
    u, stored = r.unit, r.unit.content_hash
    if not (isinstance(stored, str) and HEX64.fullmatch(stored)):
        r.bad(("content_hash",), "must be 64 lowercase hex digits")
        return
    try:  # {metadata, title, payload} exactly as stored
        actual = sha256_hex(
            canonical_json({"metadata": u.metadata, "title": u.title, "payload": u.payload})
        )
    except ValueError as exc:  # a NaN or infinity in the data: no canonical JSON
        r.bad(("content_hash",), f"cannot be checked: {exc}")
        return
    if actual != stored:
        r.bad(
            ("content_hash",),
            f"does not match the stored metadata, title and payload (they hash to "
            f"{actual[:12]}…): the file was changed after the legacy writer hashed it; "
            "check the change and write the matching hash",
        )


def _metadata(r: _Reader) -> JsonObject | None:
    stored = r.unit.metadata
    out: JsonObject = {"schema_version": 4}
    for key in METADATA_KEYS[:3]:
        value = r.string((key,), stored.get(key))
        if value is not None:
            out[key] = value
    purposes = r.strings(("purposes",), stored.get("purposes"))
    if purposes is not None:
        out["purposes"] = [*purposes]
    applies = stored.get("applies_to", {})
    if not isinstance(applies, dict):
        r.bad(("applies_to",), f"must be a mapping, got {describe(applies)}")
    else:
        kept: dict[str, list[JsonValue]] = {}
        for key, listed in applies.items():
            if key not in APPLIES_KEYS:
                r.bad(
                    ("applies_to", key), "unknown key; applies_to holds concepts, tables, columns"
                )
                continue
            values = r.strings(("applies_to", key), listed)
            if values:  # an empty list and an absent key mean the same
                kept[key] = [*values]
        if kept:
            out["applies_to"] = {k: kept[k] for k in APPLIES_KEYS if k in kept}
    if r.problems:
        return None
    for d in check_metadata(YamlDoc(out)):
        where, _, message = d.message.partition(": ")
        path = tuple(int(p) if p.isdigit() else p for p in where.split("."))
        r.bad(path, f"v4 refuses this value: {message}")
    if not isinstance(out["kind"], str) or out["kind"] not in F.FIELDS:
        return None
    return None if r.problems else out


def _title(r: _Reader) -> str | None:
    title = r.string(("title",), r.unit.title)
    if title is None:
        return None
    if "\n" in title.strip("\n") or "\r" in title:
        r.bad(
            ("title",),
            f"has {title.strip(chr(10)).count(chr(10)) + 1} lines; a v4 title is one "
            "'# Title' line",
        )
    elif not title.strip():
        r.bad(("title",), "is empty; v4 requires a title")
    elif title != title.strip():
        r.bad(("title",), "has leading or trailing blanks, which a v4 '# Title' line does not keep")
    return title


def _payload(r: _Reader, kind: str) -> JsonObject | None:
    stored = r.unit.payload
    if not isinstance(stored, dict):
        r.bad(("payload",), f"must be a mapping of field names to values, got {describe(stored)}")
        return None
    specs = {spec.name: spec for spec in F.FIELDS[kind]}
    for key in stored:
        if key not in specs:
            r.bad(
                ("payload", key),
                f"is not a field of a {kind} unit ({', '.join(specs)}); v4 has no place for it",
            )
    out: JsonObject = {}
    for name, spec in specs.items():
        path = ("payload", name)
        if name not in stored:
            if spec.required:
                r.bad(path, f"is required in a v4 {kind} unit and missing")
            elif spec.type in F.LIST_TYPES:
                out[name] = []
            continue
        value = _field_value(r, spec, path, stored[name])
        if value is not None:
            out[name] = value
    if kind == "mapping" and not out.get("tables") and not out.get("columns"):
        r.bad(("payload", "tables"), "a v4 mapping needs at least one table or column; it has none")
    return out


def _field_value(r: _Reader, spec: F.FieldSpec, path: FieldPath, value: JsonValue) -> JsonValue:
    if spec.type in (F.TEXT, F.SQL):
        return r.text(path, value, required=True)
    if spec.type in F.LIST_TYPES:
        found = r.strings(path, value)
        return None if found is None else [*found]
    if spec.type in F.LINE_TYPES:
        return r.string(path, value)
    assert spec.type == F.VALUES
    values = _enum_values(r, path, value)
    return None if values is None else [{**v} for v in values]


def _enum_values(r: _Reader, path: FieldPath, value: JsonValue) -> list[dict[str, str]] | None:
    if not isinstance(value, list) or not value:
        r.bad(path, "must be a nonempty list of {value, meaning} entries")
        return None
    out: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(value):
        if not isinstance(item, dict) or "value" not in item or set(item) - {"value", "meaning"}:
            r.bad((*path, i), "each stored value is a mapping with 'value' and optional 'meaning'")
            continue
        stored = r.string((*path, i, "value"), item["value"], "a string (the stored value)")
        meaning = r.text((*path, i, "meaning"), item.get("meaning", ""), required=False)
        if stored is None or meaning is None:
            continue
        if stored in seen:
            r.bad(
                (*path, i, "value"),
                f"stored value {stored!r} appears twice (first at [{seen[stored]}]); v4 holds "
                "each stored value once, so one meaning would be lost",
            )
            continue
        seen[stored] = i
        out.append({"value": stored, "meaning": meaning})
    return out


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
    """Build the typed v4 unit from its canonical JSON shape (no interpretation:
    ``expected_content`` has checked the type of every value)."""
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
