"""The power-loss model itself: what it keeps, loses and garbles (so its passes mean something)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from powerloss import PowerLoss

from evidence_tool import fsio


class Cut(Exception):
    pass


def cut_at(root: Path, variant: str, fsync_no: int, action: Callable[[], None]) -> None:
    """Run ``action`` with the model watching; cut the power before its ``fsync_no``-th fsync."""
    loss = PowerLoss(root, variant, seed=1)
    seen = [0]

    def hook(op: str, path: str, phase: str) -> None:
        loss.observe(op, path, phase)
        if op == "fsync" and phase == "before":
            seen[0] += 1
            if seen[0] == fsync_no:
                fsio.set_hook(None)
                loss.crash()
                raise Cut()

    fsio.set_hook(hook)
    try:
        with pytest.raises(Cut):
            action()
    finally:
        fsio.set_hook(None)


def test_a_rename_whose_folder_was_not_fsynced_is_lost(tmp_path: Path) -> None:
    (tmp_path / "state.yaml").write_bytes(b"old")
    # write_atomic: fsync(temp) is #1, fsync(folder) after the rename is #2.
    cut_at(tmp_path, "kept", 2, lambda: fsio.write_atomic(tmp_path / "state.yaml", b"new"))
    assert (tmp_path / "state.yaml").read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.yaml"]  # the temp never landed


def test_a_synced_rename_survives(tmp_path: Path) -> None:
    (tmp_path / "state.yaml").write_bytes(b"old")

    def two_writes() -> None:
        fsio.write_atomic(tmp_path / "state.yaml", b"new")
        fsio.write_atomic(tmp_path / "other", b"x")

    cut_at(tmp_path, "dropped", 3, two_writes)  # before the second file's fsync
    assert (tmp_path / "state.yaml").read_bytes() == b"new"
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize(
    "variant,check",
    [
        ("kept", lambda data: data == b"one\ntwo\n"),
        ("dropped", lambda data: data == b"one\n"),
        ("garbled", lambda data: data.startswith(b"one\n") and data != b"one\ntwo\n"),
    ],
)
def test_unsynced_appended_bytes_are_kept_dropped_or_garbled(
    tmp_path: Path, variant: str, check: Callable[[bytes], bool]
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"one\n")
    cut_at(tmp_path, variant, 1, lambda: fsio.append_line(log, b"two\n"))
    assert check(log.read_bytes()), log.read_bytes()


def test_a_folder_whose_parent_was_not_fsynced_is_lost(tmp_path: Path) -> None:
    cut_at(tmp_path, "kept", 1, lambda: fsio.makedirs(tmp_path / "a" / "b"))
    assert list(tmp_path.iterdir()) == []
