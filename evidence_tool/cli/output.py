"""The one place that turns results and errors into output and exit codes."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from evidence_tool import errors as E
from evidence_tool.cli import formats


@dataclass
class Report:
    """What a command hands back: result data, findings, and lines for humans."""

    result: dict[str, Any] | None = None
    errors: list[E.Diagnostic] = field(default_factory=list)
    warnings: list[E.EvidenceWarning] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    exit_code: int | None = None

    def code(self) -> int:
        if self.exit_code is not None:
            return self.exit_code
        if not self.errors:
            return E.EXIT_OK
        return max(
            E.CODES[d.code].exit_code if d.code in E.CODES else E.EXIT_BUG for d in self.errors
        )


def scan_report(scanned: Any, warnings_as_errors: bool, noun: str = "file(s)") -> Report:
    """The report of a validation scan; with --warnings-as-errors its coded warnings are
    errors E190 (and count as such)."""
    errors, warnings = list(scanned.errors), list(scanned.warnings)
    if warnings_as_errors:
        errors, warnings = E.with_warnings_refused(errors, warnings)
    # A file with a refused warning counts as invalid, so the counts agree with the exit.
    summary = replace(scanned, errors=errors).summary()
    return Report(
        result=summary,
        errors=errors,
        warnings=warnings,
        text=[f"{summary['files']} {noun}, {summary['valid']} valid, {len(errors)} error(s)"],
    )


@dataclass
class Context:
    as_json: bool
    command: str
    workspace: str | None = None
    format: str = "text"  # text | json | github | sarif (github and sarif: cli.formats)


def envelope_line(ctx: Context, report: Report, ok: bool) -> str:
    """The one --json object (schemas/cli/envelope.schema.json) as its line on stdout.

    Every envelope is built here, a crash's and a usage error's too, so each error
    carries its code's hint the same way.
    """
    envelope = {  # JSON boundary: the envelope schema's object
        "ok": ok,
        "command": ctx.command,
        "workspace": ctx.workspace,
        "result": report.result,
        "errors": [d.to_dict() for d in report.errors],
        "warnings": [w.to_dict() for w in report.warnings],
    }
    return json.dumps(envelope, ensure_ascii=False, indent=None) + "\n"


def _print_human(report: Report) -> None:
    for line in report.text:
        print(line)
    for d in report.errors:
        print(str(d))
    if report.errors:
        seen: list[str] = []
        for d in report.errors:
            if d.code not in seen:
                seen.append(d.code)
        for code in seen[:5]:
            print(f"  fix {code}: {E.CODES[code].fix if code in E.CODES else ''}", file=sys.stderr)
    for w in report.warnings:
        where = ":".join(str(part) for part in (w.path, w.line, w.column) if part)
        head = " ".join(part for part in (f"{where}:" if where else "", w.code or "") if part)
        print(f"warning: {head + ' ' if head else ''}{w.message}", file=sys.stderr)


def finish(ctx: Context, report: Report) -> NoReturn:
    code = report.code()
    if ctx.format in formats.RENDERERS:
        sys.stdout.write(
            formats.render(
                ctx.format,
                report.errors,
                report.warnings,
                workspace=ctx.workspace,
                exit_code=code,
            )
        )
        for line in report.text:
            print(line, file=sys.stderr)
    elif ctx.as_json:
        sys.stdout.write(envelope_line(ctx, report, code == 0))
    else:
        _print_human(report)
    sys.stdout.flush()
    raise SystemExit(code)


def fail(ctx: Context, exc: E.EvidenceError) -> NoReturn:
    report = Report(result=exc.result, errors=list(exc.diagnostics), exit_code=exc.exit_code)
    if ctx.as_json or ctx.format in formats.RENDERERS:
        finish(ctx, report)
    for d in report.errors:
        print(f"error: {d}", file=sys.stderr)
    info = E.CODES.get(exc.code)
    if info:
        print(f"hint: {info.fix}", file=sys.stderr)
    raise SystemExit(exc.exit_code)


def run(ctx: Context, body: Callable[[], Report]) -> NoReturn:
    """Run a command body; EvidenceErrors become coded output, anything else a bug report."""
    try:
        report = body()
    except E.EvidenceError as exc:
        fail(ctx, exc)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as exc:  # a defect: never a silent pass, never a bare traceback on stdout
        from evidence_tool.workspace.redact import redact_urls

        # A bug's message may quote a URL: its credentials must not ride along.
        sys.stderr.write(redact_urls(traceback.format_exc()))
        message = redact_urls(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in "
            "evidence-tool: please report it with the traceback above"
        )
        if ctx.as_json:
            crash = Report(errors=[E.Diagnostic("E999", message)])
            sys.stdout.write(envelope_line(ctx, crash, ok=False))
        else:
            print(f"error: {message}", file=sys.stderr)
        raise SystemExit(E.EXIT_BUG) from None
    finish(ctx, report)


class StderrProgress:
    """A progress bar on stderr, only when stderr is a terminal and the work is long
    (``min_total`` items); --json stdout is never touched."""

    def __init__(self, min_total: int = 0) -> None:
        self.min_total = min_total
        self.bar: Any = None
        self.label: str | None = None

    @classmethod
    def for_terminal(cls, min_total: int = 0) -> StderrProgress | None:
        return cls(min_total) if sys.stderr.isatty() else None

    def __call__(self, label: str, done: int, total: int) -> None:
        if total < self.min_total:
            return
        if label != self.label:
            import click

            self.close()
            self.label = label
            self.bar = click.progressbar(length=max(total, 1), label=label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
