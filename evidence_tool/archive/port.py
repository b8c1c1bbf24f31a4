"""The archive's port to activation (SPEC.md 8): what consolidate may ask of a backend.

A backend activates a snapshot: returning means active, raising keeps the candidate
pending with the exception's text as the reason.  What else it can do it names in its
``capabilities``, one small protocol each, so the archive asks for a capability by name
and mypy checks every backend that declares one:

- ``index``: it keeps a derived index it can check (``holds``), so consolidate rebuilds
  an index a fresh clone or a cleared cache lost (status ``reindexed``);
- ``ahead``: it can start the candidate's activation work that needs no write while the
  snapshot is written (``begin``), and stop it if the run fails first (``cancel``);
- ``prepare``: ``init`` can ready the baseline's activation for the first consolidate;
- ``warnings``: what it found about its own set-up (W702), shown with the result.

``None`` is no backend (``kind: none``): the candidate stays pending.  A host's backend
written to the earlier contract, a bare callable (with ``holds`` if it keeps an index),
is adapted at the archive's door by ``as_port``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from evidence_tool.archive.snapshot import Snapshot
    from evidence_tool.errors import EvidenceWarning


@runtime_checkable
class Activation(Protocol):
    """Activates a snapshot (the callback contract above)."""

    def __call__(self, snapshot: Snapshot) -> None: ...


class IndexCheck(Protocol):
    """A derived index that can be checked against a snapshot."""

    def holds(self, snapshot: Snapshot) -> bool:
        """The index holds exactly ``snapshot`` (else consolidate re-activates it)."""
        ...


@runtime_checkable
class KeepsIndex(Activation, IndexCheck, Protocol):
    """A backend with a derived index it can check (the earlier contract's ``holds``)."""


class WorksAhead(Protocol):
    """Starts activation work before the snapshot is written; its pair stops it."""

    def begin(self, snapshot: Snapshot) -> None: ...

    def cancel(self) -> None: ...


class Prepares(Protocol):
    def prepare(self, snapshot: Snapshot) -> None: ...


class Reports(Protocol):
    def warnings(self) -> list[EvidenceWarning]: ...


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The optional capabilities of one backend, each None when it has not got it."""

    index: IndexCheck | None = None
    ahead: WorksAhead | None = None
    prepare: Prepares | None = None
    warnings: Reports | None = None


NONE = Capabilities()


@runtime_checkable
class ActivationPort(Activation, Protocol):
    """What the archive holds: an activation and its named capabilities."""

    @property
    def capabilities(self) -> Capabilities: ...


@dataclass(frozen=True, slots=True)
class _Adapted:
    """A bare callable as a port: it activates; ``holds`` is its only capability."""

    activate: Activation
    capabilities: Capabilities

    def __call__(self, snapshot: Snapshot) -> None:
        self.activate(snapshot)


def as_port(activate: ActivationPort | Activation | None) -> ActivationPort | None:
    """The port for what a caller handed the archive (a backend, a bare callable, None)."""
    if activate is None or isinstance(activate, ActivationPort):
        return activate
    index = activate if isinstance(activate, KeepsIndex) else None
    return _Adapted(activate, Capabilities(index=index))
