"""One command's view of a workspace: root, installation, actor, archive and backends.

This is wiring, not behaviour: it picks the configured activation backend
(and, later, refiner and sources) for the library calls the CLI makes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_tool.activation import backend_for
from evidence_tool.archive import queries
from evidence_tool.archive.local import Activate, ConsolidateResult, LocalEvidenceArchive
from evidence_tool.workspace.descriptor import Installation, load_installation, resolve_actor


@dataclass
class Session:
    root: Path
    installation: Installation
    archive: LocalEvidenceArchive

    @classmethod
    def open(
        cls, root: str | os.PathLike[str], installation: str | None, wait: float = 0.0
    ) -> Session:
        inst = load_installation(installation)
        return cls(Path(root), inst, LocalEvidenceArchive(root, wait=wait))

    def actor(self, explicit: str | None = None) -> str:
        return resolve_actor(explicit, self.installation)

    def activation(self) -> Activate | None:
        return backend_for(self.installation.section("activation"), self.archive.layout)

    def consolidate(
        self, actor: str, activate: Activate | None, dry_run: bool = False
    ) -> ConsolidateResult:
        """Consolidate the working files; the first one on a legacy workspace (one still
        holding evidence/manifest.yaml) converts it to v4 first (SPEC.md 7)."""
        from evidence_tool.migrate import consolidate

        return consolidate(self.archive, actor, activate, dry_run)

    def status(self) -> dict[str, Any]:
        return queries.status(self.archive)

    def show(self, unit_id: str) -> dict[str, Any]:
        return queries.show(self.archive, unit_id)
