"""docs/ci.md is tested like code: its workflow loads and runs, its shell examples run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gitflow_helpers import FIXTURE_WORKSPACE, REPO, edit_unit, make_checkout, shell_env
from markdown_it import MarkdownIt

from evidence_tool.unit.yaml_strict import load

DOC = REPO / "docs" / "ci.md"
YAML_HEADERS = {
    "# workspace.yaml",
    "# installation descriptor",
    "# local-manifest.yaml",
    "# state.yaml",
    "# .pre-commit-config.yaml",
}
UNCHECKED = {"bash", "shell", "console", "shell-session", "zsh", "yml", "jsonc", "md"}


def fences(lang: str | None = None) -> list[tuple[str, str]]:
    tokens = MarkdownIt("commonmark").parse(DOC.read_text(encoding="utf-8"))
    found = [(t.info.strip(), t.content) for t in tokens if t.type == "fence"]
    return [f for f in found if lang is None or f[0] == lang]


def workflow() -> dict[str, Any]:
    [(_, text)] = fences("github-actions")
    doc = load(text)
    assert not doc.duplicates
    return doc.value  # type: ignore[no-any-return]


def test_fences_are_ones_the_docs_tests_know() -> None:
    for lang, text in fences():
        assert lang not in UNCHECKED, f"```{lang} escapes the docs tests"
        if lang == "yaml":
            assert text.split("\n", 1)[0] in YAML_HEADERS


def test_workflow_structure() -> None:
    flow = workflow()
    assert set(flow) == {"name", "on", "permissions", "jobs"}
    assert set(flow["on"]) == {"pull_request", "push"}
    assert flow["permissions"]["security-events"] == "write"
    [job] = flow["jobs"].values()
    assert job["runs-on"] == "ubuntu-latest"
    steps = job["steps"]
    assert all(("uses" in s) != ("run" in s) for s in steps)
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    sarif = "github/codeql-action/upload-sarif"
    assert uses == ["actions/checkout", "actions/setup-python", sarif, sarif]
    categories = [s["with"]["category"] for s in steps if s.get("uses", "").startswith(sarif)]
    assert categories == ["evidence-catalog", "evidence-validate"]  # one per SARIF run
    runs = "\n".join(s["run"] for s in steps if "run" in s)
    for needed in (
        'validate --workspace-root "$EVIDENCE_ROOT" --format github',
        "--format sarif",
        "verify --strict --json",
        "consolidate --dry-run --json",
        "fmt --check",
        "workspace evidence check --workspace-root",
        "--fail-on-drop",
        "--min-recall",
    ):
        assert needed in runs
    tht_lines = [line for line in runs.splitlines() if line.strip().startswith("tht ")]
    assert tht_lines and all("--json" in line or "--format" in line for line in tht_lines)
    assert steps[-1]["with"]["sarif_file"].endswith("/evidence.sarif")


def run_steps(ws: Path, tmp: Path) -> dict[str, int]:
    """Every ``run`` step but the install, as GitHub's bash runs it, in the workspace."""
    flow = workflow()
    [job] = flow["jobs"].values()
    runner_temp = tmp / "runner"
    runner_temp.mkdir(exist_ok=True)
    env = {
        **shell_env(tmp),
        **job["env"],
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_ACTIONS": "true",
    }
    codes = {}
    for step in job["steps"]:
        if "run" not in step or "pip install" in step["run"]:
            continue
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        codes[step["name"]] = proc.returncode
    return codes


@pytest.mark.skipif(shutil.which("jq") is None, reason="the workflow's last check uses jq")
def test_workflow_steps_pass_on_a_consolidated_checkout_and_fail_on_an_edit(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "checkout")
    codes = run_steps(co.ws, tmp_path)
    assert set(codes.values()) == {0}, codes
    assert (tmp_path / "runner" / "evidence.sarif").stat().st_size > 0

    edit_unit(co.ws)  # an edit committed without consolidating: the partial commit
    co.commit_all("only the Markdown")
    codes = run_steps(co.ws, tmp_path)
    assert codes["Verify the checkout (strict)"] == 7
    assert codes["Consolidation would change nothing"] != 0
    assert codes["Validate units (annotations)"] == 0


