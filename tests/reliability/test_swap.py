"""fsio's compare-and-swap for operator files: an editor's save is never replaced.

Regression: ``decide replace`` raced an editor saving in a loop and replaced
one of its saves in about 1 run of 20 -- the check that the file still held
the compared bytes came milliseconds before the rename.  The swap now checks
right before an atomic exchange and checks the bytes it took out again; these
tests put the editor's save in each remaining window deterministically.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from evidence_tool import fsio
from evidence_tool.fsio import swap as fsio_swap

PRE, OURS, THEIRS, NEWER = b"pre\n", b"ours\n", b"theirs\n", b"newer\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def editor_save(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".editor")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != "unit.md")


@pytest.fixture
def unit(tmp_path: Path) -> Path:
    path = tmp_path / "unit.md"
    path.write_bytes(PRE)
    return path


def test_the_compared_bytes_are_replaced(unit: Path) -> None:
    fsio.write_atomic(unit, OURS, expected=sha(PRE))
    assert unit.read_bytes() == OURS and leftovers(unit.parent) == []


def test_a_save_before_the_check_is_kept(unit: Path) -> None:
    editor_save(unit, THEIRS)
    with pytest.raises(fsio.Changed):
        fsio.write_atomic(unit, OURS, expected=sha(PRE))
    assert unit.read_bytes() == THEIRS and leftovers(unit.parent) == []


def test_a_save_between_the_check_and_the_exchange_is_put_back(
    unit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fsio_swap._exchange
    calls = []

    def racing(a: Path, b: Path) -> bool:
        if not calls:
            editor_save(b, THEIRS)  # lands after the check, before the exchange
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(fsio_swap, "_exchange", racing)
    with pytest.raises(fsio.Changed):
        fsio.write_atomic(unit, OURS, expected=sha(PRE))
    assert unit.read_bytes() == THEIRS and leftovers(unit.parent) == []


def test_a_newer_save_during_the_repair_stays(unit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fsio_swap._exchange
    calls = []

    def racing(a: Path, b: Path) -> bool:
        calls.append(1)
        if len(calls) == 1:
            editor_save(b, THEIRS)
        elif len(calls) == 2:
            editor_save(b, NEWER)  # saved over ours before we could give THEIRS back
        return real(a, b)

    monkeypatch.setattr(fsio_swap, "_exchange", racing)
    with pytest.raises(fsio.Changed):
        fsio.write_atomic(unit, OURS, expected=sha(PRE))
    assert unit.read_bytes() == NEWER and leftovers(unit.parent) == []


def test_creating_never_replaces_a_file_that_appeared(tmp_path: Path) -> None:
    path = tmp_path / "unit.md"
    path.write_bytes(THEIRS)
    with pytest.raises(fsio.Changed):
        fsio.write_atomic(path, OURS, expected=None)
    assert path.read_bytes() == THEIRS and leftovers(tmp_path) == []


def test_removing_only_removes_the_compared_bytes(unit: Path) -> None:
    editor_save(unit, THEIRS)
    with pytest.raises(fsio.Changed):
        fsio.unlink(unit, expected=sha(PRE))
    assert unit.read_bytes() == THEIRS and leftovers(unit.parent) == []
    fsio.unlink(unit, expected=sha(THEIRS))
    assert not unit.exists() and leftovers(unit.parent) == []
