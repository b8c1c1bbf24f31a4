"""``tht evidence ...``: commands on unit files, without a workspace archive."""

from __future__ import annotations

import click

from evidence_tool.cli.options import (
    format_options,
    json_option,
    resolve_format,
    warnings_as_errors_option,
)
from evidence_tool.cli.output import Context, Report, StderrProgress, run, scan_report


@click.group()
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
        from evidence_tool.archive.validation import validate_paths

        scanned = validate_paths(paths, StderrProgress.for_terminal(min_total=300))
        return scan_report(scanned, warnings_as_errors)

    run(ctx, body)


@evidence.command("fmt")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--check", is_flag=True, help="Change nothing; fail if a file is not canonical.")
@json_option
def fmt_cmd(paths: tuple[str, ...], check: bool, as_json: bool) -> None:
    """Rewrite unit files into canonical form (--check for CI)."""
    ctx = Context(as_json, "evidence fmt")

    def body() -> Report:
        from evidence_tool.workspace.fmt import format_paths

        rep = format_paths(paths, check=check)
        verb = "would reformat" if check else "reformatted"
        return Report(
            result={"checked": rep.checked, "changed": [*rep.changed], "check": check},
            errors=rep.errors,
            warnings=rep.warnings,
            text=[
                *(f"{verb} {p}" for p in rep.changed),
                f"{rep.checked} file(s) checked, {len(rep.changed)} {verb}",
            ],
        )

    run(ctx, body)
