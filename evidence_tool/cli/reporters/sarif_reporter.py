"""``--format sarif``: one SARIF 2.1.0 log with one run on stdout.

``tool.driver.rules`` is the table of error codes, each finding a result with its
rule, level and physical location (relative to ``%SRCROOT%``, the current folder,
when under it).  The lines for people go to stderr.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from evidence_tool import __version__
from evidence_tool.cli.reporters import Reporter, display_path
from evidence_tool.errors import CODES, Diagnostic, EvidenceWarning
from evidence_tool.jsonvalue import JsonObject, JsonValue

if TYPE_CHECKING:
    from evidence_tool.cli.context import Context, Report

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _rule_name(title: str) -> str:
    """A PascalCase name for a rule title ('duplicate id' -> 'DuplicateId')."""
    return "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title))


def _rules(warning_codes: Sequence[str]) -> tuple[list[JsonValue], dict[str, int]]:
    """The rules of the log, and each rule id's index in them."""
    rules: list[JsonValue] = [
        {
            "id": code,
            "name": _rule_name(info.title),
            "shortDescription": {"text": info.title},
            "help": {"text": info.fix},
            "defaultConfiguration": {"level": "error"},
            "properties": {"exitCode": info.exit_code},
        }
        for code, info in sorted(CODES.items())
    ]
    # Warning codes (W111, ...) are not errors and have no entry in CODES.
    rules += [
        {
            "id": code,
            "shortDescription": {"text": f"warning {code}"},
            "defaultConfiguration": {"level": "warning"},
        }
        for code in sorted(set(warning_codes) - set(CODES))
    ]
    ids = [*sorted(CODES), *sorted(set(warning_codes) - set(CODES))]
    return rules, {code: i for i, code in enumerate(ids)}


def _location(
    path: str | None, line: int | None, column: int | None, workspace: str | None
) -> JsonObject | None:
    shown = display_path(path, workspace)
    if shown is None:
        return None
    if os.path.isabs(shown):
        artifact: JsonObject = {"uri": Path(shown).as_uri()}
    else:
        artifact = {"uri": quote(shown, safe="/"), "uriBaseId": SRCROOT}
    physical: JsonObject = {"artifactLocation": artifact}
    if line and line >= 1:
        region: JsonObject = {"startLine": line}
        if column and column >= 1:
            region["startColumn"] = column
        physical["region"] = region
    return {"physicalLocation": physical}


def _result(
    rule: str | None,
    level: str,
    message: str,
    location: JsonObject | None,
    index: dict[str, int],
) -> JsonObject:
    result: JsonObject = {}
    if rule:
        result["ruleId"] = rule
        result["ruleIndex"] = index[rule]
    result["level"] = level
    result["message"] = {"text": message}
    if location is not None:
        result["locations"] = [location]
    return result


def sarif(
    errors: Sequence[Diagnostic],
    warnings: Sequence[EvidenceWarning],
    workspace: str | None,
    exit_code: int,
) -> JsonObject:
    """A SARIF 2.1.0 log of one run."""
    rules, index = _rules([w.code for w in warnings if w.code])
    results: list[JsonValue] = [
        _result(
            d.code if d.code in index else None,
            "error",
            d.message,
            _location(d.path, d.line, d.column, workspace),
            index,
        )
        for d in errors
    ]
    results += [
        _result(w.code, "warning", w.message, _location(w.path, w.line, w.column, workspace), index)
        for w in warnings
    ]
    run: JsonObject = {
        "tool": {
            "driver": {
                "name": "evidence-tool",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": exit_code in (0, 1), "exitCode": exit_code}],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


class SarifReporter(Reporter):
    def report(self, ctx: Context, report: Report, exit_code: int) -> None:
        log = sarif(report.errors, report.warnings, ctx.workspace, exit_code)
        sys.stdout.write(json.dumps(log, ensure_ascii=False, indent=2) + "\n")
        for line in report.text:
            print(line, file=sys.stderr)


REPORTER = SarifReporter()
