"""A command run outside a workspace fails with E603 and the folder it looked at (issue 14 item 10 c, e).

A CI job that runs ``verify`` in the wrong folder used to pass ("ok"), and a
workspace whose ``workspace.yaml`` is gone used to be read as one.  A
workspace has a descriptor; without one every workspace command stops with
E603, names the absolute folder it tried and the two ways out, and writes
nothing.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from cli_runner import subcommands
from helpers import run_tht

from evidence_tool.cli.main import cli as tht_group


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "ci-runner")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def listing(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder): proof nothing was written."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = path.read_bytes() if path.is_file() else None
    return found


def _workspace_commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command that takes --workspace-root, i.e. works on one workspace."""
    found = []
    for name, cmd in sorted(subcommands(group).items()):
        if isinstance(cmd, click.Group):
            found += _workspace_commands(cmd, (*path, name))
        elif any("--workspace-root" in p.opts for p in cmd.params):
            found.append(((*path, name), cmd))
    return found


def _dummy_args(cmd: click.Command) -> list[str]:
    """Values for the required arguments and options, so that parsing succeeds."""
    args: list[str] = []
    for param in cmd.params:
        if not param.required:
            continue
        value = param.type.choices[0] if isinstance(param.type, click.Choice) else "1"
        value = str(value)
        args += [value] if isinstance(param, click.Argument) else [param.opts[0], value]
    return args


WORKSPACE_COMMANDS = _workspace_commands(tht_group)


@pytest.mark.parametrize("verb", ["verify", "status", "log"])
def test_attack_ci_job_runs_verify_in_a_folder_that_is_not_a_workspace(
    tmp_path: Path, verb: str
) -> None:
    # A checkout of some other project: files, a sub-folder, but no workspace.yaml anywhere.
    wrong = tmp_path / "other project" / "build"
    (wrong / "src").mkdir(parents=True)
    (wrong / "README.md").write_text("# not a workspace\n")
    before = listing(tmp_path)

    text = run_tht(wrong, "workspace", "evidence", verb)
    assert text.returncode == 6, text
    assert "E603" in text.stderr
    assert str(wrong) in text.stderr, "the message names the absolute folder it looked at"
    assert "--workspace-root" in text.stderr and "tht workspace new" in text.stderr
    assert ": ok" not in text.stdout and "checked" not in text.stdout

    as_json = run_tht(wrong, "workspace", "evidence", verb, "--json")
    assert as_json.returncode == 6
    import json

    envelope = json.loads(as_json.stdout)
    assert envelope["ok"] is False
    assert [e["code"] for e in envelope["errors"]] == ["E603"]
    assert envelope["errors"][0]["path"] == str(wrong)
    assert listing(tmp_path) == before, "a command outside a workspace wrote something"


def test_every_workspace_command_outside_a_workspace_is_e603(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[[list[str]], Any]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    ran = []
    for path, cmd in WORKSPACE_COMMANDS:
        result = cli([*path, *_dummy_args(cmd), "--json"])
        name = " ".join(path)
        assert result.exit_code == 6, f"tht {name}: exit {result.exit_code}\n{result.stdout}"
        errors = result.json["errors"]
        assert [e["code"] for e in errors] == ["E603"], f"tht {name}: {errors}"
        assert str(empty) in errors[0]["message"], f"tht {name}: {errors[0]['message']}"
        ran.append(name)
    # Every archive, source, activation and report command is in the sweep.
    assert len(ran) >= 20, ran
    for name in ("workspace evidence verify", "workspace evidence init", "config show"):
        assert name in ran
    assert list(empty.iterdir()) == [], "a command outside a workspace wrote something"


@pytest.mark.parametrize("verb", ["validate", "consolidate", "verify", "status", "init"])
def test_attack_workspace_descriptor_deleted(
    workspace: Path, cli: Callable[[list[str]], Any], verb: str
) -> None:
    (workspace / "workspace.yaml").unlink()
    before = listing(workspace)
    result = cli(["workspace", "evidence", verb, "--workspace-root", str(workspace), "--json"])
    assert result.exit_code == 6, result
    errors = result.json["errors"]
    assert [e["code"] for e in errors] == ["E603"]
    assert str(workspace / "workspace.yaml") in errors[0]["message"]
    assert listing(workspace) == before


def test_attack_workspace_descriptor_deleted_found_from_inside(tmp_path: Path) -> None:
    """Run from inside the curated tree of a workspace that lost its descriptor."""
    ws = tmp_path / "ws"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "workspace", ws)
    (ws / "workspace.yaml").unlink()
    inside = ws / "evidence" / "curated" / "enum"
    result = run_tht(inside, "workspace", "evidence", "verify")
    assert result.returncode == 6, result
    assert "E603" in result.stderr and str(inside) in result.stderr


def test_attack_workspace_root_names_a_folder_inside_the_workspace(
    workspace: Path, cli: Callable[[list[str]], Any]
) -> None:
    inner = workspace / "evidence"
    result = cli(["workspace", "evidence", "verify", "--workspace-root", str(inner), "--json"])
    assert result.exit_code == 6
    message = result.json["errors"][0]["message"]
    assert result.json["errors"][0]["code"] == "E603"
    # The workspace above it is named, so the fix is one edit away.
    assert f"--workspace-root {workspace}" in message, message


def test_attack_migrate_pointed_at_a_checkout_that_is_not_a_workspace(
    tmp_path: Path, cli: Callable[[list[str]], Any]
) -> None:
    """'nothing to migrate' (exit 0) in the wrong checkout would let a migration job pass."""
    repo = tmp_path / "some-repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    (repo / "notes.md").write_text("# notes\n")
    before = listing(repo)
    result = cli(["evidence", "migrate", str(repo), "--json"])
    assert result.exit_code == 6, result.stdout
    assert [e["code"] for e in result.json["errors"]] == ["E603"]
    assert str(repo / "workspace.yaml") in result.json["errors"][0]["message"]
    assert listing(repo) == before
