"""Backends that activate a snapshot into a retrieval index: ``none`` and ``command`` here.

An activation callable raises on failure; the archive then keeps the candidate
pending and the previous active revision selected.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from evidence_tool import fsio
from evidence_tool.activation.cache import write_jsonl
from evidence_tool.activation.protocol import Backend
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import ActivationError, DescriptorError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:
    import subprocess


class CommandBackend:
    """Runs a program with EVIDENCE_REVISION, EVIDENCE_WORKSPACE_ROOT and EVIDENCE_CORPUS."""

    def __init__(self, layout: Layout, command: list[str], timeout_s: float = 300.0) -> None:
        self.layout = layout
        self.command = command
        self.timeout_s = timeout_s

    def __call__(self, snapshot: Snapshot) -> None:
        folder = ensure_cache(self.layout) / "corpus"
        corpus = folder / f"{snapshot.revision}.jsonl"
        # One corpus is kept (the last candidate's, for inspection), not one per revision.
        for old in folder.glob("*.jsonl") if folder.is_dir() else ():
            if old != corpus:
                fsio.unlink(old, missing_ok=True)
        write_jsonl(corpus, snapshot.records())
        env = {
            **os.environ,
            "EVIDENCE_REVISION": snapshot.revision,
            "EVIDENCE_WORKSPACE_ROOT": str(self.layout.root),
            "EVIDENCE_CORPUS": str(corpus),
        }
        import subprocess  # a command backend's only: not loaded by every consolidate

        try:
            # Its own session (process group), so a timeout stops the program and
            # everything it started, not only the direct child: a leftover indexer
            # must not keep writing after activation was declared failed.
            proc = subprocess.Popen(
                self.command,
                env=env,
                cwd=self.layout.root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ActivationError(f"activation command cannot run: {exc.strerror}") from None
        try:
            _, stderr = proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise ActivationError(
                f"activation command timed out after {self.timeout_s:g} s"
            ) from None
        except BaseException:
            _kill_group(proc)
            raise
        if proc.returncode != 0:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise ActivationError(
                f"activation command exited {proc.returncode}"
                + (": " + " | ".join(tail) if tail else "")
            )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Grandchildren may hold the pipes open: do not wait for them, only for the child.
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait()


COMMAND_TIMEOUT_S = 300
QDRANT_TIMEOUT_S = 30


def effective_activation(settings: JsonObject, layout: Layout) -> JsonObject:
    """``evidence.activation`` with the defaults each backend applies filled in.

    One place for the defaults, used to build the backend and by ``config show``.
    JSON boundary: the installation's section as written, every key kept for ``config show``.
    """
    out: JsonObject = {"kind": settings.get("kind", "sqlite"), **settings}
    if out["kind"] == "command":
        out.setdefault("timeout_s", COMMAND_TIMEOUT_S)
    elif out["kind"] == "qdrant":
        out.setdefault("collection", "evidence")
        if out.get("url"):
            out.setdefault("timeout_s", QDRANT_TIMEOUT_S)
        else:
            out.setdefault("path", str(layout.cache / "qdrant"))
    return out


def _opt_str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) and value else None


def _opt_num(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ActivationSettings:
    """``evidence.activation``, read once from the installation (defaults applied)."""

    kind: str = "sqlite"  # none, sqlite, command, qdrant; another is refused by backend_for
    command: tuple[str, ...] = ()  # kind command: the program and its arguments
    timeout_s: float | None = None  # command, qdrant server: None is the backend's default
    collection: str = "evidence"  # qdrant
    url: str | None = None  # qdrant server; None: local mode in ``path``
    path: str | None = None  # qdrant local mode
    api_key_env: str | None = None  # qdrant server: the variable holding the API key
    embedder: str | None = None  # qdrant: module:factory of the sparse/dense embedder

    @classmethod
    def from_section(cls, section: JsonObject, layout: Layout) -> ActivationSettings:
        """The installation's section as written (JSON boundary: the YAML file)."""
        return cls.from_json(effective_activation(section, layout))

    @classmethod
    def from_json(cls, raw: JsonObject) -> ActivationSettings:
        command = raw.get("command")
        collection = raw.get("collection")
        return cls(
            str(raw.get("kind", "sqlite")),
            tuple(str(c) for c in command) if isinstance(command, list) else (),
            _opt_num(raw.get("timeout_s")),
            collection if isinstance(collection, str) and collection else "evidence",
            _opt_str(raw.get("url")),
            _opt_str(raw.get("path")),
            _opt_str(raw.get("api_key_env")),
            _opt_str(raw.get("embedder")),
        )

    def to_json(self) -> JsonObject:  # JSON boundary: the section's keys, unset ones left out
        out: JsonObject = {"kind": self.kind, "collection": self.collection}
        if self.command:
            out["command"] = list(self.command)
        optional: dict[str, str | float | None] = {
            "timeout_s": self.timeout_s,
            "url": self.url,
            "path": self.path,
            "api_key_env": self.api_key_env,
            "embedder": self.embedder,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def local_copy(self, path: str) -> ActivationSettings:
        """These settings for a throw-away local collection at ``path`` (eval --compare)."""
        return replace(self, url=None, path=path, collection="evidence")


def activation_settings(
    settings: ActivationSettings | JsonObject, layout: Layout
) -> ActivationSettings:
    """Typed settings from either form (a caller may still hand the section as written)."""
    if isinstance(settings, ActivationSettings):
        return settings
    return ActivationSettings.from_section(settings, layout)


def backend_for(
    settings: ActivationSettings | JsonObject,
    layout: Layout,
    embedding: JsonObject | None = None,
) -> Backend | None:
    """The backend for the installation's ``evidence.activation`` settings (None: ``none``);
    ``embedding`` is the ``evidence.embedding`` section as written (the embedding package
    reads it; dense vectors for the sqlite index)."""
    typed = activation_settings(settings, layout)
    kind = typed.kind
    if kind == "none":
        return None
    if kind == "sqlite":
        from evidence_tool.activation.sqlite_index import SqliteBackend
        from evidence_tool.embedding import embedder_for

        return SqliteBackend(layout, embedder_for(embedding or {}))
    if kind == "command":
        if not typed.command:
            raise DescriptorError("evidence.activation.command is required for kind 'command'")
        timeout = typed.timeout_s if typed.timeout_s is not None else COMMAND_TIMEOUT_S
        return CommandBackend(layout, list(typed.command), timeout)
    if kind == "qdrant":
        from evidence_tool.activation.qdrant_index import QdrantBackend
        from evidence_tool.embedding import embedder_for

        return QdrantBackend(layout, typed, dense=embedder_for(embedding or {}))
    raise DescriptorError(f"evidence.activation.kind '{kind}' is not available in this build")
