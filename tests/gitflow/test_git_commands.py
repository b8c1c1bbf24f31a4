"""``git-commands``: quoted POSIX-shell lines that stage and commit the complete evidence tree."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from gitflow_helpers import edit_unit, git, invoke, make_checkout, shell_env

# A repository and a workspace folder whose names need quoting: spaces, a single
# quote, non-ASCII letters, glob characters for the pathspec, a newline.
AWKWARD = [
    ("dépôt d'évidence", "base di conoscenza/ws ü'1"),
    ("plain", ""),
    ("globs [x]", "ws *[draft]"),
    ("two\nlines; touch pwned", "$(touch pwned)"),
    # ESC and BEL would retitle a terminal: printed as printf escapes, run as the bytes.
    ("esc\x1b]0;owned\x07top", "ws\x1b[2J"),
]


def commands(ws: Path, *, as_json: bool) -> tuple[int, str]:
    args = ["workspace", "evidence", "git-commands", "--workspace-root", str(ws)]
    result = invoke([*args, "--json"] if as_json else args)
    return result.exit_code, result.stdout


@pytest.mark.parametrize(("top_name", "prefix"), AWKWARD)
def test_printed_commands_commit_the_complete_tree(
    tmp_path: Path, top_name: str, prefix: str
) -> None:
    co = make_checkout(tmp_path / top_name, prefix, ignore_file=False)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    co.git("remote", "add", "origin", str(remote))
    co.git("push", "-q", "-u", "origin", "main")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    rel = edit_unit(co.ws)
    result = invoke(
        ["workspace", "evidence", "consolidate", "--workspace-root", str(co.ws), "--json"]
    )
    assert result.exit_code == 0, result.stdout
    revision = result.json["result"]["revision"]
    assert (co.ws / ".evidence-archive.lock").exists() and (co.ws / ".evidence-cache").is_dir()

    code, script = commands(co.ws, as_json=False)
    assert code == 0
    assert not [c for c in script if ord(c) < 0x20 and c not in "\n\t"], script
    # The printed text is a shell script: run it from another folder with sh.
    proc = subprocess.run(
        ["sh", "-e", "-c", script],
        cwd=elsewhere,
        env=shell_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, script + proc.stdout + proc.stderr
    assert not list(tmp_path.rglob("pwned")), "a folder name was executed as shell code"

    subject = co.git("log", "-1", "--format=%s").strip()
    # -z: the names as they are (git quotes a name holding a control character otherwise).
    names = co.git("diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "HEAD")
    files = set(filter(None, names.split("\0")))
    assert revision in subject
    for must in (
        rel,
        "evidence/local-manifest.yaml",
        "evidence/.local/state.yaml",
        "evidence/.local/log.jsonl",
        f"evidence/.local/snapshots/{revision}/manifest.json",
    ):
        assert co.rel(must) in files, must
    assert any(f.startswith(co.rel("evidence/.local/objects/")) for f in files)
    assert not [f for f in files if ".evidence-archive.lock" in f or ".evidence-cache" in f]
    stat = co.git("show", "--stat", "--format=", "HEAD")
    assert "local-manifest.yaml" in stat and "state.yaml" in stat
    # Everything of the evidence tree is committed; the machine-local files stay untracked.
    assert co.git("status", "--porcelain", "--", co.rel("evidence")) == ""
    assert (
        co.git("ls-files", "--", co.rel(".evidence-archive.lock"), co.rel(".evidence-cache")) == ""
    )
    assert (
        git(tmp_path, "--git-dir", str(remote), "rev-parse", "main").strip()
        == co.git("rev-parse", "HEAD").strip()
    )


def test_json_lists_the_commands(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo o'k", "sub dir/ws")
    code, out = commands(co.ws, as_json=True)
    assert code == 0
    import json

    result = json.loads(out)["result"]
    assert result["steps"] == ["status", "diff", "add", "commit", "push"]
    assert len(result["commands"]) == 5
    paths = ["sub dir/ws/evidence", "sub dir/ws/workspace.yaml", "sub dir/ws/.gitignore"]
    assert result["paths"] == paths
    for step, line in zip(result["steps"], result["commands"], strict=True):
        argv = shlex.split(line)
        assert argv[:3] == ["git", "-C", str(co.top.resolve())]
        assert step in argv
        if step != "push":
            assert argv[-4:] == ["--", *paths]
    commit = shlex.split(result["commands"][3])
    assert commit[commit.index("-m") + 1] == result["message"]
    assert result["revision"] in result["message"]


def test_unconsolidated_edits_are_a_warning(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo")
    edit_unit(co.ws)
    result = invoke(
        ["workspace", "evidence", "git-commands", "--workspace-root", str(co.ws), "--json"]
    )
    assert result.exit_code == 0
    assert [w["code"] for w in result.json["warnings"]] == ["W802"]
    assert "evidence:admission-date" in result.json["warnings"][0]["message"]


def test_outside_a_worktree_is_e602(workspace: Path) -> None:
    result = invoke(
        ["workspace", "evidence", "git-commands", "--workspace-root", str(workspace), "--json"]
    )
    assert result.exit_code == 6
    assert [e["code"] for e in result.json["errors"]] == ["E602"]
