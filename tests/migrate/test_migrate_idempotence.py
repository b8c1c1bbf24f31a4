"""Second runs, copies, dry runs and interrupted runs all reach the same bytes."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from migrate_support import LEGACY, tree_hashes

from evidence_tool import fsio
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.migrate import migrate

# Machine-local, git-ignored coordination file: holds the pid of the last lock holder.
LOCK = ".evidence-archive.lock"
# Machine-local, git-ignored cache of inodes and timestamps: differs between copies.
STAT_CACHE = ".evidence-cache/stat-cache.bin"
# Derived: the units the run that wrote the baseline happened to parse (a rerun after a
# crash parses fewer, the stat cache knowing the rest).
UNIT_RECORDS = ".evidence-cache/unit-records.bin"
# Crash at every other managed write; THT_SOAK=1 (README) crashes at every one.
STRIDE = 1 if os.environ.get("THT_SOAK") else 2


def run(cli: Callable[..., Any], root: Path, *extra: str) -> Any:
    return cli(["evidence", "migrate", str(root), "--json", *extra])


@pytest.mark.parametrize("version", ["v1", "v3"])
def test_a_second_run_is_a_no_op(
    version: str, legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo(version)
    assert run(cli, root).exit_code == 0
    before = tree_hashes(root.parent)
    res = run(cli, root)
    assert res.exit_code == 0
    assert res.json["result"]["status"] == "nothing_to_migrate"
    assert tree_hashes(root.parent) == before  # not even the lock file is touched


def test_two_copies_give_byte_identical_trees(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    a, b = legacy_repo("v3"), legacy_repo("v3")
    assert run(cli, a).exit_code == 0
    assert run(cli, b).exit_code == 0
    assert tree_hashes(a, skip=(LOCK, STAT_CACHE)) == tree_hashes(b, skip=(LOCK, STAT_CACHE))


def test_without_pinned_time_the_converted_files_are_still_identical(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision in docs/legacy-formats.md: unit files and acquired sources depend only on
    the legacy tree; the baseline records when and by whom, like every declaration."""
    monkeypatch.delenv("THT_NOW")
    a, b = legacy_repo("v1"), legacy_repo("v1")
    assert run(cli, a).exit_code == 0
    assert run(cli, b).exit_code == 0
    keep = re.compile(r"evidence/(curated|source)/.*")
    ha = {k: v for k, v in tree_hashes(a).items() if keep.fullmatch(k)}
    hb = {k: v for k, v in tree_hashes(b).items() if keep.fullmatch(k)}
    assert ha and ha == hb


