"""Entry point: the ``tht`` group and the error funnel around click's own errors."""

from __future__ import annotations

import atexit
import os
import sys

import click

from evidence_tool import __version__
from evidence_tool.cli.lazy_group import LazyGroup
from evidence_tool.cli.output import Context, Report, usage_failed
from evidence_tool.errors import Diagnostic, printable


@click.group(
    cls=LazyGroup,
    lazy={
        "config": "evidence_tool.cli.activation_cmds:config",
        "evidence": "evidence_tool.cli.evidence_cmds:evidence",
        "workspace": "evidence_tool.cli.workspace_cmds:workspace",
    },
    # Their docstrings, so that `tht --help` imports none of them (tests/test_cli_lazy.py).
    helps={
        "config": "Effective settings.",
        "evidence": "Unit files: validate, format, migrate.",
        "workspace": "Commands on a workspace.",
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--installation",
    type=click.Path(dir_okay=False),
    envvar="THT_INSTALLATION",
    help="Installation descriptor (machine settings); env THT_INSTALLATION.",
)
@click.version_option(__version__, prog_name="tht")
@click.pass_context
def cli(ctx: click.Context, installation: str | None) -> None:
    """evidence-tool: curated evidence units kept safe, reviewable and traceable."""
    ctx.obj = {"installation": installation}


def _command_path(args: list[str]) -> str:
    """The subcommand names in ``args`` (no option values), e.g. 'workspace evidence validate'."""
    names: list[str] = []
    group: click.Command = cli
    for arg in args:
        sub = (
            group.get_command(click.Context(group), arg) if isinstance(group, click.Group) else None
        )
        if sub is not None:
            names.append(arg)
            group = sub
    return " ".join(names) or "tht"


def _wants_json(args: list[str]) -> bool:
    """--json, or its spelling --format json (which keeps the same one-object promise)."""
    pairs = zip(args, [*args[1:], ""], strict=True)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


def _show(exc: click.ClickException) -> None:
    """click's own message and usage, escaped: it may quote an argument (a path holding a
    newline or ESC) that must not act on the terminal or start a CI log line."""
    import io

    shown = io.StringIO()
    exc.show(file=shown)
    message = exc.format_message()  # its newlines escaped too: the usage's lines are kept
    text = shown.getvalue().replace(message, printable(message))
    sys.stderr.write(printable(text, newlines=True))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    try:
        cli.main(args=args, prog_name="tht", standalone_mode=False)
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:
        # Usage errors keep the --json promise: one JSON object on stdout.
        if _wants_json(args):
            usage = Report(errors=[Diagnostic("E901", exc.format_message())])
            usage_failed(Context(True, _command_path(args)), usage, exc.exit_code)
        else:
            _show(exc)
        raise SystemExit(exc.exit_code) from None
    except click.exceptions.Abort:
        print("aborted", file=sys.stderr)
        raise SystemExit(130) from None
    raise SystemExit(0)


def run() -> None:
    """The ``tht`` program: ``main``, then leave without tearing the interpreter down.

    At shutdown the interpreter tears down every module and frees every object: 0.03 to
    0.05 s of each command (``tht --help`` 0.169 -> 0.143 s, a no-op consolidate of 10
    units 0.313 -> 0.268 s; bench/process.py, docs/performance.md).
    What a command writes is durable when it returns (fsio); here the exit handlers run
    (multiprocessing, concurrent.futures, weakref finalizers) and the streams are
    flushed, then the process ends: only the freeing is skipped.  A stream that cannot
    be flushed (a reader gone) takes the interpreter's own way out, as before.
    Tests call ``main`` and keep their interpreter.
    """
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:  # pragma: no cover - main always exits
        code = 0
    if code is None:
        code = 0
    if not isinstance(code, int):
        raise SystemExit(code)
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: closed when the process started ('>&-')
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


if __name__ == "__main__":
    run()
