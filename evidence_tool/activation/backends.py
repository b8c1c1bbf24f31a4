"""Backends that activate a snapshot into a retrieval index: ``none`` and ``command`` here.

An activation callable raises on failure; the archive then keeps the candidate
pending and the previous active revision selected.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

from evidence_tool.activation.cache import ensure_cache, write_jsonl
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import ActivationError, DescriptorError
from evidence_tool.workspace.layout import Layout

Activate = Callable[[Snapshot], None]


class CommandBackend:
    """Runs a program with EVIDENCE_REVISION, EVIDENCE_WORKSPACE_ROOT and EVIDENCE_CORPUS."""

    def __init__(self, layout: Layout, command: list[str], timeout_s: float = 300.0) -> None:
        self.layout = layout
        self.command = command
        self.timeout_s = timeout_s

    def __call__(self, snapshot: Snapshot) -> None:
        corpus = ensure_cache(self.layout) / "corpus" / f"{snapshot.revision}.jsonl"
        write_jsonl(corpus, snapshot.records())
        env = {
            **os.environ,
            "EVIDENCE_REVISION": snapshot.revision,
            "EVIDENCE_WORKSPACE_ROOT": str(self.layout.root),
            "EVIDENCE_CORPUS": str(corpus),
        }
        try:
            proc = subprocess.run(
                self.command,
                env=env,
                cwd=self.layout.root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ActivationError(
                f"activation command timed out after {self.timeout_s:g} s"
            ) from None
        except OSError as exc:
            raise ActivationError(f"activation command cannot run: {exc.strerror}") from None
        if proc.returncode != 0:
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise ActivationError(
                f"activation command exited {proc.returncode}"
                + (": " + " | ".join(tail) if tail else "")
            )


def backend_for(settings: dict[str, Any], layout: Layout) -> Activate | None:
    """The activation callable for the installation's ``evidence.activation`` settings."""
    kind = settings.get("kind", "sqlite")
    if kind == "none":
        return None
    if kind == "sqlite":
        from evidence_tool.activation.sqlite_index import SqliteBackend

        return SqliteBackend(layout)
    if kind == "command":
        command = settings.get("command")
        if not command:
            raise DescriptorError("evidence.activation.command is required for kind 'command'")
        return CommandBackend(layout, list(command), float(settings.get("timeout_s", 300)))
    if kind == "qdrant":
        from evidence_tool.activation.qdrant_index import QdrantBackend

        return QdrantBackend(layout, settings)
    raise DescriptorError(f"evidence.activation.kind '{kind}' is not available in this build")
