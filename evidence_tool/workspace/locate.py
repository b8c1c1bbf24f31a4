"""Which folder is the workspace: found as Git finds its repository (SPEC.md 4, 10).

A workspace is a folder holding ``workspace.yaml``. Without ``--workspace-root``
or ``--workspace`` the nearest such folder at or above the current folder is
used; when there is none, or a named root has no descriptor, the command stops
with E603 naming the absolute folder it tried, never reading an empty archive
as a valid one (a CI job in the wrong folder must fail, not print "ok").
"""

from __future__ import annotations

import os
from pathlib import Path

from evidence_tool.errors import AvailabilityError, UsageError
from evidence_tool.workspace.descriptor import (
    load_installation,
    load_workspace_descriptor,
    workspace_root_from_installation,
)
from evidence_tool.workspace.layout import DESCRIPTOR, nearest_workspace

_WAYS_OUT = "pass --workspace-root PATH, or create a workspace with 'tht workspace new"


def find_workspace(start: str | os.PathLike[str]) -> Path:
    """The nearest folder at or above ``start`` that holds ``workspace.yaml`` (E603 if none)."""
    start = Path(os.path.abspath(start))
    found = nearest_workspace(start)
    if found is not None:
        return found
    raise AvailabilityError(
        f"no workspace here: neither {start} nor any folder above it holds {DESCRIPTOR}; "
        f"run the command inside a workspace, {_WAYS_OUT} --id ID --language LANG'",
        code="E603",
        path=str(start),
    )


def require_workspace(root: str | os.PathLike[str]) -> Path:
    """``root`` itself as a workspace: an existing folder with a descriptor (E603 otherwise)."""
    root = Path(os.path.abspath(root))
    if not root.is_dir():
        # Otherwise readers report an empty archive and writers a lock error (E303).
        raise AvailabilityError(
            f"the workspace root {root} does not exist or is not a folder; {_WAYS_OUT} "
            f"{root} --id ID --language LANG'",
            code="E603",
            path=str(root),
        )
    if not os.path.lexists(root / DESCRIPTOR):
        above = nearest_workspace(root.parent)
        way_out = (
            f"the workspace above it is {above}: pass --workspace-root {above}"
            if above
            else f"{_WAYS_OUT} {root} --id ID --language LANG'"
        )
        raise AvailabilityError(
            f"{root} is not a workspace: {root / DESCRIPTOR} does not exist "
            f"(a workspace has a descriptor); {way_out}",
            code="E603",
            path=str(root / DESCRIPTOR),
        )
    return root


def resolve_workspace(
    workspace_root: str | None,
    workspace_id: str | None,
    installation: str | None,
    cwd: str | os.PathLike[str] | None = None,
) -> Path:
    """The workspace root from --workspace-root, --installation + --workspace, or ``cwd`` upwards.

    Every descriptor in play is validated here, so a misspelt key fails every
    command with its path (E902) and a missing one is E603.
    """
    if workspace_root and workspace_id:
        raise UsageError("give either --workspace-root or --workspace, not both")
    if installation:
        load_installation(installation)
    if workspace_root:
        root = require_workspace(workspace_root)
    elif workspace_id:
        if not installation:
            raise UsageError("--workspace ID needs --installation FILE (or THT_INSTALLATION)")
        root = require_workspace(workspace_root_from_installation(installation, workspace_id))
    else:
        root = find_workspace(os.getcwd() if cwd is None else cwd)
    load_workspace_descriptor(root)
    return root