def run_sh(text: str, ws: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    """As the docs test runs ```sh blocks: bash -euo pipefail in a copy of the fixture."""
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text],
        cwd=ws,
        env=shell_env(tmp),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def fixture_copy(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE_WORKSPACE, ws, ignore=shutil.ignore_patterns(".evidence-cache"))
    (tmp_path / "tmp").mkdir()
    return ws


@pytest.mark.parametrize("index", range(len(fences("sh"))))
def test_shell_examples_run(tmp_path: Path, index: int) -> None:
    text = fences("sh")[index][1]
    assert "fixtures/workspace" not in text and not text.startswith("$ ")
    ws = fixture_copy(tmp_path)
    proc = run_sh(text, ws, tmp_path / "tmp")
    assert proc.returncode == 0, text + proc.stdout + proc.stderr


def test_the_pipeline_script_fails_on_an_unconsolidated_edit(tmp_path: Path) -> None:
    [script] = [text for _, text in fences("sh") if "verify --strict" in text]
    ws = fixture_copy(tmp_path)
    rel = edit_unit(ws)
    proc = run_sh(script, ws, tmp_path / "tmp")
    assert proc.returncode != 0
    assert f"workspace evidence verify: {rel}:: E703" in proc.stdout
    assert "workspace evidence verify: FAILED" in proc.stdout
    assert os.path.exists(ws / rel)


@pytest.mark.allow_system_temp
@pytest.mark.skipif(shutil.which("jq") is None, reason="the workflow's last check uses jq")
def test_the_gate_finds_a_misspelt_column_in_an_example_and_compares_with_the_base(
    tmp_path: Path,
) -> None:
    """With the catalog, the question set and the base branch present, the gate's steps
    run for real: clean on the consolidated fixture; then an example whose SQL names a
    column the warehouse lacks fails verify --strict (block: true) and is a SARIF result
    on its line, while retrieval, unchanged, passes the comparison with the base."""
    import json

    from gitflow_helpers import git

    co = make_checkout(tmp_path / "checkout")
    shutil.copytree(REPO / "fixtures" / "warehouse", co.ws / "ci" / "warehouse")
    shutil.copy(REPO / "fixtures" / "eval" / "questions.yaml", co.ws / "ci" / "questions.yaml")
    (co.ws / "ci" / "installation.yaml").write_text(
        "installation_version: 1\nevidence:\n  catalog:\n    kind: ddl\n"
        "    paths: [warehouse/]\n    search_path: [public]\n    block: true\n",
        encoding="utf-8",
    )
    co.commit_all("the gate's files")
    git(co.top, "remote", "add", "origin", str(co.top))
    git(co.top, "fetch", "-q", "origin")
    codes = run_steps(co.ws, tmp_path)
    assert set(codes.values()) == {0}, codes

    rel = "evidence/curated/example/readmissions-30-days.md"
    path = co.ws / rel
    text = path.read_text(encoding="utf-8")
    assert "discharge_date" in text
    path.write_text(text.replace("discharge_date", "discharge_dte"), encoding="utf-8")
    env = shell_env(tmp_path)
    done = subprocess.run(
        ["tht", "workspace", "evidence", "consolidate"], cwd=co.ws, env=env, check=False
    )
    assert done.returncode == 0
    co.commit_all("a misspelt column in an example")
    codes = run_steps(co.ws, tmp_path)
    assert codes["Verify the checkout (strict)"] == 1, codes
    assert codes["Catalog check, example SQL included (SARIF)"] == 0  # reported, not failed
    assert codes["Retrieval is no worse than on the base branch"] == 0
    evaluated = json.loads((tmp_path / "runner" / "eval.json").read_text(encoding="utf-8"))
    gate = evaluated["result"]["gate"]
    assert gate["passed"] and gate["fail_on_drop"] and len(gate["compared"]) == 3
    assert [r["label"] for r in evaluated["result"]["runs"]] == ["active", "compare"]
    sarif = json.loads((tmp_path / "runner" / "catalog.sarif").read_text(encoding="utf-8"))
    results = sarif["runs"][0]["results"]
    assert [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in results
    ] == [("E181", rel)]
