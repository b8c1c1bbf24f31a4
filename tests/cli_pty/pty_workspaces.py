"""Workspaces for the terminal tests, built once per session per size.

A module of its own name (not conftest.py): ``from conftest import`` resolves to
whichever conftest the run imported first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ptyrun import piped

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate


@dataclass(frozen=True)
class Templates:
    """``fresh``: N generated units, never consolidated (consolidate has all to do).
    ``ready``: the same consolidated, one unit then deleted (``deleted``) and consolidated
    again, and refreshed: one source comparison pending.  ``present``: a unit's id."""

    units: int
    fresh: Path
    ready: Path
    deleted: str
    present: str

    def pending(self) -> tuple[str, str]:
        """(source id, revision) of the comparison ``ready`` holds."""
        registry = json.loads((self.ready / "evidence/.local/sources.json").read_text())
        record = next(r for r in registry["sources"].values() if r.get("comparison"))
        return record["source_id"], record["comparison"]["revision"]


def build(root: Path, units: int) -> Templates:
    fresh = generate(units, root / "fresh", seed=units)
    # The drafts repeat curated units' ids (refresh benchmarks); here their units are new,
    # so that replace adopts them.
    for draft in (fresh / "evidence/source").glob("*.md"):
        draft.write_text(draft.read_text().replace("id: evidence:bench:", "id: evidence:draft:"))
    ready = root / "ready"
    shutil.copytree(fresh, ready)
    first, second = sorted((ready / "evidence/curated/glossary").glob("*.md"))[:2]
    deleted, present = (unit_id(p) for p in (first, second))
    step(ready, "consolidate")
    first.unlink()
    step(ready, "consolidate")
    step(ready, "refresh")
    # A Git worktree, as a workspace is kept (git-commands and status read it).
    subprocess.run(["git", "init", "-q", "--template=", str(ready)], check=True)
    return Templates(units, fresh, ready, deleted, present)


def step(ws: Path, command: str) -> None:
    done = piped(["workspace", "evidence", command], ws)
    assert done.exit == 0, done.where()


def unit_id(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("id: "):
            return line[4:].strip()
    raise AssertionError(f"{path}: no id")


# Never changed in place: objects are written once under their hash, curated files are
# replaced by a rename (fsio.write_atomic).  A copy links them instead of copying: a
# large workspace's copy is then mostly its small managed files.
_LINKED = ("evidence/.local/objects/", "evidence/curated/")


def copy(template: Path, dest: Path) -> Path:
    """A run's own copy of a template (the same path for its piped and terminal runs)."""
    if dest.exists():
        shutil.rmtree(dest)
    top = str(template) + os.sep

    def place(src: str, dst: str) -> object:
        if src.removeprefix(top).startswith(_LINKED):
            return os.link(src, dst)
        return shutil.copy2(src, dst)

    shutil.copytree(template, dest, symlinks=True, copy_function=place)
    return dest
