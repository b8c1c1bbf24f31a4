"""``tht workspace new`` and finding the workspace from any folder inside it (issue 15, Starting)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import CliResult
from helpers import run_tht

from evidence_tool.unit import parse_unit
from evidence_tool.unit.fields import KINDS
from evidence_tool.workspace.descriptor import load_workspace_descriptor

Cli = Callable[[list[str]], CliResult]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "first-hour")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with the sha256 of its bytes."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    ("language", "title_heading"), [("en", "## Rule"), ("it", "## Regola"), ("de", "## Rule")]
)
def test_new_with_examples_is_valid_canonical_and_consolidates(
    tmp_path: Path, cli: Cli, language: str, title_heading: str
) -> None:
    target = tmp_path / "deep" / f"ward {language}"  # missing parents, a space in the name
    options = ["--id", f"ward-{language}", "--language", language, "--name", "Ward: pilot #2"]
    created = cli(["workspace", "new", str(target), *options, "--example", "--json"])
    assert created.exit_code == 0, created.stdout
    assert created.json["result"]["root"] == str(target)

    descriptor = load_workspace_descriptor(target)
    assert (descriptor.id, descriptor.name, descriptor.default_language) == (
        f"ward-{language}",
        "Ward: pilot #2",
        language,
    )
    assert sorted(p.name for p in (target / "evidence/curated").iterdir()) == sorted(KINDS)
    units = sorted((target / "evidence/curated").rglob("*.md"))
    assert len(units) == len(KINDS) == 8
    for path in units:
        parsed = parse_unit(path.read_text(encoding="utf-8"))
        assert parsed.unit is not None and not parsed.errors, (path, parsed.errors)
        assert parsed.unit.kind == path.parent.name
        assert parsed.unit.language == language
    domain = next((target / "evidence/curated/domain").iterdir()).read_text(encoding="utf-8")
    assert f"\n{title_heading}\n" in domain

    fmt = cli(["evidence", "fmt", "--check", str(target), "--json"])
    assert fmt.exit_code == 0, fmt.stdout
    assert fmt.json["result"]["checked"] == 8 and fmt.json["result"]["changed"] == []
    validate = cli(["workspace", "evidence", "validate", "--workspace-root", str(target), "--json"])
    assert validate.exit_code == 0, validate.stdout
    assert validate.json["result"]["valid"] == 8
    assert validate.json["result"]["by_kind"] == dict.fromkeys(KINDS, 1)
    consolidated = cli(
        ["workspace", "evidence", "consolidate", "--workspace-root", str(target), "--json"]
    )
    assert consolidated.exit_code == 0, consolidated.stdout
    assert len(consolidated.json["result"]["changes"]["added"]) == 8


def test_new_without_examples_is_an_empty_valid_workspace(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "blank"
    target.mkdir()
    created = cli(["workspace", "new", str(target), "--id", "blank", "--language", "it-CH"])
    assert created.exit_code == 0, created.stderr
    assert load_workspace_descriptor(target).name == "blank"  # the name defaults to the id
    keeps = [f"evidence/curated/{kind}/.gitkeep" for kind in KINDS]  # Git keeps the folders
    assert sorted(tree(target)) == sorted([".gitignore", "workspace.yaml", *keeps])
    assert created.stdout.count("wrote") == 10
    assert all((target / "evidence/curated" / kind).is_dir() for kind in KINDS)
    validate = cli(["workspace", "evidence", "validate", "--workspace-root", str(target), "--json"])
    assert validate.exit_code == 0 and validate.json["result"]["files"] == 0


def test_new_defaults_to_the_current_folder(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    created = cli(["workspace", "new", "--id", "here", "--language", "en", "--json"])
    assert created.exit_code == 0, created.stdout
    assert (tmp_path / "workspace.yaml").is_file()
    assert created.json["workspace"] == str(tmp_path)


@pytest.mark.parametrize("example", [False, True])
def test_new_refuses_a_folder_that_already_holds_a_workspace(
    workspace: Path, cli: Cli, example: bool
) -> None:
    before = tree(workspace)
    extra = ["--example"] if example else []
    refused = cli(
        ["workspace", "new", str(workspace), "--id", "other", "--language", "en", *extra, "--json"]
    )
    assert refused.exit_code == 2, refused.stdout
    assert [e["code"] for e in refused.json["errors"]] == ["E903"]
    assert refused.json["workspace"] == str(workspace)
    assert str(workspace / "workspace.yaml") in refused.json["errors"][0]["message"]
    assert tree(workspace) == before


def test_new_keeps_what_a_non_empty_folder_already_holds(tmp_path: Path, cli: Cli) -> None:
    """A fresh clone: a README and a .gitignore of its own, no workspace yet."""
    target = tmp_path / "clone"
    target.mkdir()
    (target / "README.md").write_text("# Our evidence\n")
    (target / ".gitignore").write_bytes(b"*.pyc\n/.evidence-cache")  # no final newline
    created = cli(["workspace", "new", str(target), "--id", "clone", "--language", "en"])
    assert created.exit_code == 0, created.stderr
    assert (target / "README.md").read_text() == "# Our evidence\n"
    lines = (target / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["*.pyc", "/.evidence-cache"]
    assert not [line for line in lines[2:] if "cache" in line], "the cache was ignored already"
    assert ".evidence-archive.lock" in lines
    again = cli(["workspace", "new", str(target), "--id", "clone", "--language", "en"])
    assert again.exit_code == 2 and "E903" in again.stderr


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--id", "Ward 7", "--language", "en"], "--id"),
        (["--id", "ward7", "--language", "english"], "--language"),
        (["--id", "ward7", "--language", "en", "--name", ""], "--name"),
    ],
)
def test_new_refuses_bad_values_before_writing(
    tmp_path: Path, cli: Cli, args: list[str], option: str
) -> None:
    target = tmp_path / "t"
    result = cli(["workspace", "new", str(target), *args, "--json"])
    assert result.exit_code == 2, result.stdout
    [error] = result.json["errors"]
    assert error["code"] == "E901" and option in error["message"]
    assert not target.exists()


def test_new_refuses_a_target_that_is_a_file(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("x")
    result = cli(["workspace", "new", str(target), "--id", "n", "--language", "en", "--json"])
    assert result.exit_code == 2 and result.json["errors"][0]["code"] == "E901"
    assert str(target) in result.json["errors"][0]["message"]
    assert target.read_text() == "x"


@pytest.mark.parametrize("inside", ["evidence", "evidence/curated/glossary"])
def test_new_refuses_a_folder_inside_another_workspace_evidence(
    workspace: Path, cli: Cli, inside: str
) -> None:
    before = tree(workspace)
    target = workspace / inside / "nested"
    result = cli(["workspace", "new", str(target), "--id", "n", "--language", "en", "--json"])
    assert result.exit_code == 2 and result.json["errors"][0]["code"] == "E901"
    assert f"the workspace {workspace}" in result.json["errors"][0]["message"]
    assert tree(workspace) == before and not target.exists()


def test_example_refused_over_existing_units(tmp_path: Path, cli: Cli) -> None:
    target = tmp_path / "half"
    unit = target / "evidence/curated/glossary/x.md"
    unit.parent.mkdir(parents=True)
    unit.write_text("not ours to overwrite\n")
    result = cli(["workspace", "new", str(target), "--id", "h", "--language", "en", "--example"])
    assert result.exit_code == 2 and "E901" in result.stderr
    assert sorted(tree(target)) == ["evidence/curated/glossary/x.md"]


def test_new_workspace_in_git_status_has_no_ignore_warning(tmp_path: Path) -> None:
    """The .gitignore written by 'new' is what 'status' wants: no machine-local warning."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    assert (
        run_tht(repo, "workspace", "new", "--id", "g", "--language", "en", "--example").returncode
        == 0
    )
    assert run_tht(repo, "workspace", "evidence", "consolidate").returncode == 0
    status = run_tht(repo, "workspace", "evidence", "status", "--json")
    assert status.returncode == 0, status.stdout
    messages = [w["message"] for w in json.loads(status.stdout)["warnings"]]
    messages += [w["message"] for w in json.loads(status.stdout)["result"]["git"]["warnings"]]
    assert not [m for m in messages if "not ignored" in m], messages
    assert (repo / ".evidence-archive.lock").exists()  # the file the rule is for exists


