"""The hooks of ``.pre-commit-hooks.yaml``, run by a real pre-commit over a temporary repository.

``pre-commit try-repo`` installs this repository into a fresh virtualenv on
every call (it uses a throw-away store), which needs pip to reach the package
index and takes 10-15 s; so each call runs both hooks at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitflow_helpers import GIT_ENV, REPO, Checkout, make_checkout

from evidence_tool.unit.yaml_strict import load

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
FILES = r"^(.*/)?evidence/curated/.*\.md$"


def test_hook_manifest_declares_both_hooks() -> None:
    hooks = load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")).value
    by_id = {h["id"]: h for h in hooks}
    assert sorted(by_id) == ["evidence-fmt", "evidence-validate"]
    assert by_id["evidence-validate"]["entry"] == "tht evidence validate"
    assert by_id["evidence-fmt"]["entry"] == "tht evidence fmt --check"
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["files"] == FILES
        assert hook["pass_filenames"] is True
        assert hook["name"] and hook["description"]


def try_repo(co: Checkout, *hook: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)  # the hooks must run the package pre-commit installed
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(REPO), *hook, "--all-files", "--verbose"],
        cwd=co.top,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def sections(output: str, *names: str) -> list[str]:
    """The output of each hook (pre-commit prints 'name....Passed|Failed' and then its output)."""
    starts = sorted((output.index(name), name) for name in names)
    bounds = [*(i for i, _ in starts[1:]), len(output)]
    found = {name: output[i:end] for (i, name), end in zip(starts, bounds, strict=True)}
    return [found[name] for name in names]


@pytest.mark.skipif(
    not PRE_COMMIT.exists() or not (REPO / ".git").exists(),
    reason="needs pre-commit and this project as a Git checkout",
)
def test_hooks_pass_on_valid_units_and_fail_on_invalid_ones(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo", "workspaces/psd")
    proc = try_repo(co)  # both hooks
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("Passed") == 2, proc.stdout

    unit = co.ws / "evidence/curated/glossary/drg.md"
    unit.write_text(
        unit.read_text(encoding="utf-8").replace("kind: glossary", "kind: glosary"),
        encoding="utf-8",
    )
    other = co.ws / "evidence/curated/domain/admission-date.md"
    other.write_text(other.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")  # not canonical
    proc = try_repo(co)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    validate, fmt = sections(
        proc.stdout, "evidence units are valid", "evidence units are canonical"
    )
    assert "Failed" in validate
    assert "workspaces/psd/evidence/curated/glossary/drg.md" in validate and "E106" in validate
    assert "admission-date" not in validate
    assert "Failed" in fmt and "E117" in fmt and "admission-date.md" in fmt


def _documented_local_config() -> str:
    """The ``.pre-commit-config.yaml`` of docs/ci.md (issue 34: a real example, not a
    placeholder URL)."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    [block] = [
        b.split("```", 1)[0]
        for b in text.split("```yaml\n")[1:]
        if b.startswith("# .pre-commit-config.yaml\n")
    ]
    return block


@pytest.mark.skipif(not PRE_COMMIT.exists(), reason="needs pre-commit")
def test_the_documented_local_hooks_run_with_the_installed_tht(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo", "evidence-ws")
    (co.top / ".pre-commit-config.yaml").write_text(_documented_local_config(), encoding="utf-8")
    env = {
        **os.environ,
        **GIT_ENV,
        "PRE_COMMIT_COLOR": "never",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{PRE_COMMIT.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }

    def run_hooks() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PRE_COMMIT), "run", "--all-files"],
            cwd=co.top,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    passed = run_hooks()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.count("Passed") == 2, passed.stdout
    unit = co.ws / "evidence/curated/enum/triage-code.md"
    unit.write_text(unit.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")
    failed = run_hooks()
    assert failed.returncode == 1, failed.stdout
    assert "E117" in failed.stdout and "triage-code.md" in failed.stdout
