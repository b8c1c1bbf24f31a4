"""Two curators of one workspace, each in a clone of a shared repository, consolidate
different edits; the second pulls the first's commit.  Git merges the curated files, but
the pointer files both consolidations rewrote (state.yaml, local-manifest.yaml, the log)
conflict.  Every command then said "E701 state.yaml cannot be read (YAML syntax ...);
restore it from Git", naming no merge and no side.  The error now says it is a merge and
gives the Git command that takes one side; after it, consolidate records both edits.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke, tht
from gitflow_helpers import git, shell_env


def _retitle(path: Path, suffix: str) -> str:
    text = path.read_text(encoding="utf-8")
    title = re.search(r"^# (.+)$", text, re.M)
    assert title is not None, path
    new = f"{title.group(1)} {suffix}"
    path.write_text(text.replace(title.group(0), f"# {new}", 1), encoding="utf-8")
    return new


def _commit(clone: Path, message: str) -> None:
    done = tht(clone, "consolidate")
    assert done.exit_code == 0, done.stdout + done.stderr
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("formula/average-order-value.md", "enum/order-status.md"),
        ("reference/sales-schema.md", "mapping/order-date.md"),
    ],
)
def test_a_pull_that_meets_two_consolidations_says_merge_and_recovers(
    tmp_path: Path, first: str, second: str
) -> None:
    remote = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    north = tmp_path / "north"
    git(tmp_path, "clone", "-q", str(remote), str(north))
    made = invoke(["workspace", "new", str(north), "--id", "ward", "--language", "en",
                   "--example"])  # fmt: skip
    assert made.exit_code == 0, made.stdout + made.stderr
    _commit(north, "start")
    git(north, "push", "-q", "origin", "HEAD:main")
    south = tmp_path / "south wärd #2"  # the printed command must quote the path
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(south))

    one = _retitle(north / "evidence/curated" / first, "(north)")
    _commit(north, "north's edit")
    git(north, "push", "-q", "origin", "HEAD:main")
    two = _retitle(south / "evidence/curated" / second, "(south)")
    _commit(south, "south's edit")
    pulled = subprocess.run(["git", "pull", "-q", "--no-rebase", "origin", "main"], cwd=south,
                            env=shell_env(tmp_path), capture_output=True, text=True)  # fmt: skip
    assert pulled.returncode != 0, "the managed files were expected to conflict"

    for command in ("consolidate", "status", "validate"):
        ran = tht(south, command)
        if command == "validate":  # reads no archive state: the units are fine
            assert ran.exit_code == 0, ran.stdout + ran.stderr
            continue
        assert ran.exit_code != 0 and "Traceback" not in ran.stderr, ran.stdout + ran.stderr
        (error,) = ran.json["errors"]
        assert error["code"] == "E701", error
        assert "conflict markers" in error["message"] and "merge" in error["message"], error
        fix = re.search(r"The command: (git -C .+ checkout --ours -- .+)$", error["message"])
        assert fix is not None, error["message"]
    # Run the command as the message prints it, from another folder: it names the repository.
    assert fix is not None
    done = subprocess.run(fix.group(1), shell=True, cwd=tmp_path,
                          env=shell_env(tmp_path), capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr

    merged = tht(south, "consolidate")
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    for title in (one, two):
        found = tht(south, "search", title, "--limit", "1")
        assert found.exit_code == 0, found.stdout + found.stderr
        assert found.json["result"]["hits"][0]["title"] == title, found.json["result"]
    checked = tht(south, "verify")
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    git(south, "add", "-A")
    git(south, "commit", "-q", "--no-edit")
    strict = tht(south, "verify", "--strict")
    assert strict.exit_code == 0, strict.stdout + strict.stderr


def test_a_descriptor_both_curators_changed_names_the_conflict(tmp_path: Path) -> None:
    """Each curator adds an import source: workspace.yaml conflicts where both appended.
    The error named only "YAML syntax: could not find expected ':'"."""
    remote = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    east = tmp_path / "east"
    git(tmp_path, "clone", "-q", str(remote), str(east))
    made = invoke(["workspace", "new", str(east), "--id", "lab", "--language", "en"])
    assert made.exit_code == 0, made.stdout + made.stderr
    _commit(east, "start")
    git(east, "push", "-q", "origin", "HEAD:main")
    west = tmp_path / "west"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(west))
    for clone, name in ((east, "lab-a"), (west, "lab-b")):
        folder = clone / "imports" / name
        folder.mkdir(parents=True)
        (folder / "training.json").write_text(
            '[{"id":"q1","question":"How many samples?","content":"SELECT count(*) FROM '
            'lab.samples","training_data_type":"sql"}]\n'
        )
        added = tht(clone, "sources", "add", "--format", "vanna", str(folder))
        assert added.exit_code == 0, added.stdout + added.stderr
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"{name} source")
    git(east, "push", "-q", "origin", "HEAD:main")
    pulled = subprocess.run(["git", "pull", "-q", "--no-rebase", "origin", "main"], cwd=west,
                            env=shell_env(tmp_path), capture_output=True, text=True)  # fmt: skip
    assert pulled.returncode != 0 and "workspace.yaml" in pulled.stdout + pulled.stderr

    ran = tht(west, "status")
    assert ran.exit_code != 0 and "Traceback" not in ran.stderr, ran.stdout + ran.stderr
    (error,) = ran.json["errors"]
    assert error["code"] == "E902" and "Git conflict marker" in error["message"], error
    marker = (west / "workspace.yaml").read_text().split("\n").index("<<<<<<< HEAD") + 1
    assert error["line"] == marker, (error, marker)
