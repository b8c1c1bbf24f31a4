"""Presentation code cannot end a command: a progress bar fed any sequence a scan may
send, a terminal that fails under it, and a reporter that raises (issue 27).

In-process against a real pseudo-terminal as stderr; the failures are injected into the
presentation layer only (the library under it runs for real)."""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import invoke

from evidence_tool.cli import output
from evidence_tool.cli.output import StderrProgress


class Terminal:
    """stderr on a pseudo-terminal; ``drawn()`` reads what reached its other end."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        self.stream = open(slave, "w", encoding="utf-8")  # noqa: SIM115 -- closed by close()
        os.set_blocking(self.master, False)

    def attach(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make it stderr: in the test's body, as pytest's capture sets stderr anew for
        each phase of a test."""
        monkeypatch.setenv("TERM", "xterm-256color")  # whatever the terminal running the suite
        monkeypatch.setattr("sys.stderr", self.stream)
        monkeypatch.setattr(output, "_BARS", [])

    def drawn(self) -> str:
        self.stream.flush()
        out = b""
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except BlockingIOError:
                return out.decode()
            if not chunk:
                return out.decode()
            out += chunk

    def close(self) -> None:
        self.stream.close()
        os.close(self.master)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    term.close()


# (label, done, total) sequences the library sends: the parallel scan reaches its total
# and then reports it again; a cache-hit scan ends past the total it counted; a second
# scan reuses the label; phases switch mid-way; a total shrinks; done runs backwards.
SEQUENCES = {
    "total twice": [("validating", n, 700) for n in (0, 64, 350, 700, 700)],
    "past the total": [("validating", n, 500) for n in (0, 64, 448)] + [("validating", 900, 900)],
    "second scan": [("validating", n, 640) for n in (0, 640, 640, 0, 320, 640, 640)],
    "phases": [("fetching", 0, 450), ("refining", 10, 450), ("fetching", 450, 450)],
    "shrinking": [("refining", 300, 1000), ("refining", 200, 400), ("refining", 400, 400)],
    "backwards": [("validating", 900, 1200), ("validating", 10, 1200), ("validating", -5, 1200)],
    "empty": [("validating", 0, 0), ("validating", 0, 0)],
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_any_sequence_draws_without_raising(
    name: str, terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal.attach(monkeypatch)
    bar = StderrProgress.for_terminal()
    assert bar is not None, "a pseudo-terminal is a terminal"
    for call in SEQUENCES[name]:
        bar(*call)
    bar.close()
    assert not bar.off, f"{name}: the bar gave up on a sequence it must draw"
    assert bar.bar is None
    drawn = terminal.drawn()
    assert "\r" in drawn and "warning" not in drawn, drawn


def test_short_work_and_a_dumb_terminal_draw_nothing(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal.attach(monkeypatch)
    bar = StderrProgress.for_terminal(min_total=300)
    assert bar is not None
    bar("validating", 10, 299)
    assert bar.bar is None
    monkeypatch.setenv("TERM", "dumb")  # it cannot redraw a line: no bar at all
    assert StderrProgress.for_terminal() is None


class GoneTerminal(io.TextIOBase):
    """A terminal hung up under the command: every write fails with EIO."""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_a_failing_terminal_turns_the_bar_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr("sys.stderr", GoneTerminal())
    monkeypatch.setattr(output, "_BARS", [])
    bar = StderrProgress.for_terminal()
    assert bar is not None
    for n in range(0, 1001, 100):
        bar("validating", n, 1000)  # must not raise, not once
    assert bar.off
    output.end_bars()


def test_a_defect_in_the_bar_is_one_warning(
    terminal: Terminal, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal.attach(monkeypatch)
    calls = []

    def broken(self: StderrProgress, label: str, done: int, total: int) -> None:
        calls.append(done)
        raise AttributeError("'NoneType' object has no attribute 'update'")

    monkeypatch.setattr(StderrProgress, "_draw", broken)
    bar = StderrProgress.for_terminal()
    assert bar is not None
    for n in (0, 500, 1000):
        bar("validating", n, 1000)
    assert calls == [0], "after its first failure the bar stays off"
    drawn = terminal.drawn()
    assert drawn.count("warning: the progress bar failed (AttributeError") == 1, drawn


def test_a_reporter_that_raises_keeps_the_commands_outcome(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """consolidate's work is done when the reporter runs: its failure is a warning, the
    exit status is consolidate's, --json still gets one envelope, the state is recorded."""
    from evidence_tool.cli.reporters import json_reporter, text_reporter

    def raises(*_args: object) -> None:
        raise TypeError("expected a JSON number, got str")

    monkeypatch.setattr(text_reporter.TextReporter, "report", raises)
    first = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(workspace)])
    assert first.exit_code == 0, first.stderr
    assert "warning: writing the report failed (TypeError" in first.stderr
    assert "Traceback" not in first.stderr

    (workspace / "evidence/curated/glossary/drg.md").unlink()
    monkeypatch.setattr(json_reporter, "envelope_line", raises)  # the reporter's, not output's
    second = invoke(
        ["workspace", "evidence", "consolidate", "--workspace-root", str(workspace), "--json"]
    )
    monkeypatch.undo()
    assert second.exit_code == 0, second.stderr
    envelope = json.loads(second.stdout)
    assert envelope["ok"] is True and envelope["result"] is None, envelope
    status = invoke(
        ["workspace", "evidence", "status", "--workspace-root", str(workspace), "--json"]
    )
    assert status.json["result"]["state"]["pending"] is None
    assert status.json["result"]["unconsolidated"]["deleted"] == []
