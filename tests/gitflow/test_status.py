"""``status`` reports the Git state of the evidence tree and warns on partial stages."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from gitflow_helpers import FIXTURE_WORKSPACE, Checkout, edit_unit, invoke, make_checkout

CURATED = "evidence/curated/glossary/drg.md"


def status(ws: Path) -> dict[str, Any]:
    result = invoke(["workspace", "evidence", "status", "--workspace-root", str(ws), "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json  # type: ignore[no-any-return]


def paths(entries: list[dict[str, Any]]) -> list[str]:
    return [e["path"] for e in entries]


def consolidate(ws: Path) -> None:
    result = invoke(["workspace", "evidence", "consolidate", "--workspace-root", str(ws), "--json"])
    assert result.exit_code == 0, result.stdout


def test_outside_git_status_is_a_note_not_an_error(workspace: Path) -> None:
    out = status(workspace)
    git = out["result"]["git"]
    assert git["available"] is False
    assert "not inside a Git worktree" in git["note"]
    assert out["ok"] is True and out["errors"] == []
    text = invoke(["workspace", "evidence", "status", "--workspace-root", str(workspace)])
    assert (
        text.exit_code == 0
        and "git: " in text.stdout
        and "not inside a Git worktree" in text.stdout
    )


def test_clean_checkout_in_a_subfolder(checkout: Checkout) -> None:
    git = status(checkout.ws)["result"]["git"]
    assert git["available"] is True
    assert git["workspace_path"] == "knowledge base/psd"
    assert Path(git["repository"]) == checkout.top.resolve()
    assert git["branch"] == "main" and len(git["head"]) == 40
    assert git["clean"] is True and git["warnings"] == []
    assert git["staged"] == git["modified"] == git["untracked"] == []


def test_staged_unstaged_and_untracked_files(checkout: Checkout) -> None:
    ws = checkout.ws
    edit_unit(ws)  # modified, not staged
    staged = ws / CURATED
    staged.write_text(staged.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    checkout.git("add", "--", checkout.rel(CURATED))
    new = ws / "evidence/incoming/new draft.md"
    new.write_text("# a draft\n", encoding="utf-8")
    (ws / "evidence/curated/domain/ricoveri-validi.md").unlink()

    git = status(ws)["result"]["git"]
    assert git["clean"] is False
    assert git["staged"] == [{"path": CURATED, "role": "curated", "change": "modified"}]
    assert git["modified"] == [
        {
            "path": "evidence/curated/domain/admission-date.md",
            "role": "curated",
            "change": "modified",
        },
        {
            "path": "evidence/curated/domain/ricoveri-validi.md",
            "role": "curated",
            "change": "deleted",
        },
    ]
    assert git["untracked"] == [{"path": "evidence/incoming/new draft.md", "role": "authored"}]
    # The text says the same, a line per path with its change (none for an untracked one).
    text = invoke(["workspace", "evidence", "status", "--workspace-root", str(ws)]).stdout
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("git: branch main at "))
    assert lines[first].endswith(f" in {checkout.top.resolve()}")
    assert lines[first + 1 :] == [
        f"  staged: {CURATED} (modified)",
        "  modified: evidence/curated/domain/admission-date.md (modified)",
        "  modified: evidence/curated/domain/ricoveri-validi.md (deleted)",
        "  untracked: evidence/incoming/new draft.md",
    ]


def test_status_never_writes_to_the_repository(checkout: Checkout) -> None:
    """Plain 'git status' refreshes .git/index; the library must not (GIT_OPTIONAL_LOCKS=0)."""
    edit_unit(checkout.ws)
    # Same bytes, new mtime: exactly what makes a plain 'git status' rewrite the index.
    clean = checkout.ws / CURATED
    os.utime(clean, (clean.stat().st_atime + 5, clean.stat().st_mtime + 5))
    index = checkout.top / ".git" / "index"
    before = (index.stat().st_mtime_ns, hashlib.sha256(index.read_bytes()).hexdigest())
    listing = sorted(
        p.relative_to(checkout.top / ".git") for p in (checkout.top / ".git").rglob("*")
    )
    status(checkout.ws)
    assert (index.stat().st_mtime_ns, hashlib.sha256(index.read_bytes()).hexdigest()) == before
    assert (
        sorted(p.relative_to(checkout.top / ".git") for p in (checkout.top / ".git").rglob("*"))
        == listing
    )


def test_partial_stage_of_only_the_edited_markdown_warns(checkout: Checkout) -> None:
    ws = checkout.ws
    rel = edit_unit(ws)
    consolidate(ws)
    checkout.git("add", "--", checkout.rel(rel))

    out = status(ws)
    git = out["result"]["git"]
    partial = git["partial_stage"]
    assert partial["not_consolidated"] == []
    missing = partial["not_staged"]
    revision = out["result"]["state"]["active"]
    for managed in (
        "evidence/local-manifest.yaml",
        "evidence/.local/state.yaml",
        "evidence/.local/log.jsonl",
        f"evidence/.local/snapshots/{revision}/manifest.json",
    ):
        assert managed in missing
    assert any(p.startswith("evidence/.local/objects/") for p in missing)
    assert rel not in missing
    assert [w["code"] for w in out["warnings"]] == ["W801"]
    assert "partial stage" in out["warnings"][0]["message"]

    checkout.git("add", "--all", "--", checkout.rel("evidence"))
    out = status(ws)
    assert out["result"]["git"]["partial_stage"] == {"not_staged": [], "not_consolidated": []}
    assert out["warnings"] == []


def test_managed_files_staged_without_the_curated_edit_warn(checkout: Checkout) -> None:
    ws = checkout.ws
    rel = edit_unit(ws)
    consolidate(ws)
    checkout.git("add", "--all", "--", checkout.rel("evidence/.local"))
    checkout.git("add", "--", checkout.rel("evidence/local-manifest.yaml"))
    git = status(ws)["result"]["git"]
    assert git["partial_stage"]["not_staged"] == [rel]
    assert [w["code"] for w in git["warnings"]] == ["W801"]


def test_staged_edit_that_is_not_consolidated_warns(checkout: Checkout) -> None:
    ws = checkout.ws
    rel = edit_unit(ws)
    checkout.git("add", "--", checkout.rel(rel))
    out = status(ws)
    assert out["result"]["git"]["partial_stage"] == {"not_staged": [], "not_consolidated": [rel]}
    assert [w["code"] for w in out["warnings"]] == ["W802"]
    # An unstaged, unconsolidated edit next to a clean stage is later work, not a partial stage.
    checkout.git("reset", "-q")
    assert status(ws)["result"]["git"]["partial_stage"] is None


def test_half_staged_file_uses_the_index_bytes(checkout: Checkout) -> None:
    """Consolidated edit staged, then edited again: the index holds the consolidated bytes."""
    ws = checkout.ws
    rel = edit_unit(ws)
    consolidate(ws)
    checkout.git("add", "--all", "--", checkout.rel("evidence"))
    edit_unit(ws, rel)  # a later, unconsolidated edit in the working tree only
    git = status(ws)["result"]["git"]
    assert git["partial_stage"] == {"not_staged": [], "not_consolidated": []}
    assert paths(git["modified"]) == [rel]


def test_lock_file_and_cache_not_ignored_are_flagged(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo", "", ignore_file=False)
    edit_unit(co.ws)
    consolidate(co.ws)  # writes the lock file and the derived cache
    git = status(co.ws)["result"]["git"]
    assert "W803" in [w["code"] for w in git["warnings"]]
    local = next(w for w in git["warnings"] if w["code"] == "W803")
    assert ".evidence-archive.lock" in local["message"]
    # Machine-local files are never listed as evidence files.
    assert not [e for e in git["untracked"] if e["path"].startswith(".evidence")]


def test_ignored_managed_files_are_flagged(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo")
    (co.top / ".gitignore").write_text(".local/\n", encoding="utf-8")
    shutil.copytree(
        FIXTURE_WORKSPACE / "evidence/.local", co.ws / "evidence/.local", dirs_exist_ok=True
    )
    co.git("rm", "-r", "-q", "--cached", "evidence/.local")
    git = status(co.ws)["result"]["git"]
    assert "evidence/.local/state.yaml" in git["ignored"]
    assert "W804" in [w["code"] for w in git["warnings"]]
