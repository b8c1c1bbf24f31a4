"""``tht workspace new``: a new workspace that validates and consolidates as it is (SPEC.md 4).

It writes the curated kind folders (a ``.gitkeep`` in each one left empty, so that Git
keeps it), the ``.gitignore`` entries the archive needs
(the lock file and the derived cache are never committed), optional example
units, and ``workspace.yaml`` last: a run cut short leaves no descriptor, so it
is not a workspace yet and the same command can simply run again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.errors import AvailabilityError, DescriptorError, UsageError
from evidence_tool.jsonvalue import View
from evidence_tool.unit.fields import KINDS
from evidence_tool.unit.hashing import sha256_hex
from evidence_tool.unit.yaml_strict import dump
from evidence_tool.workspace.descriptor import parse_descriptor
from evidence_tool.workspace.examples import example_units
from evidence_tool.workspace.layout import DESCRIPTOR, Layout, nearest_workspace

# What a commit must never hold (gitflow.roles.NEVER_COMMITTED): without these lines
# 'status' warns that the lock file is not ignored.
# The last: the temp files of atomic writes (".NAME.<12 hex>.tmp", fsio.TEMP_NAME), which a
# killed lock-free writer (fmt, workspace new) leaves behind; verify reports them.
TEMP_PATTERN = ".*." + "[0-9a-f]" * 12 + ".tmp"
GITIGNORE_LINES = (".evidence-archive.lock", ".evidence-cache/", TEMP_PATTERN)
KEEP = ".gitkeep"  # a name the curated tree never reads as a unit (unitnames.IGNORED_NAMES)
_OPTION_OF = {"id": "--id", "name": "--name", "default_language": "--language"}


@dataclass(frozen=True)
class NewWorkspace(View):
    root: Path
    id: str
    name: str
    default_language: str
    written: list[str] = field(default_factory=list)  # workspace-relative, in write order
    _keys = ("root", "id", "name", "default_language", "written")


def descriptor_bytes(workspace_id: str, language: str, name: str) -> bytes:
    """The new ``workspace.yaml``, checked against its schema (bad --id/--language: E901)."""
    value = {
        "descriptor_version": 4,
        "id": workspace_id,
        "name": name,
        "default_language": language,
        "evidence": {"descriptor_version": 1, "sources": []},
    }
    data = dump(value, flow_keys=frozenset({"sources"})).encode("utf-8")
    try:
        parse_descriptor(data, "workspace.schema.json", DESCRIPTOR)
    except DescriptorError as exc:
        key = str((exc.result or {}).get("key_path", ""))
        option = _OPTION_OF.get(key, "an option")
        raise UsageError(f"invalid {option} value: {exc.message}") from None
    return data


def _check_target(layout: Layout, examples: dict[str, bytes]) -> None:
    root = layout.root
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a folder: name a new or existing folder")
    if os.path.lexists(layout.descriptor):
        raise UsageError(
            f"{root} already holds a workspace ({layout.descriptor}); nothing was written",
            code="E903",
            path=str(layout.descriptor),
        )
    outer = nearest_workspace(root.parent)
    if outer is not None and Layout.at(outer).holds_evidence(root):
        raise UsageError(
            f"{root} is inside the evidence tree of the workspace {outer}, which would read "
            "the new files as its own: choose a folder outside its evidence/",
            path=str(root),
        )
    # Example units already in place byte for byte are a run cut short: not a refusal.
    theirs = [
        path
        for path in (layout.curated.rglob("*.md") if examples and layout.curated.is_dir() else ())
        if examples.get(path.relative_to(layout.curated).as_posix()) != path.read_bytes()
    ]
    if theirs:
        raise UsageError(
            f"{layout.curated} already holds unit files ({layout.rel(theirs[0])}): leave out "
            "--example, or start in an empty folder",
            path=str(layout.curated),
        )


def _gitignore(layout: Layout) -> tuple[str | None, bytes] | None:
    """(sha256 of the .gitignore read, or None if there is none; that file with the
    missing archive lines appended), or None if none is missing."""
    path = layout.root / ".gitignore"
    found = path.read_bytes() if path.is_file() else None
    old = found or b""
    # '.evidence-cache', '/.evidence-cache/' and '.evidence-cache/' ignore the same folder.
    present = {line.strip().strip("/") for line in old.decode("utf-8", "replace").splitlines()}
    missing = [line for line in GITIGNORE_LINES if line.strip("/") not in present]
    if not missing:
        return None
    head = old if not old or old.endswith(b"\n") else old + b"\n"
    added = "# Machine-local files of evidence-tool: never commit.\n" + "".join(
        f"{line}\n" for line in missing
    )
    # The hash of these very bytes: an edit after this read is refused, never overwritten.
    return (None if found is None else sha256_hex(found)), head + added.encode("utf-8")


def create_workspace(
    target: str | os.PathLike[str],
    workspace_id: str,
    language: str,
    *,
    name: str | None = None,
    example: bool = False,
) -> NewWorkspace:
    """Create a workspace in ``target`` (created if missing; may hold other files).

    Refuses a target that already holds ``workspace.yaml`` (E903) before writing.
    """
    layout = Layout.at(target)
    name = name if name is not None else workspace_id
    descriptor = descriptor_bytes(workspace_id, language, name)
    examples = example_units(language) if example else {}
    _check_target(layout, examples)
    written: list[str] = []
    try:
        for kind in KINDS:
            fsio.makedirs(layout.curated / kind)
        for rel, data in examples.items():
            if not (layout.curated / rel).is_file():  # else: identical, see _check_target
                fsio.write_atomic(layout.curated / rel, data, expected=None)
                written.append(layout.rel(layout.curated / rel))
        # Git keeps no empty folder: without a file the curated tree misses from every
        # clone of a blank workspace, and each command there is E601 (tree unavailable).
        for kind in KINDS:
            folder = layout.curated / kind
            if not any(folder.iterdir()):
                fsio.write_atomic(folder / KEEP, b"", expected=None)
                written.append(layout.rel(folder / KEEP))
        ignore = _gitignore(layout)
        if ignore is not None:
            read, data = ignore
            fsio.write_atomic(layout.root / ".gitignore", data, expected=read)
            written.append(".gitignore")
        # Last: the folder becomes a workspace only once everything above is in place.
        fsio.write_atomic(layout.descriptor, descriptor, expected=None)
        written.append(DESCRIPTOR)
    except fsio.Changed as exc:
        raise UsageError(
            f"{exc.path} appeared while the workspace was being created; nothing was "
            "overwritten: check who else writes there, then run the command again",
            code="E903",
            path=exc.path,
        ) from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise AvailabilityError(
            f"creating the workspace in {layout.root} failed ({reason}) at "
            f"{exc.filename or layout.root}; fix the cause, then run the command again",
            code="E604",
            path=str(exc.filename or layout.root),
        ) from None
    return NewWorkspace(layout.root, workspace_id, name, language, written)
