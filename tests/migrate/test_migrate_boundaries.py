"""Where migration runs: only inside a Git worktree, running no Git command, and as part of
the first consolidate of a legacy workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from migrate_support import git_init, tree_hashes

from evidence_tool.migrate import migrate
from evidence_tool.unit.yaml_strict import load


def test_outside_a_git_worktree_exit_6_e602_and_nothing_written(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1", git=False)
    before = tree_hashes(root.parent)
    res = cli(["evidence", "migrate", str(root), "--json"])
    assert res.exit_code == 6
    assert [e["code"] for e in res.json["errors"]] == ["E602"]
    assert tree_hashes(root.parent) == before
    text = cli(["evidence", "migrate", str(root)])
    assert text.exit_code == 6 and "E602" in text.stderr


def test_the_git_folder_itself_is_not_a_worktree(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    inside_git = root.parent / ".git" / "ws"
    root.rename(inside_git)
    res = cli(["evidence", "migrate", str(inside_git), "--json"])
    assert res.exit_code == 6 and res.json["errors"][0]["code"] == "E602"


def test_a_bare_repository_is_not_a_worktree(tmp_path: Path, cli: Callable[..., Any]) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "bare")], check=True)
    res = cli(["evidence", "migrate", str(tmp_path / "bare"), "--json"])
    assert res.exit_code == 6 and res.json["errors"][0]["code"] == "E602"


def test_without_a_git_executable_migrate_refuses_with_e602(
    legacy_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """gitpython refuses to import when no git executable is on PATH: migrate cannot
    prove Git holds the legacy tree, so it refuses (E602, exit 6), never a traceback."""
    root = legacy_repo("v2")  # a real worktree, made while git is still on PATH
    before = tree_hashes(root.parent)
    empty_bin = tmp_path / "no-git-here"
    empty_bin.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_PYTHON")}
    env["PATH"] = str(empty_bin)
    argv = [sys.executable, "-m", "evidence_tool.cli.main", "evidence", "migrate", str(root)]
    res = subprocess.run([*argv, "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 6, res.stderr
    errors = json.loads(res.stdout)["errors"]
    assert [e["code"] for e in errors] == ["E602"]
    assert "Git is not available" in errors[0]["message"]
    assert "pre-migration state" in errors[0]["message"]
    assert tree_hashes(root.parent) == before


def test_a_missing_root_is_unavailable(tmp_path: Path, cli: Callable[..., Any]) -> None:
    git_init(tmp_path)
    res = cli(["evidence", "migrate", str(tmp_path / "nowhere"), "--json"])
    assert res.exit_code == 6 and res.json["errors"][0]["code"] == "E603"


def test_no_process_is_started(
    legacy_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Git command (and no model, nothing else) runs: gitpython only reads files."""
    import git  # noqa: F401  (importing gitpython probes 'git version' once; done here)

    root = legacy_repo("v3")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"migration started a process: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    result = migrate(root, "migrator")
    assert result.status == "migrated"


def consolidate(cli: Callable[..., Any], root: Path, *extra: str) -> Any:
    return cli(
        ["workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json", *extra]
    )


def test_first_consolidate_on_a_legacy_workspace_converts_and_activates(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v2")
    res = consolidate(cli, root)
    assert res.exit_code == 0, res.stdout
    result = res.json["result"]
    assert result["status"] == "activated"
    assert result["migration"]["status"] == "migrated"
    assert len(result["migration"]["units"]) == 16
    assert any(w["code"] == "W160" for w in res.json["warnings"])
    assert not (root / "evidence" / "manifest.yaml").exists()
    state = load((root / "evidence" / ".local" / "state.yaml").read_text()).value
    assert state["active"] == result["revision"] == state["baseline"]
    # Later consolidations are ordinary ones.
    again = consolidate(cli, root)
    assert again.exit_code == 0
    assert again.json["result"]["status"] == "unchanged"
    assert "migration" not in again.json["result"]


def test_first_consolidate_dry_run_writes_nothing(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v1")
    before = tree_hashes(root.parent)
    res = consolidate(cli, root, "--dry-run")
    assert res.exit_code == 0, res.stdout
    assert res.json["result"]["status"] == "would_migrate"
    assert res.json["result"]["migration"]["status"] == "would_migrate"
    assert tree_hashes(root.parent) == before


def test_first_consolidate_keeps_the_conversion_when_review_items_block(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("v3")
    res = consolidate(cli, root)
    assert res.exit_code == 1
    assert {e["code"] for e in res.json["errors"]} == {"E140"}
    assert res.json["result"]["migration"]["status"] == "migrated"
    assert not (root / "evidence" / "manifest.yaml").exists()
    state = load((root / "evidence" / ".local" / "state.yaml").read_text()).value
    assert state["baseline"] and state["active"] is None


def test_first_consolidate_on_a_lossy_workspace_writes_nothing(
    legacy_repo: Callable[..., Path], cli: Callable[..., Any]
) -> None:
    root = legacy_repo("lossy/text-field-heading")
    before = tree_hashes(root.parent)
    res = consolidate(cli, root)
    assert res.exit_code == 1
    assert res.json["errors"][0]["code"] == "E160"
    assert tree_hashes(root.parent) == before