def test_dry_run_writes_nothing_and_reports_the_real_plan(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v3")
    before = tree_hashes(root.parent)
    dry = run(cli, root, "--dry-run")
    assert dry.exit_code == 0
    assert tree_hashes(root.parent) == before
    plan = dry.json["result"]
    assert plan["status"] == "would_migrate" and plan["dry_run"] is True
    real = run(cli, root).json["result"]
    for key in ("units", "sources", "removed"):
        assert plan[key] == real[key], key


def test_an_existing_v4_file_is_never_overwritten(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    target = root / "evidence/curated/domain/admission-date.md"
    target.parent.mkdir(parents=True)
    target.write_text("an operator's own file\n")
    before = tree_hashes(root.parent)
    res = run(cli, root)
    assert res.exit_code == 3
    assert res.json["errors"][0]["code"] == "E301"
    assert tree_hashes(root.parent) == before


def _small_v3(root: Path) -> None:
    """Keep three units of the v3 fixture: two document-derived (one with a review item)
    and one manual, so the crash sweep below stays quick."""
    keep = ("admission-date", "triage-code", "length-of-stay")
    manifest = root / "evidence" / "manifest.yaml"
    lines = manifest.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("  - id: ") and not any(k in lines[i] for k in keep):
            os.unlink(root / lines[i + 1].split("path: ")[1])
            i += 3
            continue
        out.append(lines[i])
        i += 1
    manifest.write_text("\n".join(out))


class Crash(Exception):
    pass


def test_an_interrupted_migration_converges_when_run_again(
    legacy_repo: Callable[..., Path],
) -> None:
    reference = legacy_repo("v3")
    _small_v3(reference)
    ops: list[tuple[str, str]] = []
    fsio.set_hook(lambda op, path, phase: ops.append((op, path)) if phase == "before" else None)
    try:
        migrate(reference, "migrator")
    finally:
        fsio.set_hook(None)
    # The event log may lose an event to a crash; the lock file holds a pid.
    skip = (LOCK, STAT_CACHE, UNIT_RECORDS, "evidence/.local/log.jsonl")
    want = tree_hashes(reference, skip=skip)
    # Crash points: every write but the lock note (an in-process exception there leaks the
    # flock, which a real crash, ending the process, would release).
    points = [n for n, (_, path) in enumerate(ops) if not path.endswith(LOCK)]
    assert len(points) > 50, len(points)
    for n in points[::STRIDE]:
        root = legacy_repo("v3")
        _small_v3(root)
        calls = iter(range(len(ops)))

        def crash(op: str, path: str, phase: str, n: int = n, calls: Any = calls) -> None:
            if phase == "before" and next(calls) == n:
                raise Crash(f"{op} {path}")

        fsio.set_hook(crash)
        try:
            with pytest.raises(Crash):
                migrate(root, "migrator")
        finally:
            fsio.set_hook(None)
        result = migrate(root, "migrator")
        # A crash after the manifest is gone leaves nothing to do but what was done.
        assert result.status in ("migrated", "finished", "nothing_to_migrate"), n
        assert tree_hashes(root, skip=skip) == want, f"crash before {ops[n]}"


def _restore_legacy(root: Path, version: str) -> None:
    """Put the legacy files back, as a crash before their removal would have left them."""
    source = LEGACY / version
    for rel in (
        "evidence/manifest.yaml",
        *(
            str(p.relative_to(source))
            for p in (source / "evidence" / "units").rglob("*")
            if p.is_file()
        ),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((source / rel).read_bytes())


def test_a_run_stopped_before_removal_is_finished(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v2")
    assert run(cli, root).exit_code == 0
    after = tree_hashes(root, skip=(LOCK, "evidence/.local/log.jsonl"))
    _restore_legacy(root, "v2")
    res = run(cli, root)
    assert res.exit_code == 0, res.stdout
    assert res.json["result"]["status"] == "finished"
    assert {u["action"] for u in res.json["result"]["units"]} == {"recorded"}
    assert tree_hashes(root, skip=(LOCK, "evidence/.local/log.jsonl")) == after


def test_finishing_refuses_a_legacy_unit_changed_after_the_baseline(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    assert run(cli, root).exit_code == 0
    _restore_legacy(root, "v1")
    unit = root / "evidence/units/domain/ricoveri-validi.yaml"
    unit.write_text(unit.read_text().replace("Un ricovero", "Ogni ricovero"))
    before = tree_hashes(root.parent)
    res = run(cli, root)
    assert res.exit_code == 1
    problems = res.json["result"]["problems"]
    assert [(p["unit_id"], p["field"]) for p in problems] == [
        ("evidence:clinical:ricoveri-validi", "id")
    ]
    assert "holds other content" in problems[0]["reason"]
    assert tree_hashes(root.parent) == before


def test_unlisted_legacy_files_stay_with_a_warning(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    stray = root / "evidence/units/domain/draft.yaml"
    stray.write_text("not: listed\n")
    res = run(cli, root)
    assert res.exit_code == 0
    assert [(w["code"], w["path"]) for w in res.json["warnings"]] == [
        ("W160", "evidence/units/domain/draft.yaml")
    ]
    assert stray.is_file()
    assert not (root / "evidence/manifest.yaml").exists()


def test_existing_v4_files_join_the_baseline_or_stop_the_run(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    own = root / "evidence/curated/domain/own-rule.md"
    own.parent.mkdir(parents=True)
    own.write_text(
        "---\nschema_version: 4\nid: evidence:own-rule\nkind: domain\nlanguage: en\n"
        "purposes: [sql_generation]\n---\n\n# Own rule\n\n## Rule\n\nWritten in v4.\n"
    )
    broken = root / "evidence/curated/domain/broken.md"
    broken.write_text("no frontmatter\n")
    before = tree_hashes(root.parent)
    res = run(cli, root)
    assert res.exit_code == 1 and res.json["errors"][0]["code"] == "E101"
    assert tree_hashes(root.parent) == before
    broken.unlink()
    res = run(cli, root)
    assert res.exit_code == 0
    baseline = LocalEvidenceArchive(root).newest_snapshot()
    assert baseline is not None and baseline.entry("evidence:own-rule") is not None
