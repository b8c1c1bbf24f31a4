"""The catalog record (.evidence-cache/catalog-review.json) under attack: a held lock, a
damaged or foreign file in its place.  The check's findings always stand; readers
(status, the review page) never fail over the record and never read through a link."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from cli_runner import invoke, tht

from evidence_tool.report import collect

REPO = Path(__file__).resolve().parents[2]
DDL = ["--catalog", "ddl", "--ddl", str(REPO / "fixtures" / "warehouse")]
RECORD = ".evidence-cache/catalog-review.json"
HOLDER = textwrap.dedent(
    """\
    import sys, time
    from pathlib import Path
    from evidence_tool.archive.lock import ArchiveLock

    lock = ArchiveLock(Path(sys.argv[1]) / ".evidence-archive.lock", "holder").acquire()
    print("ready", flush=True)
    time.sleep(120)
    """
)
FOREIGN = {
    "format": 1,
    "units": {},
    "review_items": {"evidence:psd:x": [{"code": "E191", "message": "planted"}]},
}


def _check(ws: Path) -> dict:
    result = tht(ws, "check", *DDL)
    assert result.exit_code == 0, result.stdout
    return result.json


def test_attack_lock_held_by_another_process_during_a_check(workspace: Path) -> None:
    _check(workspace)
    before = (workspace / RECORD).read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        held = _check(workspace)  # the check stands, with its findings and exit status
        assert held["result"]["units_checked"] == 48
        notes = [w["message"] for w in held["warnings"] if "catalog record" in w["message"]]
        assert len(notes) == 1 and "holder" in notes[0]
        assert (workspace / RECORD).read_bytes() == before
    finally:
        proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    _check(workspace)
    assert json.loads((workspace / RECORD).read_bytes())["checked_at"]


def test_attack_record_replaced_by_garbage_a_folder_or_a_foreign_link(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(FOREIGN), encoding="utf-8")
    record = workspace / RECORD
    cases = 0
    for plant in ("garbage", "folder", "link"):
        if record.is_dir() and not record.is_symlink():
            record.rmdir()
        elif record.exists() or record.is_symlink():
            record.unlink()
        record.parent.mkdir(exist_ok=True)
        if plant == "garbage":
            record.write_bytes(b"\x00{not json")
        elif plant == "folder":
            record.mkdir()
        else:
            record.symlink_to(outside)
        status = tht(workspace, "status")
        assert status.exit_code == 0, (plant, status.stdout)
        assert status.json["result"]["catalog"] == {"checked": False, "review_items": {}}, plant
        assert collect(workspace).catalog is None, plant  # no panel: no run to show
        checked = tht(workspace, "check", *DDL)
        assert checked.exit_code == 0, (plant, checked.stdout)
        if plant == "folder":  # not replaceable: said, and the check stands
            assert any("catalog record" in w["message"] for w in checked.json["warnings"])
            assert record.is_dir()
        else:
            assert record.is_file() and not record.is_symlink(), plant
            assert json.loads(record.read_bytes())["units"], plant
        cases += 1
    assert cases == 3
    assert json.loads(outside.read_text(encoding="utf-8")) == FOREIGN


def test_attack_cache_folder_replaced_by_a_file_or_the_lock_by_a_folder(workspace: Path) -> None:
    """A checkout where the record cannot be written: the check's answer stands."""
    cache, lock = workspace / ".evidence-cache", workspace / ".evidence-archive.lock"
    cases = 0
    for plant in ("cache-file", "lock-folder"):
        if plant == "cache-file":
            cache.write_text("not a folder", encoding="utf-8")
        else:
            cache.unlink()
            lock.unlink(missing_ok=True)
            lock.mkdir()
        result = tht(workspace, "check", *DDL)
        assert result.exit_code == 0, (plant, result.stdout)
        assert result.json["result"]["units_checked"] == 48
        notes = [w["message"] for w in result.json["warnings"] if "catalog record" in w["message"]]
        assert len(notes) == 1, (plant, result.json["warnings"])
        cases += 1
    assert cases == 2 and lock.is_dir() and not cache.exists()


