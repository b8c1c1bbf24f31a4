"""``--json`` / ``--format json``: exactly one envelope object on stdout."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from evidence_tool.cli.reporters import Reporter
from evidence_tool.jsonvalue import JsonObject

if TYPE_CHECKING:
    from evidence_tool.cli.context import Context, Report


def envelope_line(ctx: Context, report: Report, ok: bool) -> str:
    """The one --json object (schemas/cli/envelope.schema.json) as its line on stdout.

    Every envelope is built here, a crash's and a usage error's too, so each error
    carries its code's hint the same way.
    """
    envelope: JsonObject = {  # JSON boundary: the envelope schema's object
        "ok": ok,
        "command": ctx.command,
        "workspace": ctx.workspace,
        "result": report.result,
        "errors": [d.to_dict() for d in report.errors],
        "warnings": [w.to_dict() for w in report.warnings],
    }
    return json.dumps(envelope, ensure_ascii=False, indent=None) + "\n"


class JsonReporter(Reporter):
    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        sys.stdout.write(envelope_line(ctx, report, exit_code == 0))


REPORTER = JsonReporter()
