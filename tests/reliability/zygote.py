"""A fork server for the crash harness: import the package once, fork a child per run.

Started by ``crashkit.Zygote`` with ``PYTHONPATH`` naming the tree under test.
Each request (one JSON line on stdin) names an operation, a run folder and a
fault mode; the zygote forks, the child installs the fault hook in
``evidence_tool.fsio`` and runs the operation, and the zygote answers with the
child's exit status (negative: killed by that signal).  Forking an interpreter
that has already imported everything makes a run cost milliseconds instead of
the half second of a fresh ``python`` process, which is what lets CI try every
crash point.

Modes (the hook counts managed operations by their "before" call, from 1):

- ``count``: no fault; the trace lists every operation.
- ``kill``: ``os.kill(os.getpid(), SIGKILL)`` at operation ``k``, ``phase``
  before or after it, or (``phase="step"``) at a step inside a call: operations
  named ``step:<name>`` in the trace.
- ``error``: operation ``k`` raises ``OSError`` (EIO for fsync, ENOSPC for
  write, EACCES for replace); the trace lists the operations that followed.
- ``raise``: an exception that is no ``OSError`` (``InjectedFault``, a defect's
  kind) is raised at point ``k``, ``phase`` as for ``kill``.  With ``callbacks``
  (this mode and ``count``), the calls the library makes back into presentation
  and activation count as points too, named ``callback:<name>``: every progress
  report (a bar forced on for any length), the activation of a candidate (the
  index update), and the reporter writing the outcome.
- ``killparse``: SIGKILL once the run's parse workers are at work (their pids go
  to the file ``pids``).
- ``powerloss``: at the ``k``-th fsync, rewrite the tree to what a power cut
  would leave (``powerloss.PowerLoss``, ``variant`` kept/dropped/garbled), then
  SIGKILL.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import crash_workload
import powerloss

from evidence_tool import fsio

ERRNO = {"fsync": errno.EIO, "write": errno.ENOSPC, "replace": errno.EACCES}


class InjectedFault(RuntimeError):
    """What mode ``raise`` raises: an exception no code path expects."""


class Tracer:
    """The fault hook of one child: counts operations and injects the requested fault."""

    def __init__(self, req: dict[str, Any]) -> None:
        self.mode = req["mode"]
        self.k = int(req.get("k", 0))
        self.phase = req.get("phase", "before")
        self.ops: list[list[Any]] = []  # [op, path, completed]; steps as "step:<name>"
        self.open: list[int] = []  # numbers of the calls begun and not yet completed
        self.failed_at: int | None = None
        self.fsyncs = 0
        self.loss = (
            powerloss.PowerLoss(Path(req["run_dir"]) / "ws", req["variant"], int(req["seed"]))
            if self.mode == "powerloss"
            else None
        )

    def __call__(self, op: str, path: str, phase: str) -> None:
        if self.loss is not None:
            self.loss.observe(op, path, phase)
        if phase == "before":
            self.ops.append([op, path, False])
            self.open.append(len(self.ops))
            n = len(self.ops)
        elif phase == "after":
            # The call that completes is the innermost open one (a missing file's unlink
            # raises and never completes); steps inside it come after it in ``ops``.
            n = self.open.pop() if self.open else len(self.ops)
            self.ops[n - 1][2] = True
        else:  # a step inside the open call: a crash point of its own
            self.ops.append([f"step:{op}", path, True])
            n = len(self.ops)
        if self.mode == "kill" and n == self.k and phase == self.phase:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "raise" and n == self.k and phase == self.phase:
            self.failed_at = n
            raise InjectedFault(f"injected at {op} {phase} ({n})")
        if self.mode == "powerloss" and phase == "before" and op == "fsync":
            self.fsyncs += 1
            if self.fsyncs == self.k:
                assert self.loss is not None
                fsio.set_hook(None)
                self.loss.crash()
                os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "error" and n == self.k and phase == "before" and self.failed_at is None:
            self.failed_at = n
            code = ERRNO[op]
            raise OSError(code, os.strerror(code), path)

    def callback(self, name: str) -> None:
        """A call back into presentation or activation code: one point of its own (phase
        ``step``), struck before the callback runs."""
        self.ops.append([f"callback:{name}", "", True])
        n = len(self.ops)
        if n == self.k and self.phase == "step" and self.mode in ("kill", "raise"):
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            self.failed_at = n
            raise InjectedFault(f"injected in the {name} callback ({n})")


def install_callbacks(tracer: Tracer) -> None:
    """Route the callbacks the library makes through ``tracer`` (mode docstring): wrapped,
    not replaced, so each still does its work after the tracer saw it."""
    from evidence_tool.archive import consolidate
    from evidence_tool.archive.port import as_port
    from evidence_tool.cli import output

    def bar(cls: type[output.StderrProgress], min_total: int = 0) -> output.StderrProgress:
        return cls(0)  # drawn whatever stderr is and however short the work

    draw = output.StderrProgress._draw

    def traced_draw(self: output.StderrProgress, label: str, done: int, total: int) -> None:
        tracer.callback("progress")
        draw(self, label, done, total)

    output.StderrProgress.for_terminal = classmethod(bar)  # type: ignore[assignment,method-assign]
    output.StderrProgress._draw = traced_draw  # type: ignore[method-assign]

    activation = consolidate.activation

    def traced_activate(core: Any, actor: str, candidate: Any, act: Any, result: Any) -> Any:
        def traced(snapshot: Any) -> None:
            tracer.callback("activate")
            act(snapshot)

        return activation(core, actor, candidate, as_port(traced), result)

    consolidate.activation = traced_activate

    reporter_for = output.reporter_for

    class Traced:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def report(self, *args: Any) -> None:
            tracer.callback("report")
            self.inner.report(*args)

        def failure(self, *args: Any) -> None:
            tracer.callback("report")
            self.inner.failure(*args)

    output.reporter_for = lambda fmt: Traced(reporter_for(fmt))  # type: ignore[assignment]


def child(req: dict[str, Any]) -> None:
    """The forked child: redirect output, install the hook, run, exit (never returns)."""
    code = 70
    try:
        # A process group of its own: whatever it starts (parse workers) is found by it,
        # so the harness can check that nothing of a killed run lives on.
        os.setpgid(0, 0)
        if req["mode"] == "killparse":
            threading.Thread(target=_kill_amid_workers, args=(req,), daemon=True).start()
        for fd, name in ((1, "stdout"), (2, "stderr")):
            out = os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, fd)
            os.close(out)
        for key, value in req.get("env", {}).items():
            if value:
                os.environ[key] = value
            else:
                os.environ.pop(key, None)
        tracer = Tracer(req)
        if req.get("callbacks"):
            install_callbacks(tracer)
        fsio.set_hook(tracer)
        code = crash_workload.run_operation(req["op"], Path(req["run_dir"]))
        fsio.set_hook(None)
        trace = {"ops": tracer.ops, "failed_at": tracer.failed_at, "exit": code}
        with open(req["trace"], "w") as fh:
            json.dump(trace, fh)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        try:
            raw = Path(f"/proc/{name}/stat").read_text() if name.isdigit() else ""
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split() if raw else []
        if fields and fields[0] not in ("Z", "X") and int(fields[1]) == pid:
            out.append(int(name))
    return out


def _kill_amid_workers(req: dict[str, Any]) -> None:
    """Mode ``killparse``: SIGKILL this run once its parse workers are at work, after
    writing their pids to ``req["pids"]``; never, if no worker starts within a minute."""
    me = os.getpid()
    for _ in range(60_000):
        workers = _children(me)
        if workers:
            time.sleep(0.02)  # let them take their first chunks
            Path(req["pids"]).write_text(json.dumps(_children(me) or workers))
            os.kill(me, signal.SIGKILL)
        time.sleep(0.001)


def warm() -> None:
    """Import what the operations use before forking, so no child pays for it."""
    import evidence_tool.activation.sqlite_index
    import evidence_tool.archive.edits
    import evidence_tool.archive.integrity
    import evidence_tool.cli.main
    import evidence_tool.migrate
    import evidence_tool.session
    import evidence_tool.sources  # noqa: F401
    from evidence_tool.cli.main import main as cli
    from evidence_tool.unit import parse_unit
    from evidence_tool.workspace.descriptor import _validator, load_workspace_descriptor

    # Caches filled lazily (compiled JSON Schemas above all) would otherwise be rebuilt
    # by every child: fill them here, once.
    for schema in ("workspace.schema.json", "installation.schema.json"):
        _validator(schema)
    load_workspace_descriptor(crash_workload.FIXTURE)
    for path in sorted((crash_workload.FIXTURE / "evidence/curated").rglob("*.md")):
        parse_unit(path.read_bytes())
    with open(os.devnull, "w") as sink:
        saved = sys.stdout
        sys.stdout = sink
        try:
            cli(["evidence", "validate", str(crash_workload.FIXTURE), "--json"])
        except SystemExit:
            pass
        finally:
            sys.stdout = saved


def main() -> None:
    if os.environ.get("THT_CRASH_FSYNC") != "1":
        # The harness kills processes, it does not cut power: the page cache survives a
        # SIGKILL, so fsync changes nothing it can observe and costs most of the time on
        # this class of disk.  The power-loss mode models fsync from the hook's calls.
        os.fsync = lambda fd: None
    warm()
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            child(req)
        with contextlib.suppress(OSError):  # the child does it too: whoever is first
            os.setpgid(pid, pid)
        _, status = os.waitpid(pid, 0)
        reply = {"status": os.waitstatus_to_exitcode(status), "pid": pid}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
