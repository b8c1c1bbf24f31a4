"""The one place that turns results and errors into output and exit codes."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from evidence_tool import errors as E
from evidence_tool.cli.context import Context as Context  # re-exported: the commands import it here
from evidence_tool.cli.context import Report as Report
from evidence_tool.cli.reporters import reporter_for
from evidence_tool.cli.reporters.json_reporter import envelope_line

EXIT_READER_GONE = 141  # what a shell reports for a writer ended by SIGPIPE (128 + 13)


def _stdout_gone() -> bool:
    """The reader of standard output has stopped reading (``tht ... | head``)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _reader_gone() -> NoReturn:
    """End quietly, as ``cat`` does when ``head`` has read enough: nothing more to say to
    a reader that left, and no second broken pipe when the interpreter flushes stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    raise SystemExit(EXIT_READER_GONE)


def _to_reader(ctx: Context, report: Report, write: Callable[[], object], code: int) -> None:
    """Run ``write`` (a reporter's output) and flush stdout; a reader gone ends quietly.

    The command's work is done when its report is written: a failure to render it is a
    warning and the command keeps its exit status (``--json`` still gets its one object,
    without the result that could not be rendered).  Output the system refuses (a full
    disk behind ``> file``) is lost output, not a rendering defect: E604, never exit 0."""
    end_bars()
    if sys.stdout is None:  # '>&-': the interpreter started without a standard output
        _stdout_unwritable(OSError(errno.EBADF, "standard output is closed"), code, report)
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_gone():
            raise
        _reader_gone()
    except OSError as exc:
        if exc.errno not in _WRITE_ERRNOS:  # not the write's: a reporter's own (os.getcwd)
            _render_failed(ctx, report, exc)
        else:
            _stdout_unwritable(exc, code, report)
    except Exception as exc:
        _render_failed(ctx, report, exc)


def _render_failed(ctx: Context, report: Report, exc: Exception) -> None:
    presentation_failed("writing the report", exc)
    if ctx.format == "json":
        try:
            sys.stdout.write(_bare_envelope(ctx, report))
            sys.stdout.flush()
        except Exception as again:  # a stdout that cannot be written: no one to tell
            presentation_failed("writing the report's findings", again)


# What write(2) on a file, pipe, terminal or socket reports (EPIPE aside): another errno
# came from elsewhere in the reporter, and is a rendering failure as any other exception.
_FULL = ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS", "ESTALE", "EPERM")
_STREAM = ("EAGAIN", "EBADF", "EINVAL", "ENXIO", "ECONNRESET", "ENOTCONN", "EINTR")
_WRITE_ERRNOS = frozenset(getattr(errno, n) for n in (*_FULL, *_STREAM) if hasattr(errno, n))


def _stdout_unwritable(exc: OSError, code: int, report: Report) -> NoReturn:
    """Standard output refused the output (ENOSPC, EIO): say so on stderr and end with
    E604, or with the command's own failure code; a script must not take a cut file for
    the whole.  What is still buffered for stdout is dropped, so that the interpreter's
    last flush does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    done = "the command's work is done; " if code == 0 else ""
    # The report that was lost held the command's own failure: name its codes here.
    failed = sorted({d.code for d in report.errors})
    done += f"the command failed ({', '.join(failed)}); " if code and failed else ""
    why = E.printable(exc.strerror or str(exc))
    where = (
        "open standard output (not '>&-')"
        if exc.errno == errno.EBADF
        else "write the output where there is room"
    )
    try:
        sys.stderr.write(
            f"error: E604 standard output could not be written ({why}): what it holds is "
            f"incomplete; {done}{where}, then run the command again\n"
            f"hint: {E.CODES['E604'].fix}\n"
        )
        sys.stderr.flush()
    except Exception:
        pass  # stderr refused too: the exit status is all that is left to say it
    raise SystemExit(code or E.CODES["E604"].exit_code)


def _bare_envelope(ctx: Context, report: Report) -> str:
    """The envelope of a report whose result could not be rendered: its findings only."""
    bare = Report(errors=report.errors, warnings=report.warnings)
    return envelope_line(ctx, bare, report.code() == 0)


def finish(ctx: Context, report: Report) -> NoReturn:
    """Hand the body's report to the reporter of the chosen format and exit with its code."""
    code = report.code()
    _to_reader(ctx, report, lambda: reporter_for(ctx.format).report(ctx, report, code), code)
    raise SystemExit(code)


def usage_failed(ctx: Context, report: Report, code: int) -> None:
    """A usage error's envelope (``--json`` keeps its one-object promise): written as any
    report is, so a reader gone or a stdout closed or full is said, not a traceback."""
    _to_reader(ctx, report, lambda: sys.stdout.write(envelope_line(ctx, report, ok=False)), code)


def fail(ctx: Context, exc: E.EvidenceError) -> NoReturn:
    """A coded error, written by the chosen format's reporter."""
    report = Report(result=exc.result, errors=list(exc.diagnostics), exit_code=exc.exit_code)
    _to_reader(
        ctx, report, lambda: reporter_for(ctx.format).failure(ctx, report, exc), exc.exit_code
    )
    raise SystemExit(exc.exit_code)


def run(ctx: Context, body: Callable[[], Report]) -> NoReturn:
    """Run a command body; EvidenceErrors become coded output, anything else a bug report."""
    try:
        report = body()
    except E.EvidenceError as exc:
        fail(ctx, exc)
    except KeyboardInterrupt:
        end_bars()
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:
        if not _stdout_gone():  # another pipe (a refiner's, say): a defect, reported below
            _defect(ctx)
        _reader_gone()
    except Exception:
        _defect(ctx)
    finish(ctx, report)


def _defect(ctx: Context) -> NoReturn:
    """The exception being handled is a defect: never a silent pass, never a bare
    traceback on stdout."""
    import traceback  # a crash's only: not loaded by every command

    from evidence_tool.workspace.redact import redact_urls

    exc = sys.exc_info()[1]
    end_bars()
    # A bug's message may quote a URL: its credentials must not ride along.
    sys.stderr.write(E.printable(redact_urls(traceback.format_exc()), newlines=True))
    message = redact_urls(
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in "
        "evidence-tool: please report it with the traceback above"
    )
    if ctx.as_json:
        crash = Report(errors=[E.Diagnostic("E999", message)])
        sys.stdout.write(envelope_line(ctx, crash, ok=False))
    else:
        print(f"error: {E.printable(message)}", file=sys.stderr)
    raise SystemExit(E.EXIT_BUG) from None


def presentation_failed(what: str, exc: BaseException) -> None:
    """A failure to draw or write something for people (a progress bar, a report): one
    warning on stderr, never the command's end.  Writing the warning may fail too (the
    terminal gone): then there is no one to tell."""
    try:
        message = E.printable(f"{what} failed ({type(exc).__name__}: {exc})")
        sys.stderr.write(
            f"warning: {message}; the command went on without it. This is a bug in "
            "evidence-tool: please report it\n"
        )
        sys.stderr.flush()
    except Exception:
        pass


class StderrProgress:
    """A progress bar on stderr, only when stderr is a terminal that can redraw a line
    (not ``TERM=dumb``) and the work is long (``min_total`` items); --json stdout is never
    touched.

    Drawing can never end the command: the library calls this between its reads and
    writes, so a failure here (a terminal gone, a defect) turns the bar off with one
    warning (``presentation_failed``) instead of leaving an operation half done."""

    def __init__(self, min_total: int = 0) -> None:
        self.min_total = min_total
        self.bar: Any = None
        self.label: str | None = None  # the phase drawn last, kept after its bar ended
        self.off = False
        _BARS.append(self)

    @classmethod
    def for_terminal(cls, min_total: int = 0) -> StderrProgress | None:
        try:
            terminal = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        except (AttributeError, ValueError):  # no stderr, or a closed one
            terminal = False
        return cls(min_total) if terminal else None

    def __call__(self, label: str, done: int, total: int) -> None:
        if self.off or total < self.min_total:
            return
        try:
            self._draw(label, done, total)
        except Exception as exc:
            self.off = True
            self.bar = None
            presentation_failed("the progress bar", exc)

    def _draw(self, label: str, done: int, total: int) -> None:
        if self.bar is None or label != self.label:
            if label == self.label and done >= total:
                return  # this phase's bar already ended at its total: a scan says so twice
            import click

            self.close()
            self.label = label
            width, eta = _bar_width(label)
            if width < _MIN_BAR:
                return  # no bar fits beside the label: a wrapped one leaves a line per redraw
            self.bar = click.progressbar(
                length=max(total, 1), label=label, file=sys.stderr, width=width, show_eta=eta
            )
            self.bar.__enter__()
        self.bar.update(max(done - self.bar.pos, 0))
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the bar's line (before anything else is written to stderr)."""
        bar, self.bar = self.bar, None
        if bar is None:
            return
        try:
            bar.__exit__(None, None, None)
        except Exception as exc:
            self.off = True
            presentation_failed("the progress bar", exc)


_BAR = 36  # click's own width, kept wherever it fits
_MIN_BAR = 4
# Around the bar: "{label}  [" "]  " "100%" and, while the time left is known, "  " and an
# ETA of at most "1d 00:00:00"; one column spare, so a frame never ends in the last column.
_CLUTTER, _ETA = 2 + 1 + 1 + 2 + 4 + 1, 2 + 11


def _columns() -> int:
    """The width of the terminal the bar is drawn on: stderr's (stdout may be piped)."""
    try:
        env = int(os.environ.get("COLUMNS", ""))
        if env > 0:
            return env
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _bar_width(label: str) -> tuple[int, bool]:
    """(bar width, show the ETA) for a bar whose frames fit the terminal on one line: a
    frame that wraps is redrawn one line down, leaving the last one behind each time."""
    room = _columns() - len(label) - _CLUTTER
    if room - _ETA >= 2 * _MIN_BAR:
        return min(_BAR, room - _ETA), True
    return min(_BAR, room), False  # narrow: the bar before the ETA


_BARS: list[StderrProgress] = []  # every bar of this command: ended before its report


def end_bars() -> None:
    """End every bar's line, before the outcome is written (the command is done with them)."""
    for bar in _BARS:
        bar.close()
    _BARS.clear()
