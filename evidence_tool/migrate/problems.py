"""E160 findings: which legacy unit, which field, and why v4 cannot hold it losslessly.

Problems are data (collected for every unit before anything is written) and
become one ``LosslessConversionError`` carrying all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from evidence_tool.errors import Diagnostic, EvidenceError
from evidence_tool.jsonvalue import View

FieldPath = tuple[str | int, ...]  # keys and list indexes into the legacy data


def field_name(path: FieldPath) -> str:
    """``("payload", "synonyms", 1)`` -> ``payload.synonyms[1]``: how the legacy data names it."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(file)"


@dataclass(frozen=True)
class Problem(View):
    path: str  # workspace-relative legacy file (or the legacy manifest)
    field: str  # dotted path in the legacy data: title, payload.synonyms[1], provenance.excerpts[0]
    reason: str
    unit_id: str | None = None
    line: int | None = None
    column: int | None = None
    _keys = ("unit_id", "field", "reason", "path", "line")

    def diagnostic(self) -> Diagnostic:
        who = f"unit '{self.unit_id}'" if self.unit_id else self.path
        return Diagnostic(
            "E160",
            f"{who}, field '{self.field}': {self.reason}",
            self.path,
            self.line,
            self.column,
            self.unit_id,
        )


class LosslessConversionError(EvidenceError):
    """E160: at least one legacy unit cannot become v4 without losing or changing content."""

    code = "E160"

    def __init__(self, problems: list[Problem]) -> None:
        ordered = sorted(problems, key=lambda p: (p.path, p.line or 0, p.field, p.reason))
        self.problems = ordered
        first = ordered[0]
        super().__init__(
            f"{len(ordered)} legacy field(s) cannot be converted to v4 losslessly; "
            "nothing was written",
            code="E160",
            path=first.path,
            line=first.line,
            column=first.column,
            unit_id=first.unit_id,
            diagnostics=[p.diagnostic() for p in ordered],
            details={"result": {"problems": [p.to_json() for p in ordered]}},
        )
