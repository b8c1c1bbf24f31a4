"""Issue 28, the whole path a new user takes with a dbt project (docs/importers.md, "A dbt
project beside the workspace"): a new workspace and the project in one Git repository,
``sources add ../dbt --option exclude=...``, refresh, replace without editing the project,
the printed git commands, a teammate's clone that refreshes to ``unchanged``, then a
deleted unit and a newly documented column that is still proposed.

Every command runs through the real entry point; Git runs as printed, in a shell.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from cli_runner import CliResult, invoke, tht
from gitflow_helpers import git, shell_env
from shop_project import MART_IDS, document_column, write_shop

LOCATOR = "import:dbt:../dbt"


def _line(result: CliResult) -> dict[str, Any]:
    assert result.exit_code == 0, result.stdout + result.stderr
    (line,) = [x for x in result.json["result"]["sources"] if x["locator"] == LOCATOR]
    return line  # type: ignore[no-any-return]


def _replace(ws: Path, line: dict[str, Any]) -> CliResult:
    return tht(
        ws,
        "decide",
        "--source-id",
        line["source_id"][:8],
        "--revision",
        line["revision"][:12],
        "--decision",
        "replace",
    )


def test_a_dbt_project_beside_a_new_workspace_end_to_end(tmp_path: Path) -> None:
    repo = tmp_path / "analytics"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    made = invoke(["workspace", "new", str(repo / "knowledge"), "--id", "shop", "--language", "en"])
    assert made.exit_code == 0, made.stdout + made.stderr
    ws = repo / "knowledge"
    project = write_shop(repo / "dbt")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}

    added = tht(ws, "sources", "add", "--format", "dbt", str(ws / "../dbt"), "--option",
                "exclude=staging")  # fmt: skip
    assert added.exit_code == 0, added.stdout + added.stderr
    line = _line(tht(ws, "refresh"))
    assert line["status"] == "compared" and line["proposed"] == MART_IDS
    assert line["review_items"] == 0 and line["skipped"] == {"model not selected": 3}
    # decide on the workspace 'new' made, without 'init', and with prefixes of both ids.
    decided = _replace(ws, line)
    assert decided.exit_code == 0, decided.stdout + decided.stderr
    assert decided.json["result"]["consolidation"]["status"] == "activated"
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before

    listed = tht(ws, "git-commands").json["result"]
    assert "dbt" in listed["paths"] and "knowledge/.gitignore" in listed["paths"]
    for step in ("add", "commit"):
        cmd = listed["commands"][listed["steps"].index(step)]
        proc = subprocess.run(
            ["sh", "-e", "-c", cmd], cwd=tmp_path, env=shell_env(tmp_path),
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, cmd + proc.stderr
    assert git(repo, "status", "--porcelain") == ""
    status = tht(ws, "status")
    assert status.json["result"]["git"]["clean"] is True
    assert not [w for w in status.json["warnings"] if w["code"] in ("W803", "W806")]

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    mate = clone / "knowledge"
    assert tht(mate, "consolidate").exit_code == 0
    assert _line(tht(mate, "refresh"))["status"] == "unchanged"

    # One unit deleted by a curator; a column documented upstream is still proposed.
    gone = "evidence:dbt:patrons.first_visit"
    shown = tht(mate, "show", gone).json["result"]
    (mate / shown["path"]).unlink()
    assert tht(mate, "consolidate").exit_code == 0
    document_column(clone / "dbt", "patrons", "favourite_loaf", "The loaf the patron buys most")
    again = _line(tht(mate, "refresh"))
    assert again["status"] == "compared"
    assert "evidence:dbt:patrons.favourite_loaf" in again["proposed"]
    assert gone not in again["proposed"]
    assert again["changes"] == {"added": 1, "changed": 0, "identical": 10, "retired": 0}
    assert _replace(mate, again).exit_code == 0
    assert tht(mate, "show", "evidence:dbt:patrons.favourite_loaf").exit_code == 0
