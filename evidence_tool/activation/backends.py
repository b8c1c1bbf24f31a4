"""Backends that activate a snapshot into a retrieval index: ``none`` and ``command`` here.

An activation callable raises on failure; the archive then keeps the candidate
pending and the previous active revision selected.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

from evidence_tool import fsio
from evidence_tool.activation.cache import write_jsonl
from evidence_tool.activation.settings import (
    COMMAND_TIMEOUT_S,
    ActivationSettings,
    activation_settings,
    effective_activation,
)
from evidence_tool.archive.port import NONE, ActivationPort, Capabilities
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import ActivationError, DescriptorError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.workspace.cachedir import ensure_cache
from evidence_tool.workspace.layout import Layout

if TYPE_CHECKING:
    import subprocess

__all__ = ["CommandBackend", "backend_for", "effective_activation"]  # the last: its earlier home


class CommandBackend:
    """Runs a program with EVIDENCE_REVISION, EVIDENCE_WORKSPACE_ROOT and EVIDENCE_CORPUS."""

    def __init__(self, layout: Layout, command: list[str], timeout_s: float = 300.0) -> None:
        self.layout = layout
        self.command = command
        self.timeout_s = timeout_s

    @property
    def capabilities(self) -> Capabilities:
        """None: the program is the index's keeper, the archive cannot check it."""
        return NONE

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


def backend_for(
    settings: ActivationSettings | JsonObject,
    layout: Layout,
    embedding: JsonObject | None = None,
) -> ActivationPort | None:
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
