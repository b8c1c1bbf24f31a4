"""Run ``tht`` as a person does: stdout and stderr on terminals (pseudo-terminals), and
the same command piped, to compare the two.

Each of stdout and stderr gets a pseudo-terminal of its own, so both are terminals (a
progress bar is drawn) and what each says can still be told apart.  stdin is the stdout
terminal, as at a shell prompt, or closed (``stdin="closed"``: file descriptor 0 does not
exist in the child).  Nothing here is mocked: a real process, real terminals.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from evidence_tool.errors import printable

THT = str(Path(sys.executable).with_name("tht"))
# Pinned so that two runs of one command print the same bytes.
BASE_ENV = {"THT_NOW": "2026-11-30T08:00:00Z", "THT_ACTOR": "pty-tester"}


@dataclass
class Ran:
    exit: int
    stdout: str
    stderr: str
    argv: tuple[str, ...]
    at_terminal: bool

    def where(self) -> str:
        """The run for a failure message, escaped: hostile output must not act on the
        terminal of whoever reads the test report."""
        mode = "at a terminal" if self.at_terminal else "piped"
        text = f"tht {' '.join(self.argv)} ({mode}) exit {self.exit}:\n{self.stdout}\n{self.stderr}"
        return printable(text, newlines=True)


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("THT_INSTALLATION", "COLUMNS")}
    env.update(BASE_ENV)
    env.setdefault("TERM", "xterm-256color")
    env.update(extra or {})
    return {k: v for k, v in env.items() if v != ""}  # an empty value: unset


def piped(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, *, stdin: str = "null"
) -> Ran:
    """``tht ARGV`` with stdout and stderr to pipes and stdin from /dev/null (or closed:
    ``stdin="closed"``)."""
    done = subprocess.run(
        [THT, *argv],
        cwd=cwd,
        env=environment(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        preexec_fn=(lambda: os.close(0)) if stdin == "closed" else None,
    )
    out, err = (_text(b) for b in (done.stdout, done.stderr))
    return Ran(done.returncode, out, err, tuple(argv), False)


def _set_size(fd: int, columns: int, rows: int = 24) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def at_terminal(
    argv: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    *,
    stdin: str = "terminal",
    columns: int = 80,
    timeout: float = 300,
) -> Ran:
    """``tht ARGV`` with stdout and stderr on two pseudo-terminals ``columns`` wide; stdin
    the stdout terminal, ``closed``, or ``null`` (/dev/null)."""
    out_master, out_slave = os.openpty()
    err_master, err_slave = os.openpty()
    for fd in (out_slave, err_slave):
        _set_size(fd, columns)
    close_stdin = stdin == "closed"

    def child_setup() -> None:
        os.setsid()  # a session of its own: the stdout terminal becomes its controlling one
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)
        if close_stdin:
            os.close(0)

    proc = subprocess.Popen(
        [THT, *argv],
        cwd=cwd,
        env=environment(env),
        stdin=subprocess.DEVNULL if stdin == "null" else out_slave,
        stdout=out_slave,
        stderr=err_slave,
        preexec_fn=child_setup,  # the test process forks no threads of its own here
    )
    os.close(out_slave)
    os.close(err_slave)
    chunks: dict[int, list[bytes]] = {out_master: [], err_master: []}
    open_fds = set(chunks)
    deadline = time.monotonic() + timeout
    try:
        while open_fds:
            if time.monotonic() > deadline:
                proc.send_signal(signal.SIGKILL)
                raise TimeoutError(f"tht {' '.join(argv)} at a terminal: no end in {timeout} s")
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError as exc:  # EIO: every writer of the terminal has closed it
                    if exc.errno != errno.EIO:
                        raise
                    data = b""
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.discard(fd)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(out_master)
        os.close(err_master)
    out, err = (_text(b"".join(chunks[fd])) for fd in (out_master, err_master))
    return Ran(code, _terminal_lines(out), _terminal_lines(err), tuple(argv), True)


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _terminal_lines(text: str) -> str:
    """What a terminal's line discipline did undone: its output turns \\n into \\r\\n."""
    return text.replace("\r\n", "\n")


def without_progress(stderr: str) -> str:
    """stderr with every progress bar taken out: the lines holding a carriage return (the
    bar redraws itself after one).  A message written onto a bar's line goes with it, and
    the comparison with the piped run then misses it: a bar must end its line first."""
    return "\n".join(line for line in stderr.split("\n") if "\r" not in line)


def progress_drawn(stderr: str) -> bool:
    return "\r" in stderr
