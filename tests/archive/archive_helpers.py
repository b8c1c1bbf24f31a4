"""Helpers for the archive contract tests (SPEC.md 5, 8 command backend, 9, 10).

Named ``archive_helpers`` (not ``helpers``) because test folders have no
``__init__.py``: the module name must be unique on ``sys.path``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import scan_curated

REPO = Path(__file__).resolve().parents[2]
ACTOR = "alice"
UNIT = "evidence:admission-date"
UNIT_PATH = "evidence/curated/domain/admission-date.md"
SOURCE_ID = hashlib.sha256(b"lab-handbook").hexdigest()
EXCERPT = "Every official report uses the SDO date."
SOURCE_TEXT = (
    "# Admissions handbook\n\n"
    "Admissions are counted by the administrative date of the SDO record.\n"
    f"{EXCERPT}\n"
)


# -- the tree, byte for byte ---------------------------------------------------------


def tree(root: Path, *, lock_content: bool = True) -> dict[str, str]:
    """Every entry under ``root``: files by sha256 of their bytes (no mtimes), folders,
    symlinks and special files by kind.  ``lock_content=False`` keeps the lock file's
    existence but not its holder note (rewritten by every locked operation)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "symlink -> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            elif not path.is_file():
                out[rel] = "special"
            elif rel == ".evidence-archive.lock" and not lock_content:
                out[rel] = "lock"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def managed(root: Path) -> dict[str, str]:
    """The managed files of SPEC.md 4: ``evidence/.local/`` and ``local-manifest.yaml``."""
    return {
        k: v
        for k, v in tree(root).items()
        if k.startswith("evidence/.local") or k == "evidence/local-manifest.yaml"
    }


class WriteRecorder:
    """An ``fsio`` hook that records every managed write operation."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, op: str, path: str, phase: str) -> None:
        if phase == "before":
            self.calls.append((op, path))

    def paths(self, root: Path) -> set[str]:
        return {Path(p).relative_to(root).as_posix() for _, p in self.calls}


# -- working files -------------------------------------------------------------------


def unit_path(root: Path, unit_id: str) -> Path:
    for f in scan_curated(Layout.at(root)).files:
        if f.result.unit_id == unit_id:
            return f.path
    raise AssertionError(f"no curated file holds {unit_id}")


def content_hash(root: Path, unit_id: str) -> str:
    for f in scan_curated(Layout.at(root)).files:
        if f.unit is not None and f.unit.id == unit_id:
            return f.unit.content_hash
    raise AssertionError(f"no valid curated file holds {unit_id}")


def edit_visibly(path: Path, words: str = "Every official report") -> None:
    """A change of what the unit says (its content hash changes)."""
    data = path.read_bytes()
    assert words.encode() in data, f"{path.name} has no {words!r}"
    path.write_bytes(data.replace(words.encode(), b"Each audited report", 1))


def retitle(path: Path, suffix: str = " (revised)") -> None:
    """A visible change that works on any unit: the title line gets a suffix."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("# "))
    lines[i] += suffix
    path.write_text("\n".join(lines), encoding="utf-8")


# -- staged document provenance (how 'decide replace' and migration stage it) ---------


def write_source(root: Path, text: str = SOURCE_TEXT, source_id: str = SOURCE_ID) -> str:
    """A normalized acquired source at ``evidence/source/acquired/<id>/<sha256>.md``."""
    data = text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    rel = f"evidence/source/acquired/{source_id}/{digest}.md"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rel


def stage_document(
    root: Path,
    unit_id: str = UNIT,
    *,
    excerpts: tuple[str, ...] = (EXCERPT,),
    text: str = SOURCE_TEXT,
    source_id: str = SOURCE_ID,
    actor: str = "refiner",
) -> dict[str, Any]:
    """Stage a document declaration for the unit's current content; returns the provenance."""
    rel = write_source(root, text, source_id)
    provenance = {
        "kind": "document",
        "source_id": source_id,
        "source_path": rel,
        "source_hash": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "excerpts": list(excerpts),
        "declared_at": "2026-11-29T09:00:00Z",
        "actor": actor,
    }
    archive = LocalEvidenceArchive(root)
    archive.merge_staged(
        {
            "declarations": {
                unit_id: {"content_hash": content_hash(root, unit_id), "provenance": provenance}
            }
        }
    )
    return provenance


def stage_review_item(root: Path, unit_id: str = UNIT, message: str = "check") -> dict[str, Any]:
    """A review item raised on the unit's current content (as a retracted source raises it)."""
    item = {
        "code": "source-retracted",
        "message": message,
        "raised_by": "registry",
        "raised_at": "2026-11-29T09:30:00Z",
        "content_hash": content_hash(root, unit_id),
    }
    LocalEvidenceArchive(root).merge_staged({"review_items": {unit_id: [item]}})
    return item


def entry(root: Path, unit_id: str = UNIT) -> dict[str, Any]:
    """The unit's entry in the newest snapshot."""
    snap = LocalEvidenceArchive(root).newest_snapshot()
    assert snap is not None
    found = snap.entry(unit_id)
    assert found is not None, f"{unit_id} is not in {snap.revision[:12]}"
    return found.raw


# -- the CLI ---------------------------------------------------------------------------


def write_installation(
    path: Path, *, command: list[str] | None = None, registry: Path | None = None
) -> Path:
    """An installation descriptor: a ``command`` activation backend and/or a registry root."""
    lines = ["# installation descriptor", "installation_version: 1"]
    if registry is not None:
        lines.append(f"workspace_registry_root: {json.dumps(str(registry))}")
    if command is not None:
        lines += [
            "evidence:",
            "  activation:",
            "    kind: command",
            f"    command: {json.dumps(command)}",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


PYTHON = sys.executable
