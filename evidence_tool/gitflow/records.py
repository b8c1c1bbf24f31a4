"""The typed results of the Git flow: the evidence tree's Git state and git-commands.

Each record has one ``to_json`` / ``from_json`` pair: ``status --json`` and
``git-commands --json`` print ``to_json`` byte for byte as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from evidence_tool.errors import EvidenceWarning
from evidence_tool.gitflow.roles import Role
from evidence_tool.jsonvalue import JsonObject, JsonValue


def _str(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {value!r}")
    return value


def _opt_str(value: JsonValue) -> str | None:
    return None if value is None else _str(value)


def _strs(value: JsonValue) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {value!r}")
    return tuple(_str(v) for v in value)


def _objects(value: JsonValue) -> list[JsonObject]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"expected a list of objects, got {value!r}")
    return [v for v in value if isinstance(v, dict)]


def warning_to_json(w: EvidenceWarning) -> JsonObject:
    return w.to_dict()


def warning_from_json(data: JsonObject) -> EvidenceWarning:
    line, column = data.get("line"), data.get("column")
    return EvidenceWarning(
        _str(data["message"]),
        _opt_str(data.get("path")),
        line if isinstance(line, int) else None,
        _opt_str(data.get("code")),
        column if isinstance(column, int) else None,
    )


@dataclass(frozen=True, slots=True)
class GitFile:
    """One evidence path in a Git listing; ``change`` is None for untracked files."""

    path: str
    role: Role
    change: str | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {"path": self.path, "role": str(self.role)}
        if self.change is not None:
            out["change"] = self.change
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> GitFile:
        return cls(_str(data["path"]), Role(_str(data["role"])), _opt_str(data.get("change")))


@dataclass(frozen=True, slots=True)
class PartialStage:
    """The two lists of a partial stage (gitflow/status.py's docstring says which is which)."""

    not_staged: tuple[str, ...]
    not_consolidated: tuple[str, ...]

    def to_json(self) -> JsonObject:
        return {"not_staged": [*self.not_staged], "not_consolidated": [*self.not_consolidated]}

    @classmethod
    def from_json(cls, data: JsonObject) -> PartialStage:
        return cls(_strs(data["not_staged"]), _strs(data["not_consolidated"]))


@dataclass(frozen=True, slots=True)
class GitState:
    """The Git state of the evidence tree; ``available`` False carries only a ``note``."""

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

    def to_json(self) -> JsonObject:
        return {
            "available": self.available,
            "note": self.note,
            "repository": self.repository,
            "workspace_path": self.workspace_path,
            "branch": self.branch,
            "head": self.head,
            "staged": [f.to_json() for f in self.staged],
            "modified": [f.to_json() for f in self.modified],
            "untracked": [f.to_json() for f in self.untracked],
            "conflicted": [*self.conflicted],
            "ignored": [*self.ignored],
            "partial_stage": self.partial_stage.to_json() if self.partial_stage else None,
            "clean": self.clean,
            "warnings": [warning_to_json(w) for w in self.warnings],
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> GitState:
        partial, clean, available = data["partial_stage"], data["clean"], data["available"]
        return cls(
            available=available is True,
            note=_opt_str(data["note"]),
            repository=_opt_str(data["repository"]),
            workspace_path=_opt_str(data["workspace_path"]),
            branch=_opt_str(data["branch"]),
            head=_opt_str(data["head"]),
            staged=tuple(GitFile.from_json(f) for f in _objects(data["staged"])),
            modified=tuple(GitFile.from_json(f) for f in _objects(data["modified"])),
            untracked=tuple(GitFile.from_json(f) for f in _objects(data["untracked"])),
            conflicted=_strs(data["conflicted"]),
            ignored=_strs(data["ignored"]),
            partial_stage=PartialStage.from_json(partial) if isinstance(partial, dict) else None,
            clean=clean if isinstance(clean, bool) else None,
            warnings=tuple(warning_from_json(w) for w in _objects(data["warnings"])),
        )


@dataclass(frozen=True, slots=True)
class GitCommands:
    """git-commands: the quoted commands, their steps and the facts they were built from."""

    repository: str
    paths: tuple[str, ...]
    revision: str | None
    pending: str | None
    message: str
    steps: tuple[str, ...]
    commands: tuple[str, ...]
    warnings: tuple[EvidenceWarning, ...]

    def to_json(self) -> JsonObject:
        return {
            "repository": self.repository,
            "paths": [*self.paths],
            "revision": self.revision,
            "pending": self.pending,
            "message": self.message,
            "steps": [*self.steps],
            "commands": [*self.commands],
            "warnings": [warning_to_json(w) for w in self.warnings],
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> GitCommands:
        return cls(
            _str(data["repository"]),
            _strs(data["paths"]),
            _opt_str(data["revision"]),
            _opt_str(data["pending"]),
            _str(data["message"]),
            _strs(data["steps"]),
            _strs(data["commands"]),
            tuple(warning_from_json(w) for w in _objects(data["warnings"])),
        )
