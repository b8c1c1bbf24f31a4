"""Workspace and installation descriptors, validated by the JSON Schemas in ``schemas/``.

An unknown or misspelled key fails with its path (``evidence.activation.kindd``)
and the closest allowed key.

Importing jsonschema and building its validator cost a no-op command ~0.1 s, yet a
descriptor is almost always valid: ``conforms`` answers "is it valid?" with the checks
``unit.schemacompile`` compiles under the descriptor rules (JSON Schema's own: patterns
search, 1 equals 1.0), and only a "no" calls jsonschema, which finds the error and words
the message.  A schema with a keyword the compiler does not know goes to jsonschema whole
(``Unsupported``), never a guess.  tests/perf/test_schemacheck.py checks that both agree
on good and damaged descriptors.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from evidence_tool.errors import AvailabilityError, DescriptorError, UsageError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.unit.conflicts import conflict_line
from evidence_tool.unit.schemacompile import DESCRIPTOR, Check, Unsupported, closest, compile_schema
from evidence_tool.unit.schemas import load_schema
from evidence_tool.unit.yaml_strict import YamlProblem, load_unique
from evidence_tool.workspace.curated import read_regular
from evidence_tool.workspace.layout import Layout

_MAX_DESCRIPTOR = 1024 * 1024


@cache
def _compiled(name: str) -> Check | None:
    try:
        return compile_schema(load_schema(name), DESCRIPTOR)
    except Unsupported:
        return None


def conforms(data: Any, schema_name: str) -> bool:
    """True when ``data`` is valid against ``schemas/<schema_name>``; False means "ask
    jsonschema" (invalid, or a schema this compiler does not cover)."""
    check = _compiled(schema_name)
    findings: list[Any] = []
    if check is not None:
        check(data, (), findings)
    return check is not None and not findings


@cache
def _validator(name: str) -> Any:
    import jsonschema
    from referencing import Registry, Resource

    schema = load_schema(name)
    registry: Registry = Registry()
    for other in ("evidence-descriptor.schema.json",):
        s = load_schema(other)
        registry = registry.with_resource(s["$id"].rsplit("/", 1)[-1], Resource.from_contents(s))
        registry = registry.with_resource(s["$id"], Resource.from_contents(s))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, registry=registry)


_DISCRIMINATORS = ("kind", "descriptor_version")
_URL_KEYS = ("url", "endpoint_url")


def _unknown_key(err: Any) -> tuple[str, str]:
    allowed = list(err.schema.get("properties", {}))
    extra = [k for k in err.instance if k not in allowed]
    key = extra[0] if extra else "?"
    path = ".".join(str(p) for p in (*err.absolute_path, key))
    close = closest(str(key), allowed, 0.5)
    hint = f"; did you mean '{close}'?" if close else f"; allowed keys here: {', '.join(allowed)}"
    return path, f"unknown key '{key}'{hint}"


def _right_branch(errors: list[Any]) -> list[Any]:
    """Of a oneOf's failed alternatives, the errors of the one the data meant: a branch
    whose discriminator (``kind``, ``descriptor_version``) did not match is the wrong
    one, so its complaints ('http' was expected) would mislead."""
    branches: dict[Any, list[Any]] = {}
    for e in errors:
        branches.setdefault(
            e.relative_schema_path[0] if e.relative_schema_path else None, []
        ).append(e)

    def wrong(errs: list[Any]) -> bool:
        return any(
            e.validator == "const" and e.relative_path and e.relative_path[-1] in _DISCRIMINATORS
            for e in errs
        )

    meant = [errs for errs in branches.values() if not wrong(errs)]
    return max(
        meant or list(branches.values()), key=lambda errs: max(len(e.absolute_path) for e in errs)
    )


def _best_message(error: Any) -> tuple[str, str]:
    """(path, message) of the most specific schema error, with a key suggestion."""
    leaf = error  # descend through oneOf alternatives ourselves: best_match picks a leaf
    while True:  # of whichever branch is deepest, often the wrong one
        if leaf.validator == "additionalProperties":
            return _unknown_key(leaf)
        if not leaf.context:
            break
        errs = _right_branch(list(leaf.context))
        unknown = [e for e in errs if e.validator == "additionalProperties"]
        leaf = unknown[0] if unknown else max(errs, key=lambda e: len(e.absolute_path))
    path = ".".join(str(p) for p in leaf.absolute_path) or "(top level)"
    if leaf.absolute_path and leaf.absolute_path[-1] in _URL_KEYS:
        # The value may hold a password: say what is wrong without quoting it.
        return path, "is not an http or https URL without spaces (its value is not shown)"
    return path, leaf.message


