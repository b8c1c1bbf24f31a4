"""A process killed at any write of a consolidation leaves a state the next run repairs (5.4)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from archive_helpers import PYTHON, retitle

from evidence_tool.archive.local import LocalEvidenceArchive

KILLER = textwrap.dedent(
    """\
    import os, sys
    from evidence_tool import fsio
    from evidence_tool.archive.local import LocalEvidenceArchive

    root, op, fragment, phase = sys.argv[1:5]

    def die(o, path, p):
        if o == op and fragment in path and p == phase:
            os._exit(9)  # no cleanup, no finally: as if the machine lost power

    fsio.set_hook(die)
    LocalEvidenceArchive(root).consolidate("crasher")
    sys.exit(0)
    """
)

KILL_POINTS = [
    ("fsync", "/objects/", "before"),  # a half-written object temp file
    ("replace", "/snapshots/", "after"),  # a snapshot nothing points to
    ("write", "local-manifest.yaml", "before"),  # a temp file next to the manifest
    ("replace", "local-manifest.yaml", "after"),  # manifest ahead of state.yaml
    ("write", "state.yaml", "before"),
    ("fsync", "state.yaml", "before"),
]


@pytest.mark.parametrize("op,fragment,phase", KILL_POINTS, ids=lambda v: str(v))
def test_the_next_run_repairs_a_killed_consolidation(
    consolidated: Path, tht, op: str, fragment: str, phase: str
) -> None:
    retitle(consolidated / "evidence/curated/glossary/drg.md")
    killed = subprocess.run(
        [PYTHON, "-c", KILLER, str(consolidated), op, fragment, phase],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert killed.returncode == 9, killed.stderr

    result = tht("consolidate", "--no-activate", root=consolidated)

    assert result.exit_code == 0, result.stdout
    snapshot = LocalEvidenceArchive(consolidated).newest_snapshot()
    assert snapshot is not None
    assert "(revised)" in snapshot.unit_bytes(snapshot.entry("evidence:clinical:drg")).decode()
    assert not list(consolidated.rglob("*.tmp")), "temp files of the killed run remain"
    verified = tht("verify", root=consolidated)
    assert verified.exit_code == 0, verified.stdout


def test_verify_reports_a_temp_file_left_by_a_killed_process(consolidated: Path, tht) -> None:
    """Before the next locked operation sweeps it, a leftover temp file is named by verify."""
    objects = consolidated / "evidence/.local/objects"
    leftover = next(p for p in objects.iterdir() if p.is_dir()) / f".{'a' * 62}.0123456789ab.tmp"
    leftover.write_bytes(b"half")
    # What a holder killed mid-write leaves besides: its note in the lock file (a clean
    # release empties it, so the next holder sweeps only after a crash).
    (consolidated / ".evidence-archive.lock").write_text('{"pid": 999999999}')
    result = tht("verify", root=consolidated)
    assert result.exit_code == 7
    assert tht("consolidate", root=consolidated).exit_code == 0
    assert not leftover.exists()
    assert tht("verify", root=consolidated).exit_code == 0
    assert (consolidated / ".evidence-archive.lock").read_bytes() == b"", "a clean release"
