"""The typed results of the Git flow: the evidence tree's Git state and git-commands.

Each record's JSON comes from its fields (evidence_tool/record.py): ``status --json`` and
``git-commands --json`` print ``to_json`` byte for byte as before.
"""

from __future__ import annotations

from evidence_tool.errors import EvidenceWarning
from evidence_tool.gitflow.roles import Role
from evidence_tool.record import Record


class GitFile(Record, frozen=True, omit_defaults=True):
    """One evidence path in a Git listing; ``change`` is None for untracked files."""

    path: str
    role: Role
    change: str | None = None


class PartialStage(Record, frozen=True):
    """The two lists of a partial stage (gitflow/status.py's docstring says which is which)."""

    not_staged: tuple[str, ...]
    not_consolidated: tuple[str, ...]


class GitState(Record, frozen=True):
    """The Git state of the evidence tree; ``available`` False carries only a ``note``."""

    _warning_fields = ("warnings",)

    available: bool
    note: str | None = None
    repository: str | None = None
    workspace_path: str | None = None
    branch: str | None = None
    head: str | None = None
    staged: tuple[GitFile, ...] = ()
    modified: tuple[GitFile, ...] = ()
    untracked: tuple[GitFile, ...] = ()
    conflicted: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    partial_stage: PartialStage | None = None
    clean: bool | None = None
    warnings: tuple[EvidenceWarning, ...] = ()

    @classmethod
    def unavailable(cls, note: str) -> GitState:
        return cls(False, note)


class GitCommands(Record, frozen=True):
    """git-commands: the quoted commands, their steps and the facts they were built from."""

    _warning_fields = ("warnings",)

    repository: str
    paths: tuple[str, ...]
    revision: str | None
    pending: str | None
    message: str
    steps: tuple[str, ...]
    commands: tuple[str, ...]
    warnings: tuple[EvidenceWarning, ...]
