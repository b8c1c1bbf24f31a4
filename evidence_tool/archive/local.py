"""``LocalEvidenceArchive``: the archive's one face (SPEC.md 5, docs/api.md).

Reading and the lock are ``ArchiveCore``'s (core.py); each verb is its own module,
which this class calls: initialize.py, consolidate.py, and the revision-checked edits
(edits.py: get, save, remove, restore).  Activation goes through the archive's port
(port.py): a backend and its named capabilities.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from evidence_tool.archive.core import ArchiveCore, unfinished_snapshots, write_failed
from evidence_tool.archive.port import Activation, ActivationPort, as_port
from evidence_tool.archive.results import CatalogRecord, ConsolidateResult, ConsolidateStatus
from evidence_tool.archive.snapshot import Snapshot
from evidence_tool.errors import EvidenceWarning
from evidence_tool.jsonvalue import JsonObject

if TYPE_CHECKING:
    from evidence_tool.archive.edits import ArchiveEditor, WorkingUnit
    from evidence_tool.unit import Unit

__all__ = [
    "Activate",
    "CatalogRecord",
    "ConsolidateResult",
    "ConsolidateStatus",
    "LocalEvidenceArchive",
    "unfinished_snapshots",
    "write_failed",
]

# What the verbs take: the port, or a bare callable (adapted by ``as_port``).
Activate = ActivationPort | Activation


class LocalEvidenceArchive(ArchiveCore):
    """The archive of one workspace; every writing method holds the archive lock."""

    # -- initialize ----------------------------------------------------------
    def initialize(
        self,
        actor: str,
        *,
        carried: JsonObject | None = None,
        prepare: Callable[[Snapshot], None] | None = None,
    ) -> ConsolidateResult:
        """Record the current files as the baseline snapshot, without activation
        (``archive.initialize.initialize`` says how)."""
        from evidence_tool.archive.initialize import initialize

        return initialize(self, actor, carried=carried, prepare=prepare)

    # -- consolidate ---------------------------------------------------------
    def consolidate(
        self,
        actor: str,
        activate: Activate | None = None,
        dry_run: bool = False,
        *,
        warnings_as_errors: bool = False,
        extra_warnings: Sequence[EvidenceWarning] = (),
        catalog: CatalogRecord | None = None,
    ) -> ConsolidateResult:
        """Validate, derive provenance, snapshot, then activate (SPEC.md 5, steps 1-5).

        A dry run follows the same path, takes no lock and writes nothing.
        ``warnings_as_errors`` refuses the files' coded warnings, and ``extra_warnings``
        (found by a layer above, e.g. W151), as E190 before any write.
        ``catalog``: the catalog step ran; the snapshot records what it checked against.
        """
        from evidence_tool.archive.consolidate import consolidate

        refuse = list(extra_warnings) if warnings_as_errors else None
        return consolidate(self, actor, as_port(activate), dry_run, refuse=refuse, catalog=catalog)

    def consolidate_locked(
        self, actor: str, activate: Activate | None, catalog: CatalogRecord | None = None
    ) -> ConsolidateResult:
        """Consolidate while the caller already holds the lock (decide, restore);
        ``catalog`` as for ``consolidate`` (decide runs the catalog step too)."""
        from evidence_tool.archive.consolidate import consolidate_locked

        return consolidate_locked(self, actor, as_port(activate), catalog)

    # -- revision-checked edits (SPEC.md 5): the ArchiveEditor does the work ------
    def get(self, unit_id: str) -> WorkingUnit:
        """The unit as its file holds it now, with the ``file_hash`` to pass to save/remove."""
        return self._editor().get(unit_id)

    def save(self, unit: Unit, expected_file_hash: str | None, actor: str) -> WorkingUnit:
        """Write ``unit`` canonically if its file still has ``expected_file_hash`` (None: a
        new unit), else E301; the next consolidate records it."""
        return self._editor().save(unit, expected_file_hash, actor)

    def remove(self, unit_id: str, expected_file_hash: str, actor: str) -> None:
        """Delete the unit's file if it still has ``expected_file_hash`` (else E301); the next
        consolidate records the deletion and reserves the id."""
        self._editor().remove(unit_id, expected_file_hash, actor)

    def restore(
        self, unit_id: str, actor: str, activate: Activate | None = None
    ) -> ConsolidateResult:
        """Bring a deleted unit back from its last snapshot, then consolidate."""
        return self._editor().restore(unit_id, actor, as_port(activate))

    def _editor(self) -> ArchiveEditor:
        from evidence_tool.archive.edits import ArchiveEditor  # loaded by the edits only

        return ArchiveEditor(self)
