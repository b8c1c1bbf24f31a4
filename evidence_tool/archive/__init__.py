"""The local archive (SPEC.md 5): state, objects, snapshots, manifest, provenance, lock, journal.

The public face is ``LocalEvidenceArchive`` (docs/api.md); the modules behind it
are the archive's own.  Names are loaded on first use: importing one archive
module (the lock, say) must not load the whole archive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.archive.edits import WorkingUnit
    from evidence_tool.archive.local import (
        ConsolidateResult,
        ConsolidateStatus,
        LocalEvidenceArchive,
    )
    from evidence_tool.archive.port import ActivationPort, Capabilities
    from evidence_tool.archive.snapshot import Snapshot
    from evidence_tool.archive.state import State

__all__ = [
    "ActivationPort",
    "Capabilities",
    "ConsolidateResult",
    "ConsolidateStatus",
    "LocalEvidenceArchive",
    "Snapshot",
    "State",
    "WorkingUnit",
]

lazy_face(
    __name__,
    {
        "ActivationPort": "port",
        "Capabilities": "port",
        "ConsolidateResult": "local",
        "ConsolidateStatus": "local",
        "LocalEvidenceArchive": "local",
        "Snapshot": "snapshot",
        "State": "state",
        "WorkingUnit": "edits",
    },
)
