"""``sources add``: write an import entry into workspace.yaml, so nobody hand-edits YAML.

The descriptor is read, changed and checked against its schema in memory,
then replaced only while it still holds the bytes read (E301 otherwise: an
editor saved it meanwhile).  An Evidence descriptor v1 becomes v2, the first
version with sources.  The file is written in the canonical form of
``tht workspace new``: comments in it are not kept (Git has them).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.errors import ConflictError, SourceError, UnknownNameError, UsageError
from evidence_tool.importers.formats import FORMATS
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import AnyObject, Record
from evidence_tool.sources.identity import source_id
from evidence_tool.sources.import_source import KIND, check_entry, import_locator, list_files
from evidence_tool.sources.policy import SourceSpec, specs_of
from evidence_tool.unit.yaml_strict import YamlProblem, dump, load_unique
from evidence_tool.workspace.descriptor import (
    parse_descriptor,
    parse_yaml_bytes,
    read_descriptor,
    validate_descriptor,
)
from evidence_tool.workspace.layout import DESCRIPTOR, Layout

SCHEMA = "workspace.schema.json"
LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{2,8})*")  # the descriptor schema's pattern


def _relative(layout: Layout, given: str, cwd: Path) -> str:
    """The workspace-relative form of PATH as typed (relative to ``cwd``); E501 outside."""
    path = Path(os.path.abspath(cwd / given))
    root = layout.root
    if path == root:
        raise SourceError(
            f"{given} is the workspace itself; name the file or folder of the export",
            path=given,
        )
    if root in path.parents:
        return layout.rel(path)
    # Outside the workspace: stored relative to it ('../dbt'); check_path then decides
    # whether it lies in the Git work tree that holds the workspace (E501 otherwise).
    return Path(os.path.relpath(path, root)).as_posix()


def parse_options(args: list[str]) -> JsonObject:
    """``--option KEY=VALUE`` pairs; a value is read as one YAML scalar or flow collection
    (``3``, ``true``, ``[a, b]``), so a descriptor written by hand and by ``add`` agree.
    A JSON boundary: the values go into workspace.yaml as typed."""
    out: JsonObject = {}
    for arg in args:
        name, sep, text = arg.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--option {arg!r} is not KEY=VALUE")
        try:
            out[name.strip()] = load_unique(text).value if text.strip() else ""
        except YamlProblem as exc:
            raise UsageError(f"--option {name}: {exc.message}") from None
    return out


def add_import(
    root: Path,
    fmt: str,
    given_path: str,
    language: str | None,
    options: JsonObject,
    cwd: Path,
) -> AddResult:
    layout = Layout.at(root)
    layout.require_contained()
    if language is not None and not LANGUAGE.fullmatch(language):
        raise UsageError(
            f"--language {language!r} is not a language tag: write one such as en, it or pt-BR"
        )
    if fmt not in FORMATS:
        raise UnknownNameError(
            f"unknown source format {fmt!r}; the formats are: {', '.join(sorted(FORMATS))}"
        )
    data = read_descriptor(layout.descriptor, "workspace descriptor")
    value = parse_yaml_bytes(data, DESCRIPTOR)  # edited in place and dumped again below
    validate_descriptor(value, SCHEMA, DESCRIPTOR)
    # The schema has just made these an object, an object and a list.
    assert isinstance(value, dict) and isinstance(value["evidence"], dict)
    listed = value["evidence"].get("sources", [])
    assert isinstance(listed, list)
    sources = list(listed)
    rel = _relative(layout, given_path, cwd)
    key = f"evidence.sources[{len(sources)}]"
    entry: JsonObject = {"kind": KIND, "format": fmt, "path": rel}  # as workspace.yaml holds it
    if language:
        entry["language"] = language
    if options:
        entry["options"] = options
    locator = import_locator(fmt, rel)
    for n, spec in enumerate(specs_of(s for s in sources if isinstance(s, dict))):
        if spec.kind == KIND and import_locator(spec.format, spec.path) == locator:
            raise UsageError(
                f"{DESCRIPTOR} already imports {rel} as {fmt} (evidence.sources[{n}]); "
                "nothing was written: edit that entry to change its options"
            )
    check_entry(SourceSpec.from_json({**entry, "index": len(sources)}), key)
    list_files(layout, rel, key)  # the links inside a folder too, as refresh will
    # Bytes of the operator's own (comments, spacing) are not kept: said in the result.
    rewritten = dump(value).encode("utf-8") != data
    value["evidence"] = {"descriptor_version": 2, "sources": [*sources, entry]}
    out = dump(value).encode("utf-8")
    parse_descriptor(out, SCHEMA, DESCRIPTOR)  # a bad --language is E902 here, nothing written
    try:
        fsio.write_atomic(layout.descriptor, out, expected=hashlib.sha256(data).hexdigest())
    except fsio.Changed:
        raise ConflictError(
            f"{DESCRIPTOR} changed while the entry was being added (an editor saved it?); "
            "nothing was written: run 'sources add' again",
            path=DESCRIPTOR,
        ) from None
    return AddResult(
        source_id=source_id(locator), locator=locator, key=key, entry=entry, rewritten=rewritten
    )


class AddResult(Record, frozen=True, kw_only=True):
    """What 'sources add' wrote: the new source and its descriptor entry."""

    source_id: str
    locator: str
    key: str  # evidence.sources[N]
    entry: AnyObject  # as written into workspace.yaml
    descriptor: str = DESCRIPTOR  # always: written for the --json result, in this place
    rewritten: bool  # the operator's own bytes (comments, spacing) were not kept
