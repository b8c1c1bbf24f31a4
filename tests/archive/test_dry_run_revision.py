"""A dry run reports what the real run will do, with the revision it will get
(issue 15, output people read).

Two dry runs and the real run used to give three revisions: each run stamped the new
declarations and deletions with its own clock reading, and those times enter the
manifest the revision hashes.  The times are now those of the change itself (the
file's, or for a deletion its folder's, modification time), so runs over the same
files agree.  No test here pins ``THT_NOW``: the clock really moves between runs.
"""

from __future__ import annotations

import calendar
import os
import time
from pathlib import Path

from archive_helpers import UNIT, UNIT_PATH, edit_visibly, entry, retitle

from evidence_tool.archive.clock import now
from evidence_tool.archive.local import LocalEvidenceArchive

GONE = "evidence:clinical:length-of-stay"
GONE_PATH = "evidence/curated/glossary/length-of-stay.md"
NEW = "evidence:admin:ward-beds"


def _next_second() -> None:
    """Wait until the clock (second precision, as stamped) has moved on."""
    start = now()
    deadline = time.monotonic() + 30
    while now() == start:
        assert time.monotonic() < deadline, "the clock did not move"
        time.sleep(0.05)


def _edit(ws: Path) -> None:
    edit_visibly(ws / UNIT_PATH)  # modified: a new manual declaration
    (ws / GONE_PATH).unlink()  # deleted: a deletion record
    ward = (ws / "evidence/curated/glossary/ward.md").read_text(encoding="utf-8")
    (ws / "evidence/curated/glossary/ward-beds.md").write_text(
        ward.replace("id: evidence:admin:ward", f"id: {NEW}"), encoding="utf-8"
    )  # added: a new manual declaration


def test_dry_run_dry_run_real_run_give_one_revision(consolidated: Path, tht) -> None:
    _edit(consolidated)
    runs = []
    for args in (["--dry-run"], ["--dry-run"], []):
        _next_second()
        result = tht("consolidate", "--actor", "dora", *args, root=consolidated)
        assert result.exit_code == 0, result.stdout
        runs.append(result.json["result"])

    first, second, real = runs
    assert first["revision"] == second["revision"] == real["revision"]
    assert [r["status"] for r in runs] == ["would_activate", "would_activate", "activated"]
    assert first["changes"] == real["changes"] and real["changes"]["deleted"] == [GONE]
    assert LocalEvidenceArchive(consolidated).state().active == real["revision"]


def test_a_dry_run_without_activation_says_the_candidate_would_stay_pending(
    consolidated: Path, tht
) -> None:
    retitle(consolidated / UNIT_PATH)
    dry = tht("consolidate", "--dry-run", "--no-activate", root=consolidated).json["result"]
    _next_second()
    real = tht("consolidate", "--no-activate", root=consolidated).json["result"]
    assert (dry["status"], real["status"]) == ("would_stay_pending", "pending_activation")
    assert dry["revision"] == real["revision"] == LocalEvidenceArchive(consolidated).state().pending


def _stamp(path: Path, at: str) -> None:
    seconds = calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ"))
    os.utime(path, (seconds, seconds))


def test_the_times_recorded_are_those_of_the_changes(consolidated: Path, tht) -> None:
    _edit(consolidated)
    _stamp(consolidated / UNIT_PATH, "2031-05-06T07:08:09Z")
    _stamp(consolidated / "evidence/curated/glossary/ward-beds.md", "2031-05-06T07:30:00Z")
    _stamp(consolidated / "evidence/curated/glossary", "2031-05-06T08:00:01Z")  # the unlink

    result = tht("consolidate", "--actor", "dora", root=consolidated)

    assert result.json["result"]["status"] == "activated"
    assert entry(consolidated, UNIT)["provenance"]["declared_at"] == "2031-05-06T07:08:09Z"
    assert entry(consolidated, NEW)["provenance"] == {
        "kind": "manual",
        "curator": "dora",
        "declared_at": "2031-05-06T07:30:00Z",
    }
    shown = tht("show", GONE, root=consolidated).json["result"]["deleted"]
    assert (shown["deleted_at"], shown["actor"]) == ("2031-05-06T08:00:01Z", "dora")
