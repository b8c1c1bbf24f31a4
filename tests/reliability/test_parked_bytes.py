"""Bytes a killed swap parked aside are an operator's until proven otherwise (issue 14, item 8).

``fsio.swap`` and ``unlink_if`` move the bytes they take out of an operator file to a
name next to it (``.<name>.<12 hex>.parked``; it was the temp name ``.tmp`` that every
sweep deletes) before checking them.  A SIGKILL between
that move and the check leaves them there; when an editor saved just before the move,
they are the operator's newest save.  The next run's recovery must compare them with
the journal's images: the images it knows may go, anything else is put back (its file
is missing) or kept under a visible name and reported (E302) -- never deleted.

Each test reaches the crash state for real (a child process SIGKILLed right before the
journaled write, the journal entry committed), then parks the bytes exactly as the
killed swap would have, and runs the next locked command in a fresh process.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evidence_tool import fsio
from evidence_tool.archive.local import LocalEvidenceArchive

REPO = Path(__file__).resolve().parents[2]
UNIT_ID = "evidence:clinical:readmission"
REL = "evidence/curated/glossary/readmission.md"

KILLED = textwrap.dedent(
    """\
    import dataclasses, os, signal, sys
    from evidence_tool import fsio
    from evidence_tool.archive.edits import ArchiveEditor
    from evidence_tool.archive.local import LocalEvidenceArchive

    ws, op, unit_id, target = sys.argv[1:5]

    def kill_before_the_journaled_write(name, path, phase):
        if path == target and name in ("replace", "unlink") and phase == "before":
            os.kill(os.getpid(), signal.SIGKILL)

    editor = ArchiveEditor(LocalEvidenceArchive(ws))
    working = editor.get(unit_id)
    fsio.set_hook(kill_before_the_journaled_write)
    if op == "remove":
        editor.remove(unit_id, working.file_hash, "mallory")
    else:
        unit = dataclasses.replace(working.unit, title=working.unit.title + " (tool)")
        editor.save(unit, working.file_hash, "mallory")
    """
)


def _env() -> dict[str, str]:
    env = {**os.environ, "THT_ACTOR": "mallory", "PYTHONPATH": str(REPO)}
    env.pop("THT_INSTALLATION", None)
    return env


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def ws(workspace: Path) -> Path:
    archive = LocalEvidenceArchive(workspace)
    archive.initialize("mallory")
    archive.consolidate("mallory")
    return workspace


def killed_mid_operation(ws: Path, op: str) -> dict[str, object]:
    """Run ``op`` in a child SIGKILLed right before it writes the unit; its journal entry."""
    target = ws / REL
    child = subprocess.run(
        [sys.executable, "-c", KILLED, str(ws), op, UNIT_ID, str(target)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    entries = sorted((ws / "evidence/.local/journal").glob("*.json"))
    assert len(entries) == 1, "the journal entry was not committed before the kill"
    entry = json.loads(entries[0].read_bytes())
    assert [f["path"] for f in entry["files"]] == [REL]
    return entry


def park(target: Path, data: bytes) -> Path:
    """What the killed swap left: the bytes it took out, under its temp name."""
    parked = target.parent / f".{target.name}.{secrets.token_hex(6)}.parked"
    assert fsio.PARKED_NAME.fullmatch(parked.name)
    parked.write_bytes(data)
    return parked


def consolidate(ws: Path) -> tuple[int, dict[str, object]]:
    argv = [sys.executable, "-m", "evidence_tool.cli.main", "workspace", "evidence"]
    out = subprocess.run(
        [*argv, "consolidate", "--workspace-root", str(ws), "--json"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def everywhere(ws: Path, data: bytes) -> list[str]:
    """Every file in the workspace holding exactly ``data``."""
    return sorted(
        p.relative_to(ws).as_posix()
        for p in ws.rglob("*")
        if p.is_file() and not p.is_symlink() and p.read_bytes() == data
    )


EDITOR_SAVE = b"---\nschema_version: 4\n# the operator's newest save, typed while the tool ran\n"


def test_attack_editor_save_parked_by_a_killed_remove_is_put_back(ws: Path) -> None:
    """unlink_if moved the file aside (an editor had just saved it) and was killed: the
    file is gone and its bytes sit under a temp name the sweep used to delete."""
    entry = killed_mid_operation(ws, "remove")
    target = ws / REL
    assert entry["files"][0]["post"] is None  # type: ignore[index]
    target.unlink()
    park(target, EDITOR_SAVE)

    code, envelope = consolidate(ws)

    assert everywhere(ws, EDITOR_SAVE) == [REL], "the editor's save is lost or misplaced"
    assert code == 3, envelope
    assert [e["code"] for e in envelope["errors"]] == ["E302"]  # type: ignore[union-attr]


def test_attack_editor_save_parked_by_a_killed_save_is_kept_and_reported(ws: Path) -> None:
    """swap exchanged the tool's bytes in (an editor had just saved) and was killed: the
    file holds the tool's post-image, the editor's bytes sit under a temp name."""
    entry = killed_mid_operation(ws, "save")
    target = ws / REL
    post = entry["files"][0]["post"]  # type: ignore[index]
    objects = ws / "evidence/.local/objects"
    tool_bytes = (objects / post[:2] / post[2:]).read_bytes()
    target.write_bytes(tool_bytes)
    park(target, EDITOR_SAVE)

    code, envelope = consolidate(ws)

    assert code == 3, envelope
    errors = envelope["errors"]
    assert [e["code"] for e in errors] == ["E302"]  # type: ignore[union-attr]
    kept = everywhere(ws, EDITOR_SAVE)
    assert len(kept) == 1, "the editor's save is lost"
    assert kept[0] in errors[0]["message"]  # type: ignore[index]
    assert not Path(kept[0]).name.startswith("."), "kept under a hidden temp name"
    assert not kept[0].endswith(".md"), "kept where the scan reads it as a second unit"
    # Until the operator settles the kept copy, every run refuses (E108) and names it:
    # an editor's bytes are never ignored quietly, nor read as a second unit.
    code, envelope = consolidate(ws)
    assert code == 1, envelope
    assert [e["code"] for e in envelope["errors"]] == ["E108"]  # type: ignore[union-attr]
    assert "set aside" in envelope["errors"][0]["message"]  # type: ignore[index]
    assert everywhere(ws, EDITOR_SAVE) == kept
    # Settled (the operator keeps the tool's version): the journaled save is finished.
    (ws / kept[0]).unlink()
    code, envelope = consolidate(ws)
    assert code == 0, envelope
    assert target.read_bytes() == tool_bytes


@pytest.mark.parametrize("op", ["remove", "save"])
def test_parked_bytes_the_journal_knows_are_cleaned_up(ws: Path, op: str) -> None:
    """The common case (no editor): the parked bytes are the pre-image the operation
    compared; the kill lands after they were parked.  The rerun completes, no E302."""
    entry = killed_mid_operation(ws, op)
    target = ws / REL
    pre_bytes = target.read_bytes()
    assert sha(pre_bytes) == entry["files"][0]["pre"]  # type: ignore[index]
    post = entry["files"][0]["post"]  # type: ignore[index]
    if post is None:
        target.unlink()
    else:
        target.write_bytes((ws / "evidence/.local/objects" / post[:2] / post[2:]).read_bytes())
    parked = park(target, pre_bytes)

    code, envelope = consolidate(ws)

    assert code == 0, envelope
    assert not parked.exists()
    assert not list((ws / "evidence/.local/journal").glob("*.json"))


KILLED_INSIDE_REMOVE = textwrap.dedent(
    """\
    import os, signal, subprocess, sys
    from evidence_tool import fsio
    from evidence_tool.archive.edits import ArchiveEditor
    from evidence_tool.archive.local import LocalEvidenceArchive

    ws, unit_id, target, editor_script = sys.argv[1:5]

    def editor_saves_then_kill_while_parked(name, path, phase):
        if path != target:
            return
        if name == "unlink" and phase == "before":
            # Another process, as an editor saves: a new file renamed over the old one.
            subprocess.run([sys.executable, "-c", editor_script, target], check=True)
        if name == "park" and phase == "step":
            os.kill(os.getpid(), signal.SIGKILL)

    editor = ArchiveEditor(LocalEvidenceArchive(ws))
    working = editor.get(unit_id)
    fsio.set_hook(editor_saves_then_kill_while_parked)
    editor.remove(unit_id, working.file_hash, "mallory")
    """
)
EDITOR = (
    "import os, sys; open(sys.argv[1] + '.swp', 'wb').write({data!r}); "
    "os.replace(sys.argv[1] + '.swp', sys.argv[1])"
)


def test_attack_editor_saves_as_remove_parks_the_file_and_the_run_is_killed(ws: Path) -> None:
    """End to end: a real editor process saves right before ``remove`` moves the file
    aside, and the run is SIGKILLed inside that one call, with the save parked."""
    target = ws / REL
    editor = EDITOR.format(data=EDITOR_SAVE)
    child = subprocess.run(
        [sys.executable, "-c", KILLED_INSIDE_REMOVE, str(ws), UNIT_ID, str(target), editor],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert not target.exists()
    parked = [p for p in target.parent.iterdir() if fsio.PARKED_NAME.fullmatch(p.name)]
    assert [p.read_bytes() for p in parked] == [EDITOR_SAVE]

    code, envelope = consolidate(ws)

    assert everywhere(ws, EDITOR_SAVE) == [REL]
    assert code == 3, envelope
    assert [e["code"] for e in envelope["errors"]] == ["E302"]  # type: ignore[union-attr]
