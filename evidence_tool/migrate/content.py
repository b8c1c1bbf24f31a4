"""The typed content of a legacy unit, in v4's canonical JSON shape, or why it has none.

This is the legacy reader's contract (docs/legacy-formats.md, "Typed
content"): what each stored value means.  ``convert`` then checks that v4
holds exactly this content.
"""

from __future__ import annotations

from evidence_tool.archive.objects import HEX64
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.migrate.legacy import METADATA_KEYS, LegacyUnit
from evidence_tool.migrate.problems import FieldPath, Problem
from evidence_tool.unit import fields as F
from evidence_tool.unit.hashing import canonical_json, sha256_hex
from evidence_tool.unit.metadata import check_metadata
from evidence_tool.unit.yaml_strict import YamlDoc

APPLIES_KEYS = ("concepts", "tables", "columns")


def legacy_content_hash(unit: LegacyUnit) -> str:
    """sha256 of the canonical JSON of {metadata, title, payload} exactly as stored (v2, v3)."""
    return sha256_hex(
        canonical_json({"metadata": unit.metadata, "title": unit.title, "payload": unit.payload})
    )


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
    stored = r.unit.content_hash
    if not (isinstance(stored, str) and HEX64.fullmatch(stored)):
        r.bad(("content_hash",), "must be 64 lowercase hex digits")
        return
    try:
        actual = legacy_content_hash(r.unit)
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
