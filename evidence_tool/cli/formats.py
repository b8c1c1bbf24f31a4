"""``--format github`` and ``--format sarif``: findings as CI annotations.

- github: one workflow command per finding,
  ``::error file=F,line=L,col=C,title=E111::message``, escaped as the Actions
  toolkit does (data: ``%`` ``\\r`` ``\\n``; properties also ``:`` and ``,``).
- sarif: one SARIF 2.1.0 log with one run; ``tool.driver.rules`` is the
  table of error codes, each finding a result with its rule, level and
  physical location.

File paths are shown relative to the current folder when they lie under it
(CI runs from the repository root, which is what both consumers resolve
against), else absolute.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from evidence_tool import __version__
from evidence_tool.errors import CODES, Diagnostic, EvidenceWarning

RENDERERS = ("github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def render(
    fmt: str,
    errors: Sequence[Diagnostic],
    warnings: Sequence[EvidenceWarning],
    *,
    workspace: str | None,
    exit_code: int,
) -> str:
    """The whole stdout of a command in ``fmt`` (one of ``RENDERERS``)."""
    if fmt == "github":
        return github(errors, warnings, workspace)
    log = sarif(errors, warnings, workspace, exit_code)
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"


def display_path(path: str | None, workspace: str | None) -> str | None:
    """A finding's file relative to the current folder when under it, else absolute."""
    if not path:
        return None
    full = os.path.abspath(os.path.join(workspace or os.getcwd(), path))
    rel = os.path.relpath(full, os.getcwd())
    return full if rel == ".." or rel.startswith("../") else Path(rel).as_posix()


# -- GitHub workflow commands --------------------------------------------------


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(kind: str, message: str, **properties: Any) -> str:
    """``::kind key=value,...::message`` with None-valued properties left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def github(
    errors: Sequence[Diagnostic], warnings: Sequence[EvidenceWarning], workspace: str | None
) -> str:
    lines = []
    for d in errors:
        message = d.message + (f"\nFix: {d.hint}" if d.hint else "")
        lines.append(
            workflow_command(
                "error",
                message,
                file=display_path(d.path, workspace),
                line=d.line,
                col=d.column if d.line else None,
                title=d.code,
            )
        )
    for w in warnings:
        lines.append(
            workflow_command(
                "warning",
                w.message,
                file=display_path(w.path, workspace),
                line=w.line,
                col=w.column if w.line else None,
                title=w.code,
            )
        )
    return "".join(line + "\n" for line in lines)


# -- SARIF 2.1.0 -----------------------------------------------------------------


def _rule_name(title: str) -> str:
    """A PascalCase name for a rule title ('duplicate id' -> 'DuplicateId')."""
    return "".join(word[:1].upper() + word[1:] for word in re.findall(r"[A-Za-z0-9]+", title))


def _rules(warning_codes: Sequence[str]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = [
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
    return rules


def _location(
    path: str | None, line: int | None, column: int | None, workspace: str | None
) -> dict[str, Any] | None:
    shown = display_path(path, workspace)
    if shown is None:
        return None
    if os.path.isabs(shown):
        artifact: dict[str, Any] = {"uri": Path(shown).as_uri()}
    else:
        artifact = {"uri": quote(shown, safe="/"), "uriBaseId": SRCROOT}
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line and line >= 1:
        physical["region"] = {"startLine": line}
        if column and column >= 1:
            physical["region"]["startColumn"] = column
    return {"physicalLocation": physical}


def _result(
    rule: str | None,
    level: str,
    message: str,
    location: dict[str, Any] | None,
    index: dict[str, int],
) -> dict[str, Any]:
    result: dict[str, Any] = {}
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
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run."""
    rules = _rules([w.code for w in warnings if w.code])
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [
        _result(
            d.code if d.code in index else None,
            "error",
            d.message,
            _location(d.path, d.line, d.column, workspace),
            index,
        )
        for d in errors
    ] + [
        _result(w.code, "warning", w.message, _location(w.path, w.line, w.column, workspace), index)
        for w in warnings
    ]
    run = {
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
