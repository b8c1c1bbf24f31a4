"""What a command hands to its reporter: the invocation's ``Context`` and the command's
``Report``.  A module of their own, so that the reporters (which read them) and
``cli.output`` (which picks a reporter) import them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_tool import errors as E
from evidence_tool.jsonvalue import JsonObject

__all__ = ["Context", "Report"]


@dataclass
class Report:
    """What a command hands back: result data, findings, and lines for humans."""

    result: JsonObject | None = None  # JSON boundary: the envelope's result
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


@dataclass
class Context:
    as_json: bool
    command: str
    workspace: str | None = None
    format: str = "text"  # text | json | github | sarif: the reporter (cli.reporters)

    def __post_init__(self) -> None:
        if self.as_json:  # --json is --format json
            self.format = "json"
