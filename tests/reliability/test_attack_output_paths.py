"""Issue 14 item 4, attacked as an outsider: an output path (``report --html PATH``,
``export --output PATH``) aimed at something the operator or Git owns.

Nothing an operator wrote may be overwritten by derived output: never the descriptor,
the lock, anything under ``.git/``, the managed evidence tree or a curated unit -- not
even with ``--force`` -- and never an existing file this command did not write unless
``--force`` says so.  Unlike the examples in the issue, these aim at Git refs and
hooks, the archive's state, paths climbing back with ``..`` from a subfolder, links
whose target is protected, and a file an editor saves while the command runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from attack_workspace import fingerprint, pharmacy_workspace
from cli_runner import invoke, tht

from evidence_tool import fsio

PROTECTED = "never overwritten, not even with --force"
# (command, option) of every command that writes a file the operator names.
WRITERS = [("report", "--html"), ("export", "--output")]


def git(ws: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(ws.parent)}
    out = subprocess.run(
        ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True, env=env, timeout=60,
    )  # fmt: skip
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A small workspace that is a Git repository with one commit on ``main``."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "units")
    return ws


def write(ws: Path, command: str, option: str, target: str, *extra: str) -> Any:
    return tht(ws, command, option, target, *extra)


def refused_usage(result: Any) -> str:
    assert result.exit_code == 2, result.stdout + result.stderr
    errors = result.json["errors"]
    assert [e["code"] for e in errors] == ["E901"], errors
    return errors[0]["message"]  # type: ignore[no-any-return]


def snapshot(ws: Path) -> dict[str, dict[str, str]]:
    """Everything the operator and Git own: the descriptor, .git, evidence/, the lock."""
    return {
        rel: fingerprint(ws / rel) if (ws / rel).exists() else {}
        for rel in ("workspace.yaml", ".git", "evidence", ".evidence-archive.lock")
    }


GIT_TARGETS = [".git/refs/heads/main", ".git/config", ".git/hooks/post-checkout", ".git/index"]


@pytest.mark.parametrize("target", GIT_TARGETS)
@pytest.mark.parametrize(("command", "option"), WRITERS)
@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_attack_output_into_git_internals(
    repo: Path, command: str, option: str, target: str, force: bool
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    before = snapshot(repo)
    extra = ("--force",) if force else ()
    message = refused_usage(write(repo, command, option, str(repo / target), *extra))
    assert PROTECTED in message and ".git" in message
    assert snapshot(repo) == before
    assert not (repo / ".git/hooks/post-checkout").exists()
    assert git(repo, "rev-parse", "HEAD") == head


MANAGED_TARGETS = [
    "workspace.yaml",
    ".evidence-archive.lock",
    "evidence/.local/state.yaml",
    "evidence/local-manifest.yaml",
    "evidence/curated/glossary/form-2.md",
    "evidence/curated/glossary/form-7.md",  # a new unit file would be imported
    "evidence/incoming/exported.md",  # a new draft would be refreshed
    ".evidence-cache/.gitignore",
]


@pytest.mark.parametrize("target", MANAGED_TARGETS)
@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_output_onto_managed_files_even_with_force(
    tmp_path: Path, command: str, option: str, target: str
) -> None:
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    cache_ignore = (ws / ".evidence-cache/.gitignore").read_bytes()
    before = snapshot(ws)
    for extra in ((), ("--force",)):
        assert PROTECTED in refused_usage(write(ws, command, option, str(ws / target), *extra))
    assert snapshot(ws) == before
    assert (ws / ".evidence-cache/.gitignore").read_bytes() == cache_ignore


@pytest.mark.parametrize(
    "climb",
    ["../../workspace.yaml", "../../evidence/.local/state.yaml", "../../../pharmacy/.git/HEAD"],
)
@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_relative_path_climbing_back_from_a_subfolder(
    repo: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str, climb: str
) -> None:
    (repo / "notes/drafts").mkdir(parents=True)
    monkeypatch.chdir(repo / "notes/drafts")
    before = snapshot(repo)
    for extra in ((), ("--force",)):
        args = ["workspace", "evidence", command, option, climb, *extra]
        result = invoke([*args, "--workspace-root", str(repo), "--json"])
        assert PROTECTED in refused_usage(result)
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("link", "points_to"),
    [
        ("review.html", ".git/config"),
        ("latest.jsonl", "evidence/.local/state.yaml"),
        ("page.html", "../pharmacy/workspace.yaml"),
        ("out/units.jsonl", "../evidence/curated/glossary/form-1.md"),
    ],
)
@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_link_whose_target_is_protected(
    repo: Path, command: str, option: str, link: str, points_to: str
) -> None:
    (repo / link).parent.mkdir(exist_ok=True)
    os.symlink(points_to, repo / link)
    before = snapshot(repo)
    for extra in ((), ("--force",)):
        assert PROTECTED in refused_usage(write(repo, command, option, str(repo / link), *extra))
    assert snapshot(repo) == before
    assert os.readlink(repo / link) == points_to  # the link itself is left alone too


@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_folder_link_leading_into_the_managed_tree(
    repo: Path, command: str, option: str
) -> None:
    os.symlink("evidence/.local", repo / "exports")
    before = snapshot(repo)
    for extra in ((), ("--force",)):
        for name in ("state.yaml", "fresh.out"):
            result = write(repo, command, option, str(repo / "exports" / name), *extra)
            assert PROTECTED in refused_usage(result)
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("command", "option", "name"),
    [("report", "--html", "notes/summary.html"), ("export", "--output", "data/units.jsonl")],
)
def test_attack_operator_file_kept_unless_force(
    tmp_path: Path, command: str, option: str, name: str
) -> None:
    """An operator's file at the output path is refused without --force; what the command
    wrote itself is replaced freely, until the operator edits it (then it is theirs)."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    target = ws / name
    target.parent.mkdir()
    target.write_text("operator notes, written by hand\n")
    message = refused_usage(write(ws, command, option, str(target)))
    assert "--force" in message and name in message
    assert target.read_text() == "operator notes, written by hand\n"

    assert write(ws, command, option, str(target), "--force").exit_code == 0
    first = target.read_bytes()
    assert first != b"operator notes, written by hand\n"
    assert write(ws, command, option, str(target)).exit_code == 0  # its own output: no --force

    target.write_bytes(first + b"\nreviewed by ward 7\n")  # the operator edits it
    refused_usage(write(ws, command, option, str(target)))
    assert target.read_bytes().endswith(b"reviewed by ward 7\n")


