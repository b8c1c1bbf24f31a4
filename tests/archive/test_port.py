"""The archive's port to activation (archive/port.py, issue 32 part 4): consolidate asks a
backend for a capability by name; bare callables of the earlier contract still work."""

from __future__ import annotations

from pathlib import Path

from archive_helpers import ACTOR, UNIT_PATH, retitle

from evidence_tool.activation.backends import CommandBackend, backend_for
from evidence_tool.activation.qdrant_index import QdrantBackend
from evidence_tool.activation.sqlite_index import SqliteBackend
from evidence_tool.archive import ActivationPort, Capabilities, Snapshot
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.archive.port import as_port
from evidence_tool.archive.snapshot import snapshot_path
from evidence_tool.workspace.layout import Layout


def test_each_shipped_backend_names_the_capabilities_it_has(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path)
    sqlite = SqliteBackend(layout)
    qdrant = QdrantBackend(layout, {"collection": "c", "path": str(tmp_path / "q")})
    command = CommandBackend(layout, ["true"])
    for backend in (sqlite, qdrant, command):
        assert isinstance(backend, ActivationPort)
        assert as_port(backend) is backend  # a port is taken as it is, never wrapped
    assert sqlite.capabilities == Capabilities(sqlite, sqlite, sqlite, sqlite)
    assert qdrant.capabilities == Capabilities(index=qdrant)
    assert command.capabilities == Capabilities()
    assert backend_for({"kind": "none"}, layout) is None  # no backend: the candidate waits


class Recording:
    """A port with the ``ahead`` and ``warnings`` capabilities, recording every call."""

    def __init__(self, root: Path) -> None:
        self.snapshots = Layout.at(root).snapshots
        self.calls: list[str] = []

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(ahead=self, warnings=self)

    def begin(self, snapshot: Snapshot) -> None:
        # Asked before the snapshot is written: its manifest is not on disk yet.
        written = snapshot_path(self.snapshots, snapshot.revision).exists()
        self.calls.append(f"begin written={written}")

    def cancel(self) -> None:
        self.calls.append("cancel")

    def warnings(self) -> list[object]:
        self.calls.append("warnings")
        return []

    def __call__(self, snapshot: Snapshot) -> None:
        self.calls.append("activate")


def test_work_ahead_begins_before_the_write_and_is_not_cancelled_by_a_success(
    consolidated: Path,
) -> None:
    retitle(consolidated / UNIT_PATH, " (third)")
    backend = Recording(consolidated)
    result = LocalEvidenceArchive(consolidated).consolidate(ACTOR, backend)
    assert result.status == "activated"
    # The archive asks for no warnings: that is the face's report (Session.consolidate).
    assert backend.calls == ["begin written=False", "activate"]


def test_a_failing_activation_leaves_the_work_ahead_to_the_backend(consolidated: Path) -> None:
    class Failing(Recording):
        def __call__(self, snapshot: Snapshot) -> None:
            self.calls.append("activate")
            raise RuntimeError("index server gone")

    retitle(consolidated / UNIT_PATH, " (fourth)")
    backend = Failing(consolidated)
    result = LocalEvidenceArchive(consolidated).consolidate(ACTOR, backend)
    assert result.status == "pending_activation"
    assert result.activation_error == "index server gone"
    assert backend.calls == [
        "begin written=False",
        "activate",
    ]  # the activation joined it: no cancel


def test_a_bare_callable_and_one_with_holds_are_adapted(consolidated: Path) -> None:
    seen: list[str] = []
    archive = LocalEvidenceArchive(consolidated)
    retitle(consolidated / UNIT_PATH, " (fifth)")
    assert archive.consolidate(ACTOR, lambda s: seen.append(s.revision)).status == "activated"
    assert archive.consolidate(ACTOR, lambda s: seen.append(s.revision)).status == "unchanged"

    class Holding:  # the earlier contract: a callable with holds(), no capabilities
        def __call__(self, snapshot: Snapshot) -> None:
            seen.append("holding")

        def holds(self, snapshot: Snapshot) -> bool:
            return "holding" in seen

    assert archive.consolidate(ACTOR, Holding()).status == "reindexed"
    assert archive.consolidate(ACTOR, Holding()).status == "unchanged"
    assert seen.count("holding") == 1