def test_attack_review_items_of_the_wrong_shape_are_listed_not_a_traceback(
    workspace: Path,
) -> None:
    """A hand-edited record whose items are not objects, or lack a code or message:
    `status` lists what it can read and says the rest is unreadable (exit 0)."""
    assert tht(workspace, "consolidate").exit_code == 0
    _check(workspace)
    record = workspace / RECORD
    rec = json.loads(record.read_bytes())
    uid = "evidence:lab:result-flag"
    good = {"code": "E191", "message": "a readable item"}
    shapes = [3, "text", None, [good], {}, {"code": 7, "message": ["m"]}, {"code": "E191"}]
    rec["review_items"] = {uid: [good, *shapes]}
    rec["units"] = {}
    record.write_text(json.dumps(rec), encoding="utf-8")
    status = tht(workspace, "status")
    assert status.exit_code == 0, (status.stdout, status.stderr)
    assert status.json["result"]["catalog"]["review_items"][uid][0] == good
    plain = invoke(["workspace", "evidence", "status", "--workspace-root", str(workspace)])
    assert plain.exit_code == 0, (plain.stdout, plain.stderr)
    text = plain.stdout
    lines = [line for line in text.splitlines() if line.startswith("catalog review item on")]
    assert any(line.endswith("E191 a readable item") for line in lines), lines
    unreadable = [line for line in lines if "unreadable" in line]
    assert len(unreadable) == len(shapes), lines


def test_attack_unreadable_review_items_are_said_alike_by_status_and_the_page(
    workspace: Path,
) -> None:
    """The review page read the same hand-edited items as `status` but dropped what was
    not an object (and showed 'None' for a missing code): both now narrow the items the
    same way, list each unreadable one with what to do, and warn W189 once."""
    from evidence_tool.report.page import render_page

    assert tht(workspace, "consolidate").exit_code == 0
    _check(workspace)
    record = workspace / RECORD
    rec = json.loads(record.read_bytes())
    flag = "evidence:lab:result-flag"
    second, third = sorted(uid for uid in rec["units"] if uid != flag)[:2]
    good = {
        "code": "E191",
        "message": "a readable item",
        "raised_by": "catalog",
        "raised_at": "2026-01-02T03:04:05Z",
    }
    rec["review_items"] = {
        flag: [good, 5, {"message": "no code"}, ["x"]],
        second: "not a list",
        third: [None, {"code": "E191", "message": 3}],
    }
    unreadable = {flag: 3, second: 1, third: 2}
    record.write_text(json.dumps(rec), encoding="utf-8")

    status = tht(workspace, "status")
    assert status.exit_code == 0, status.stdout
    (warned,) = [w for w in status.json["warnings"] if w["code"] == "W189"]
    assert warned["path"] == RECORD and "6 unreadable" in warned["message"]
    assert "tht workspace evidence check" in warned["message"]
    plain = invoke(["workspace", "evidence", "status", "--workspace-root", str(workspace)])
    lines = [line for line in plain.stdout.splitlines() if "unreadable item" in line]
    said = {line.split(" on ", 1)[1].split(": ", 1)[0] for line in lines}
    assert len(lines) == 6 and said == set(unreadable), plain.stdout
    what = lines[0].split(": ", 1)[1]
    assert "run 'check' again" in what

    data = collect(workspace)
    cards = {c.unit.id: c for c in data.units}
    seen = 0
    for uid, count in unreadable.items():
        rows = cards[uid].catalog.review_items
        assert [r.message for r in rows if r.code == "unreadable"] == [what] * count, uid
        assert str(cards[uid].catalog.status) == "findings", uid
        seen += 1
    assert seen == 3
    first = cards[flag].catalog.review_items[0]
    assert (first.code, first.message, first.by) == ("E191", "a readable item", "catalog")
    assert "None" not in cards[flag].catalog.codes
    assert [w.code for w in data.warnings].count("W189") == 1
    page = render_page(data, "nonce")
    assert page.count("an unreadable item") == 6 and "W189" in page


def test_attack_a_units_items_written_as_one_object_are_unreadable_not_an_item(
    workspace: Path,
) -> None:
    """A unit's items that are not a list are an unreadable item (docs/catalog.md), even
    an object with a text code and message (a hand edit that dropped the brackets): the
    tool never writes that shape, so status and the page warn W189 rather than show it
    as an item the check raised."""
    assert tht(workspace, "consolidate").exit_code == 0
    _check(workspace)
    record = workspace / RECORD
    rec = json.loads(record.read_bytes())
    uid = sorted(rec["units"])[0]
    rec["review_items"] = {uid: {"code": "E191", "message": "brackets dropped"}}
    record.write_text(json.dumps(rec), encoding="utf-8")

    status = tht(workspace, "status")
    assert status.exit_code == 0, status.stdout
    (warned,) = [w for w in status.json["warnings"] if w["code"] == "W189"]
    assert "1 unreadable" in warned["message"] and uid in warned["message"]
    plain = invoke(["workspace", "evidence", "status", "--workspace-root", str(workspace)])
    said = [line for line in plain.stdout.splitlines() if line.startswith("catalog review")]
    assert len(said) == 1 and "an unreadable item" in said[0], plain.stdout

    data = collect(workspace)
    (card,) = [c for c in data.units if c.unit.id == uid]
    assert [r.code for r in card.catalog.review_items] == ["unreadable"]
    assert [w.code for w in data.warnings].count("W189") == 1