@pytest.mark.parametrize("example", [False, True], ids=["blank", "example"])
def test_a_new_workspace_committed_and_cloned_works_in_the_clone(
    tmp_path: Path, example: bool
) -> None:
    """Git keeps no empty folder: a blank workspace's curated tree must reach a clone."""
    origin, clone = tmp_path / "north wing", tmp_path / "teammate"
    origin.mkdir()
    extra = ["--example"] if example else []
    new = run_tht(origin, "workspace", "new", "--id", "north", "--language", "it", *extra)
    assert new.returncode == 0, new.stderr
    git = ["git", "-c", "user.email=c@example.org", "-c", "user.name=Curator"]
    subprocess.run(["git", "init", "-q", str(origin)], check=True, timeout=60)
    subprocess.run([*git, "-C", str(origin), "add", "-A"], check=True, timeout=60)
    subprocess.run([*git, "-C", str(origin), "commit", "-qm", "new"], check=True, timeout=60)
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, timeout=60)
    assert all((clone / "evidence/curated" / kind).is_dir() for kind in KINDS)
    for command in (["validate"], ["consolidate"], ["verify"]):
        ran = run_tht(clone, "workspace", "evidence", *command, "--json")
        assert ran.returncode == 0, (command, ran.stdout, ran.stderr)
    assert json.loads(ran.stdout)["ok"] is True


