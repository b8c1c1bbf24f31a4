"""Run ``tht`` in-process through the real entry point, stdout and stderr apart.

A module of its own (not conftest.py) so that every test folder can import it by
name: ``from conftest import`` resolves to whichever conftest was imported first.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]


def invoke(args: list[str]) -> CliResult:
    """Run ``tht ARGS`` in-process through the real entry point; stdout and stderr apart."""
    from evidence_tool.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return CliResult(code, out.getvalue(), err.getvalue())


def tht(ws: Path, *args: str, installation: Path | None = None) -> CliResult:
    """``tht [--installation F] workspace evidence ARGS --workspace-root WS --json``."""
    pre = ["--installation", str(installation)] if installation else []
    return invoke([*pre, "workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])


def registry(ws: Path) -> dict[str, Any]:
    return json.loads((ws / "evidence/.local/sources.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def record(ws: Path, locator: str) -> dict[str, Any]:
    """The source registry's record of ``locator``."""
    return next(r for r in registry(ws)["sources"].values() if r["locator"] == locator)


def decide(
    ws: Path, locator: str, decision: str, *extra: str, installation: Path | None = None
) -> CliResult:
    """``decide`` the pending comparison of ``locator``."""
    rec = record(ws, locator)
    return tht(
        ws,
        "decide",
        "--source-id",
        rec["source_id"],
        "--revision",
        rec["comparison"]["revision"],
        "--decision",
        decision,
        *extra,
        installation=installation,
    )


def subcommands(group: Any) -> dict[str, Any]:
    """A click group's commands by name, as click resolves them: a lazy group
    (evidence_tool.cli.lazy_group) imports each command's module when asked."""
    import click

    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: cmd for name, cmd in found.items() if cmd is not None}