def validate_descriptor(data: JsonValue, schema_name: str, source: str) -> None:
    """Raise ``DescriptorError`` (E902) naming the first offending key path."""
    if conforms(data, schema_name):
        return  # valid: jsonschema is only imported to find and word an error
    errors = sorted(_validator(schema_name).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        path, message = _best_message(errors[0])
        raise DescriptorError(
            f"{path}: {message}", path=source, details={"result": {"key_path": path}}
        )


def read_descriptor(path: Path, what: str) -> bytes:
    """The file's bytes, refused past 1 MiB without reading it all (a 100 MB file, /dev/zero)."""
    try:
        data = read_regular(path, _MAX_DESCRIPTOR)
    except FileNotFoundError:
        raise AvailabilityError(
            f"{what} {path} does not exist", code="E603", path=str(path)
        ) from None
    except OSError as exc:
        raise AvailabilityError(
            f"{what} {path} cannot be read: {exc.strerror}", code="E603", path=str(path)
        ) from None
    if data is None:
        raise DescriptorError(f"{path}: the {what} is not a regular file", path=str(path))
    if len(data) > _MAX_DESCRIPTOR:
        raise DescriptorError(f"{path}: the descriptor is larger than 1 MiB", path=str(path))
    return data


def parse_yaml_bytes(data: bytes, source: str) -> JsonValue:
    """Strict YAML 1.2 of a descriptor's bytes; every problem is a coded DescriptorError."""
    if len(data) > _MAX_DESCRIPTOR:
        raise DescriptorError(f"{source}: the descriptor is larger than 1 MiB", path=source)
    try:
        # SPEC.md 2: a key given twice is refused, not resolved in favour of either value.
        value: JsonValue = load_unique(data.decode("utf-8")).value  # strict: JSON values
        return value
    except UnicodeDecodeError:
        raise DescriptorError(f"{source}: not UTF-8", path=source) from None
    except YamlProblem as exc:
        line = conflict_line(data.decode("utf-8"))  # decoded above
        if line is not None:  # two clones changed it and one pulled: say so, not syntax
            raise DescriptorError(
                f"{source}: line {line} is a Git conflict marker: a merge left both sides "
                "of an edit in the file; keep the text you want (often both sides' lines), "
                "delete the marker lines ('<<<<<<<', '=======', '>>>>>>>'), then run the "
                "command again",
                path=source,
                line=line,
                column=1,
            ) from None
        raise DescriptorError(
            f"{source}: {exc.message}", path=source, line=exc.line, column=exc.column
        ) from None


def parse_descriptor(data: bytes, schema_name: str, source: str) -> JsonObject:
    """A descriptor's bytes -> its validated value (the loaders' path, minus the file)."""
    value = parse_yaml_bytes(data, source)
    validate_descriptor(value, schema_name, source)
    return _object(value)


def load_yaml_file(path: Path, what: str) -> JsonValue:
    return parse_yaml_bytes(read_descriptor(path, what), str(path))


def _object(value: JsonValue) -> JsonObject:
    """A validated descriptor (or section): every schema here makes it a mapping."""
    return value if isinstance(value, dict) else {}


def _text(value: JsonValue) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class WorkspaceDescriptor:
    """workspace.yaml, read once; ``evidence`` stays the YAML section that sources parse."""

    id: str
    name: str
    default_language: str
    evidence: JsonObject  # the descriptor's evidence section, as validated YAML
    retrieval: JsonObject | None = None  # the adopted search settings (activation reads it)

    @property
    def sources(self) -> list[JsonObject]:
        """The configured sources, each the YAML the sources package reads (SPEC.md 6)."""
        found = self.evidence.get("sources")
        return [_object(s) for s in found] if isinstance(found, list) else []


def load_workspace_descriptor(root: Path) -> WorkspaceDescriptor:
    Layout.at(root).require_contained()  # never read a descriptor (or more) through a link
    path = root / "workspace.yaml"
    data = load_yaml_file(path, "workspace descriptor")
    validate_descriptor(data, "workspace.schema.json", str(path))
    ws = _object(data)
    return WorkspaceDescriptor(
        _text(ws["id"]),
        _text(ws["name"]),
        _text(ws["default_language"]),
        _object(ws["evidence"]),
        _object(ws["retrieval"]) if "retrieval" in ws else None,
    )


@dataclass(frozen=True, slots=True)
class Installation:
    """The installation descriptor, validated; each section stays the YAML value that its
    owning package parses (activation, embedding, catalog, refiner, network)."""

    path: str | None
    data: JsonObject

    @property
    def evidence(self) -> JsonObject:
        return dict(_object(self.data.get("evidence", {})))

    @property
    def actor(self) -> str | None:
        return _text(self.data.get("actor")) or None

    @property
    def registry_root(self) -> str | None:
        """``workspace_registry_root``: where ``--workspace ID`` looks for workspaces."""
        return _text(self.data.get("workspace_registry_root")) or None

    def section(self, name: str) -> JsonObject:
        return dict(_object(self.evidence.get(name, {})))

    def has_section(self, name: str) -> bool:
        return name in self.evidence


DEFAULT_INSTALLATION = Installation(None, {"installation_version": 1})


def load_installation(path: str | os.PathLike[str] | None) -> Installation:
    if path is None:
        return DEFAULT_INSTALLATION
    p = Path(path)
    data = load_yaml_file(p, "installation descriptor")
    validate_descriptor(data, "installation.schema.json", str(p))
    return Installation(str(p), _object(data))


def workspace_root_from_installation(installation: str, workspace_id: str) -> Path:
    inst = load_installation(installation)
    registry = inst.registry_root
    if not registry:
        raise DescriptorError(
            f"{installation}: workspace_registry_root is not set, so "
            "--workspace cannot be resolved; use --workspace-root",
            path=installation,
        )
    if (
        not workspace_id
        or "/" in workspace_id
        or workspace_id in (".", "..")
        or "\x00" in workspace_id
    ):
        raise UsageError(f"invalid workspace id {workspace_id!r}: an id is one folder name")
    return Path(registry) / "repo" / workspace_id


def resolve_actor(explicit: str | None, installation: Installation) -> str:
    """--actor, else the installation's actor, else THT_ACTOR, else the OS user name."""
    if explicit:
        return explicit
    if installation.actor:
        return installation.actor
    env = os.environ.get("THT_ACTOR")
    if env:
        return env
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
