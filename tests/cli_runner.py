"""Run ``tht`` in-process through the real entry point, stdout and stderr apart.

A module of its own (not conftest.py) so that every test folder can import it by
name: ``from conftest import`` resolves to whichever conftest was imported first.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
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
