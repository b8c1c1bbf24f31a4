"""Which workspaces one server serves, and the settings it serves them with.

With ``--workspace-root`` or ``--workspace`` one workspace; else, with an installation
that sets ``workspace_registry_root``, every workspace under its ``repo/`` folder; else the
workspace at or above the current folder (SPEC.md 14).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from evidence_tool.activation.fusion import Retrieval
from evidence_tool.errors import NotReadyError, UnknownNameError, UsageError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.descriptor import (
    Installation,
    load_installation,
    load_workspace_descriptor,
)
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.locate import require_workspace, resolve_workspace

DEFAULT_TOKEN_ENV = "THT_SERVE_TOKEN"


@dataclass(frozen=True)
class ServedWorkspace:
    """One workspace as the server reads it: its name (the descriptor's id), root and the
    installation's sections the readers need."""

    name: str
    root: Path
    activation: JsonObject
    embedding: JsonObject
    search_path: tuple[str, ...]
    # workspace.yaml's adopted search settings (eval --adopt), decoded once when the
    # server starts, not per request: the server ranks as `tht ... search` does.
    retrieval: Retrieval = field(default_factory=Retrieval)

    @property
    def layout(self) -> Layout:
        return Layout.at(self.root)


@dataclass(frozen=True)
class ServeSettings:
    workspaces: tuple[ServedWorkspace, ...]
    token_env: str

    def token(self) -> str | None:
        """The bearer token every request must carry, read from the environment now."""
        return os.environ.get(self.token_env) or None

    def workspace(self, name: str | None) -> ServedWorkspace:
        """The workspace ``name`` names; without a name, the only one served."""
        if name is None or name == "":
            if len(self.workspaces) == 1:
                return self.workspaces[0]
            names = ", ".join(w.name for w in self.workspaces)
            raise UsageError(f"this server serves several workspaces: name one ({names})")
        for ws in self.workspaces:
            if ws.name == name:
                return ws
        names = ", ".join(w.name for w in self.workspaces)
        raise UnknownNameError(f"no workspace '{name}' is served here; the workspaces: {names}")


def _search_path(inst: Installation) -> tuple[str, ...]:
    found = inst.section("catalog").get("search_path")
    if isinstance(found, list) and all(isinstance(s, str) for s in found) and found:
        return tuple(str(s) for s in found)
    return ("public",)


def _served(root: Path, inst: Installation) -> ServedWorkspace:
    descriptor = load_workspace_descriptor(root)
    return ServedWorkspace(
        descriptor.id,
        root,
        inst.section("activation"),
        inst.section("embedding"),
        _search_path(inst),
        Retrieval.from_json(descriptor.retrieval),
    )


def serve_settings(
    installation: str | None,
    workspace_root: str | None = None,
    workspace_id: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> ServeSettings:
    """The workspaces and token variable of one server (see the module's docstring)."""
    inst = load_installation(installation)
    token_env = inst.section("serve").get("token_env")
    env = token_env if isinstance(token_env, str) and token_env else DEFAULT_TOKEN_ENV
    registry = inst.registry_root
    if workspace_root or workspace_id or not registry:
        root = resolve_workspace(workspace_root, workspace_id, installation, cwd)
        return ServeSettings((_served(root, inst),), env)
    repo = Path(registry) / "repo"
    roots = sorted(p for p in repo.glob("*") if (p / "workspace.yaml").is_file())
    if not roots:
        raise NotReadyError(
            f"the installation's workspace registry {repo} holds no workspace: create one "
            "with 'tht workspace new' or pass --workspace-root"
        )
    served = [_served(require_workspace(p), inst) for p in roots]
    names = [w.name for w in served]
    if len(set(names)) != len(names):
        raise UsageError(f"two workspaces of {repo} have the same id: {sorted(names)}")
    return ServeSettings(tuple(served), env)
