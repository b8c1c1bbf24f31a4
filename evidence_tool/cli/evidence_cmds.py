"""``tht evidence ...``: commands on unit files, without a workspace archive."""

from __future__ import annotations

import click

from evidence_tool.cli.lazy_group import LazyGroup
from evidence_tool.cli.options import (
    flag,
    format_options,
    json_option,
    resolve_format,
    warnings_as_errors_option,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run
from evidence_tool.jsonvalue import JsonObject, JsonValue


@click.group(cls=LazyGroup, lazy={"migrate": "evidence_tool.cli.migrate_cmds"})
def evidence() -> None:
    """Unit files: validate, format, migrate."""


@evidence.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@warnings_as_errors_option
@format_options
def validate_cmd(
    paths: tuple[str, ...], warnings_as_errors: bool, output_format: str | None, as_json: bool
) -> None:
    """Validate unit files or folders (a workspace root means its curated tree)."""
    fmt = resolve_format(output_format, as_json)
    ctx = Context(fmt == "json", "evidence validate", format=fmt)

    def body() -> Report:
        from evidence_tool.session import Session

        found = Session.validate_files(
            paths,
            warnings_as_errors=warnings_as_errors,
            progress=StderrProgress.for_terminal(min_total=300),
        )
        summary = found.to_json()
        text = [
            f"{summary['files']} file(s), {summary['valid']} valid, {len(found.errors)} error(s)"
        ]
        return Report(summary, found.errors, found.warnings, text)

    run(ctx, body)


@evidence.command("fmt")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@flag("--check", help="Change nothing; fail if a file is not canonical.")
@flag(
    "--diff",
    "show_diff",
    help="Change nothing; print each change as a unified diff (with --check, also fail).",
)
@json_option
def fmt_cmd(paths: tuple[str, ...], check: bool, show_diff: bool, as_json: bool) -> None:
    """Rewrite unit files into canonical form (--check for CI, --diff to see the change)."""
    ctx = Context(as_json, "evidence fmt")

    def body() -> Report:
        from evidence_tool.session import Session

        rep = Session.format_files(paths, check=check, diff=show_diff)
        verb = "would reformat" if check or show_diff else "reformatted"
        result: JsonObject = {"checked": rep.checked, "changed": [*rep.changed], "check": check}
        if show_diff:
            result["diffs"] = dict[str, JsonValue](rep.diffs)
        shown = [rep.diffs[p] for p in rep.changed] if show_diff else []
        return Report(
            result=result,
            errors=rep.errors,
            warnings=rep.warnings,
            text=[
                *(line for d in shown for line in d.rstrip("\n").split("\n")),
                *(f"{verb} {p}" for p in rep.changed if not show_diff),
                f"{rep.checked} file(s) checked, {len(rep.changed)} {verb}",
            ],
        )

    run(ctx, body)