# -- finding the workspace from inside it, as Git finds its repository ---------


@pytest.mark.parametrize("inside", ["evidence", "evidence/curated/formula", "notes/drafts"])
def test_commands_find_the_workspace_from_a_folder_inside_it(workspace: Path, inside: str) -> None:
    (workspace / inside).mkdir(parents=True, exist_ok=True)
    (workspace / "evidence/curated/glossary/drg.md").unlink()
    consolidate = run_tht(workspace / inside, "workspace", "evidence", "consolidate", "--json")
    assert consolidate.returncode == 0, consolidate.stdout + consolidate.stderr
    envelope = json.loads(consolidate.stdout)
    assert envelope["workspace"] == str(workspace)
    assert envelope["result"]["changes"]["deleted"] == ["evidence:clinical:drg"], envelope
    verify = run_tht(workspace / inside, "workspace", "evidence", "verify", "--json")
    assert verify.returncode == 0, verify.stdout
    assert json.loads(verify.stdout)["workspace"] == str(workspace)


def test_the_nearest_workspace_wins(
    workspace: Path, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = workspace / "projects" / "inner"
    (inner / "evidence/curated").mkdir(parents=True)
    (inner / "workspace.yaml").write_text(
        (workspace / "workspace.yaml").read_text().replace("id: psd-clinical", "id: inner")
    )
    monkeypatch.chdir(inner / "evidence/curated")
    shown = cli(["config", "show", "--json"])
    assert shown.exit_code == 0, shown.stdout
    assert shown.json["result"]["workspace"]["id"] == "inner"
    monkeypatch.chdir(inner.parent)
    assert cli(["config", "show", "--json"]).json["result"]["workspace"]["id"] == "psd-clinical"


@pytest.mark.parametrize(
    "failing", ["workspace.yaml", ".gitignore", "formula/average-order-value.md"]
)
def test_new_cut_short_by_a_refused_write_runs_again(
    tmp_path: Path, cli: Cli, failing: str
) -> None:
    """A full disk at any write: E604, no descriptor yet, and the same command then succeeds."""
    import errno

    from evidence_tool import fsio

    target = tmp_path / "cut"
    argv = ["workspace", "new", str(target), "--id", "cut", "--language", "en", "--example"]
    refused = []

    def disk_full(op: str, path: str, phase: str) -> None:
        if op == "replace" and phase == "before" and path.endswith(failing):
            refused.append(path)
            raise OSError(errno.ENOSPC, "No space left on device", path)

    fsio.set_hook(disk_full)
    try:
        first = cli([*argv, "--json"])
    finally:
        fsio.set_hook(None)
    assert refused, "the hook never saw the write it was meant to refuse"
    assert first.exit_code == 6 and first.json["errors"][0]["code"] == "E604", first.stdout
    assert not (target / "workspace.yaml").exists()
    again = cli(argv)
    assert again.exit_code == 0, again.stderr
    assert len(list((target / "evidence/curated").rglob("*.md"))) == 8
    assert load_workspace_descriptor(target).id == "cut"


def test_a_gitignore_edited_while_new_runs_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator saves .gitignore after new has read it and before new writes it."""
    from evidence_tool.errors import EvidenceError
    from evidence_tool.workspace import create

    target = tmp_path / "radiology"
    target.mkdir()
    ignore = target / ".gitignore"
    ignore.write_text("build/\n")
    edited = b"build/\ndist/\n"
    read_it = create._gitignore
    fired: list[bool] = []

    def then_the_operator_saves(layout: Any) -> Any:
        out = read_it(layout)
        ignore.write_bytes(edited)
        fired.append(True)
        return out

    monkeypatch.setattr(create, "_gitignore", then_the_operator_saves)
    with pytest.raises(EvidenceError) as refused:
        create.create_workspace(target, "radiology", "en")
    assert fired, "the race never happened: the test proves nothing"
    assert refused.value.code == "E903"
    assert ignore.read_bytes() == edited
    assert not (target / "workspace.yaml").exists()
