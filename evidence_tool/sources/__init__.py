"""Sources: discovery and acquisition, refinement, comparisons, decisions, registry (SPEC 6).

A layer above the archive: it reads and writes through ``evidence_tool.archive``
(lock, journal, consolidation) and never imports activation or the CLI; the
activation callable is passed in by the caller.
"""

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
    "unit_warnings",
]
