"""What an activation backend is (SPEC.md 8): a new backend is one module with one class.

``kind: none`` is no backend at all (``backend_for`` returns None): the candidate
stays pending.  Every other kind is a ``Backend``; ``sqlite`` and ``qdrant`` keep
a derived index and are ``IndexBackend`` too, so consolidate can rebuild an index
that a fresh clone or a cleared cache lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from evidence_tool.archive.snapshot import Snapshot

if TYPE_CHECKING:
    from evidence_tool.activation.backends import CommandBackend
    from evidence_tool.activation.qdrant_index import QdrantBackend
    from evidence_tool.activation.sqlite_index import SqliteBackend


@runtime_checkable
class Backend(Protocol):
    """Activates a snapshot; returning means active, raising means the candidate stays
    pending with the exception's text as the reason (the archive's callback contract)."""

    def __call__(self, snapshot: Snapshot) -> None: ...


@runtime_checkable
class IndexBackend(Backend, Protocol):
    """A backend with a derived index it can check against a snapshot."""

    def holds(self, snapshot: Snapshot) -> bool:
        """The index holds exactly ``snapshot`` (else consolidate re-activates it)."""
        ...


if TYPE_CHECKING:
    # mypy checks each backend class against its protocol here (runtime: no import).
    _command: type[Backend] = CommandBackend
    _sqlite: type[IndexBackend] = SqliteBackend
    _qdrant: type[IndexBackend] = QdrantBackend
