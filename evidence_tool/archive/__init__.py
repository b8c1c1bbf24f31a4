"""The local archive (SPEC.md 5): state, objects, snapshots, manifest, provenance, lock, journal.

The public face is ``LocalEvidenceArchive`` (docs/api.md); the modules behind it
are the archive's own.  Names are loaded on first use: importing one archive
module (the lock, say) must not load the whole archive.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evidence_tool.archive.edits import WorkingUnit
    from evidence_tool.archive.local import (
        ConsolidateResult,
        ConsolidateStatus,
        LocalEvidenceArchive,
    )
    from evidence_tool.archive.snapshot import Snapshot
    from evidence_tool.archive.state import State

__all__ = [
    "ConsolidateResult",
    "ConsolidateStatus",
    "LocalEvidenceArchive",
    "Snapshot",
    "State",
    "WorkingUnit",
]

_HOME = {
    "ConsolidateResult": "local",
    "ConsolidateStatus": "local",
    "LocalEvidenceArchive": "local",
    "Snapshot": "snapshot",
    "State": "state",
    "WorkingUnit": "edits",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
