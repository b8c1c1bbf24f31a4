"""One of the racing processes of ``test_concurrency``: random operations on one workspace.

``python worker.py WS SEED COUNT LOG WAIT``: COUNT operations drawn from
consolidate, refresh, decide, save and an operator's edit of the source draft,
each through the real entry point (CLI, or the library for save).  ``WAIT`` is
the ``--wait`` seconds (0: fail fast).  Every event goes to LOG as one JSON
line with a CLOCK_MONOTONIC timestamp (one clock for all processes): each
operation's begin and end, each acquisition and release of the archive lock,
and each managed filesystem operation (the fsio hook).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from evidence_tool import fsio
from evidence_tool.archive.lock import ArchiveLock
from evidence_tool.errors import LockHeldError

LAB = "evidence/source/lab-handbook.md"


class Log:
    def __init__(self, path: str) -> None:
        self.fh = open(path, "a", buffering=1)  # noqa: SIM115 -- one line per event

    def __call__(self, kind: str, **fields: Any) -> None:
        record = {"t": time.monotonic_ns(), "pid": os.getpid(), "kind": kind, **fields}
        self.fh.write(json.dumps(record) + "\n")


def instrument(log: Log) -> None:
    acquire, release = ArchiveLock.acquire, ArchiveLock.release

    def logged_acquire(self: ArchiveLock) -> ArchiveLock:
        log("attempt", command=self.command, wait=self.wait)
        try:
            out = acquire(self)
        except LockHeldError:
            log("refused", command=self.command)
            raise
        log("acquired", command=self.command)
        return out

    def logged_release(self: ArchiveLock) -> None:
        if self.fd is not None:
            log("released", command=self.command)
        release(self)

    ArchiveLock.acquire = logged_acquire  # type: ignore[method-assign]
    ArchiveLock.release = logged_release  # type: ignore[method-assign]
    fsio.set_hook(
        lambda op, path, phase: log("io", op=op, path=path) if phase == "before" else None
    )


def cli(argv: list[str]) -> tuple[int, str | None]:
    from evidence_tool.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    try:
        errors = json.loads(out.getvalue())["errors"]
    except (ValueError, KeyError):
        return code, "no-json"
    return code, errors[0]["code"] if errors else None


def run(op: str, ws: Path, wait: float, rng: random.Random) -> tuple[int, str | None]:
    tail = ["--workspace-root", str(ws), "--json", "--wait", str(wait)]
    if op in ("consolidate", "refresh"):
        return cli(["workspace", "evidence", op, *tail])
    if op == "decide":
        registry = json.loads((ws / "evidence/.local/sources.json").read_text())
        pending = [r for r in registry["sources"].values() if r.get("comparison")]
        if not pending:
            return cli(["workspace", "evidence", "consolidate", *tail])
        record = rng.choice(pending)
        argv = ["workspace", "evidence", "decide", "--source-id", record["source_id"]]
        argv += ["--revision", record["comparison"]["revision"]]
        return cli([*argv, "--decision", rng.choice(["keep", "replace"]), *tail])
    if op == "edit-draft":  # the operator edits the source document (no lock: not ours)
        path = ws / LAB
        text = path.read_text()
        swap = ("are falsely high", "are falsely raised")
        path.write_text(text.replace(*swap) if swap[0] in text else text.replace(*swap[::-1]))
        return 0, None
    return save(ws, wait, rng)


def save(ws: Path, wait: float, rng: random.Random) -> tuple[int, str | None]:
    import dataclasses

    from evidence_tool.archive.edits import ArchiveEditor
    from evidence_tool.archive.local import LocalEvidenceArchive
    from evidence_tool.errors import EvidenceError

    editor = ArchiveEditor(LocalEvidenceArchive(ws, wait=wait))
    try:
        working = editor.get(rng.choice(["evidence:clinical:drg", "evidence:admission-date"]))
        assert working.unit is not None
        title = working.unit.title
        title = title[:-2] if title.endswith(" *") else title + " *"
        editor.save(dataclasses.replace(working.unit, title=title), working.file_hash, "racer")
    except EvidenceError as exc:
        return exc.exit_code, exc.code
    return 0, None


def main() -> None:
    ws, seed, count, log_path, wait = sys.argv[1:6]
    log = Log(log_path)
    instrument(log)
    rng = random.Random(int(seed))
    ops = ["consolidate", "refresh", "decide", "save", "edit-draft"]
    for n in range(int(count)):
        op = rng.choice(ops)
        log("begin", op=op, n=n)
        code, error = run(op, Path(ws), float(wait), rng)
        log("end", op=op, n=n, exit=code, error=error)


if __name__ == "__main__":
    main()
