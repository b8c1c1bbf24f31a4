"""The comparison of one source grows linearly in its proposed units (issue 27, G2).

It runs under the archive lock (``refresh``), so a quadratic step there holds every other
writer off for minutes on a large import. Work is counted as the line events Python reports
inside ``sources/compare.py``, never timed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from evidence_tool.sources import compare
from evidence_tool.sources.compare import ArchiveView, Refinement
from evidence_tool.sources.identity import Acquired, DocumentMeta
from evidence_tool.sources.refiner import Proposal, ProposedUnit
from evidence_tool.unit import parse
from evidence_tool.workspace.layout import Layout

_UNIT = """---
schema_version: 4
id: evidence:shop:{name}
kind: glossary
language: en
purposes: [disambiguation]
applies_to:
  concepts: [{name}]
---

# {name}

## Definition

The {name} of an order, as the shop records it.
"""


def _refinement(n: int) -> Refinement:
    units = [ProposedUnit(parse(_UNIT.format(name=f"term-{i:05d}")), []) for i in range(n)]
    doc = Acquired("f" * 64, "import:dbt:dbt", "import", b"", "", "c" * 64, {})
    return Refinement(doc, DocumentMeta(), Proposal(units), None, False, "2026-01-01T00:00:00Z")


def _empty_view(root: Path) -> ArchiveView:
    return ArchiveView({}, {}, {}, {}, set(), set(), Layout(root))


def _lines_counted(view: ArchiveView, r: Refinement) -> int:
    """Line events executed in compare.py while building the comparison."""
    count = 0
    target = compare.__file__

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == target else None

    sys.settrace(tracer)
    try:
        comparison = compare.build(view, r)
    finally:
        sys.settrace(None)
    assert len(comparison.proposed) == len(r.proposal.units)
    return count


def test_building_a_comparison_is_linear_in_the_proposed_units(tmp_path: Path) -> None:
    view = _empty_view(tmp_path)
    small = _lines_counted(view, _refinement(150))
    large = _lines_counted(view, _refinement(600))
    # Linear: 4x the units, ~4x the lines. A set rebuilt per unit is ~16x.
    assert large <= 6 * small, f"150 units: {small} lines, 600 units: {large} lines"