def test_attack_one_command_does_not_take_over_the_other_ones_output(tmp_path: Path) -> None:
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    target = ws / "shared.out"
    assert tht(ws, "report", "--html", str(target)).exit_code == 0
    page = target.read_bytes()
    refused_usage(tht(ws, "export", "--output", str(target)))
    assert target.read_bytes() == page


@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_editor_saves_at_the_output_path_while_the_command_runs(
    tmp_path: Path, command: str, option: str
) -> None:
    """The check passed (no file there), then an editor saved one just before the
    rename: the editor's bytes win and the command reports a conflict."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    target = ws / "handover.txt"
    saved = b"handover for the night shift\n"
    fired: list[str] = []

    def editor_saves(op: str, path: str, phase: str) -> None:
        if op == "replace" and path == str(target) and phase == "before" and not fired:
            fired.append(path)
            target.write_bytes(saved)

    fsio.set_hook(editor_saves)
    try:
        result = tht(ws, command, option, str(target))
    finally:
        fsio.set_hook(None)
    assert fired == [str(target)]
    assert result.exit_code == 3, result.stdout
    assert [e["code"] for e in result.json["errors"]] == ["E301"]
    assert target.read_bytes() == saved
    assert not [p for p in ws.iterdir() if p.name.endswith(".tmp")]


def test_the_decision_record_cannot_be_forged_into_a_takeover(tmp_path: Path) -> None:
    """The record of what a command wrote is derived data in .evidence-cache: a record
    naming a protected file (a hostile or stale cache) still never opens it up."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    assert tht(ws, "report", "--html", str(ws / "page.html")).exit_code == 0
    ledger = ws / ".evidence-cache/outputs.json"
    data = json.loads(ledger.read_text())
    before = (ws / "workspace.yaml").read_bytes()
    forged = {**next(iter(data["outputs"].values())), "sha256": hashlib.sha256(before).hexdigest()}
    data["outputs"]["workspace.yaml"] = forged
    ledger.write_text(json.dumps(data))
    for extra in ((), ("--force",)):
        result = tht(ws, "report", "--html", str(ws / "workspace.yaml"), *extra)
        assert PROTECTED in refused_usage(result)
    assert (ws / "workspace.yaml").read_bytes() == before


