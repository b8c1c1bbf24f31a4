"""Sources: discovery and acquisition, refinement, comparisons, decisions, registry (SPEC 6).

A layer above the archive: it reads and writes through ``evidence_tool.archive``
(lock, journal, consolidation) and never imports activation or the CLI; the
activation callable is passed in by the caller.  Names are loaded on first use
(``evidence_tool.lazy``): consolidate's W151 check must not load the importers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.sources.decide import DecideResult, DecisionRequest, decide, decide_on, retry
    from evidence_tool.sources.import_add import add_import, parse_options
    from evidence_tool.sources.import_record import imported_from
    from evidence_tool.sources.policy import NetworkPolicy
    from evidence_tool.sources.records import (
        Comparison,
        Decision,
        DecisionValue,
        LineStatus,
        Registry,
        SourceRecord,
        SourceStatus,
    )
    from evidence_tool.sources.refiner import CommandRefiner, UnitsRefiner, refiner_for
    from evidence_tool.sources.refresh import RefreshResult, SourceLine, refresh
    from evidence_tool.sources.registry import (
        list_sources,
        missing_warnings,
        retract,
        show_source,
        unfinished_decisions,
        unit_warnings,
    )

__all__ = [
    "CommandRefiner",
    "Comparison",
    "DecideResult",
    "Decision",
    "DecisionRequest",
    "DecisionValue",
    "LineStatus",
    "NetworkPolicy",
    "RefreshResult",
    "Registry",
    "SourceLine",
    "SourceRecord",
    "SourceStatus",
    "UnitsRefiner",
    "add_import",
    "decide",
    "decide_on",
    "imported_from",
    "list_sources",
    "missing_warnings",
    "parse_options",
    "refiner_for",
    "refresh",
    "retract",
    "retry",
    "show_source",
    "unfinished_decisions",
    "unit_warnings",
]

lazy_face(
    __name__,
    {
        "CommandRefiner": "refiner",
        "Comparison": "records",
        "DecideResult": "decide",
        "Decision": "records",
        "DecisionRequest": "decide",
        "DecisionValue": "records",
        "LineStatus": "records",
        "RefreshResult": "refresh",
        "Registry": "records",
        "SourceLine": "refresh",
        "SourceRecord": "records",
        "SourceStatus": "records",
        "decide_on": "decide",
        "NetworkPolicy": "policy",
        "UnitsRefiner": "refiner",
        "add_import": "import_add",
        "decide": "decide",
        "imported_from": "import_record",
        "list_sources": "registry",
        "missing_warnings": "registry",
        "parse_options": "import_add",
        "refiner_for": "refiner",
        "refresh": "refresh",
        "retract": "registry",
        "retry": "decide",
        "show_source": "registry",
        "unfinished_decisions": "registry",
        "unit_warnings": "registry",
    },
)