@pytest.mark.parametrize(("command", "option"), WRITERS)
@pytest.mark.parametrize("below", ["x.out", "deeper/x.out"])
def test_attack_output_below_a_file_named_as_a_folder(
    tmp_path: Path, command: str, option: str, below: str
) -> None:
    """A careless path through a file (``notes.txt/x.out``) or through a link that loops:
    a usage error, not a crash."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    (ws / "shift-notes.txt").write_text("keep me\n")
    message = refused_usage(write(ws, command, option, str(ws / "shift-notes.txt" / below)))
    assert "shift-notes.txt" in message
    assert (ws / "shift-notes.txt").read_text() == "keep me\n"
    os.symlink("spiral", ws / "spiral")  # a link to itself: resolving it loops
    assert "cannot be used" in refused_usage(write(ws, command, option, str(ws / "spiral" / below)))


@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_attack_disk_full_while_writing_the_output(
    tmp_path: Path, command: str, option: str
) -> None:
    """ENOSPC in the middle of the output: E604 naming the file, nothing half-written,
    the operator's earlier file (replaced with --force) intact."""
    ws = pharmacy_workspace(tmp_path / "pharmacy")
    target = ws / "ward-report.out"
    target.write_bytes(b"the previous handover\n")
    failed: list[str] = []

    def full(op: str, path: str, phase: str) -> None:
        if op == "write" and os.path.dirname(path) == str(ws) and phase == "before":
            failed.append(path)
            raise OSError(28, "No space left on device", path)

    fsio.set_hook(full)
    try:
        result = write(ws, command, option, str(target), "--force")
    finally:
        fsio.set_hook(None)
    assert failed, "the fault was never injected"
    assert result.exit_code == 6, result.stdout + result.stderr
    error = result.json["errors"][0]
    assert error["code"] == "E604" and error["path"] == "ward-report.out"
    assert "No space left" in error["message"]
    assert target.read_bytes() == b"the previous handover\n"
    assert sorted(p.name for p in ws.iterdir() if p.name.endswith(".tmp")) == []


def test_attack_sweep_of_crafted_output_paths_never_touches_a_protected_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every path of up to three parts built from ``..``, ``.``, Git and evidence names,
    links into protected places and ordinary names, given from a subfolder, with
    ``force``: each claim is refused or written, and afterwards every protected file is
    byte for byte as before (checked by hashing, not by the rule's own code)."""
    from evidence_tool.errors import UsageError
    from evidence_tool.workspace import outputs
    from evidence_tool.workspace.layout import Layout

    os.symlink(".git", repo / "link-git")
    os.symlink("evidence/.local", repo / "link-local")
    os.symlink("workspace.yaml", repo / "link-desc")
    (repo / "notes").mkdir()
    monkeypatch.chdir(repo / "notes")
    parts = ["..", ".", ".git", "evidence", "link-git", "link-local", "link-desc"]
    parts += ["workspace.yaml", "HEAD", "config", "state.yaml", "notes", "page.out"]
    layout = Layout.at(repo)
    before = snapshot(repo)
    cache_ignore = (repo / ".evidence-cache/.gitignore").read_bytes()
    outcome = {"refused": 0, "written": 0}
    cases = [(a,) for a in parts] + [(a, b) for a in parts for b in parts]
    cases += [("..", a, b) for a in parts for b in parts]
    for case in cases:
        given = os.path.join(*case)
        try:
            out = outputs.claim(layout, given, command="export", option="--output", force=True)
        except UsageError:
            outcome["refused"] += 1
            continue
        outputs.write(layout, out, b"derived\n")
        outcome["written"] += 1
    assert snapshot(repo) == before
    assert (repo / ".evidence-cache/.gitignore").read_bytes() == cache_ignore
    assert outcome["refused"] + outcome["written"] == len(cases) == 13 + 169 + 169
    assert outcome["refused"] > 200 and outcome["written"] > 5, outcome
