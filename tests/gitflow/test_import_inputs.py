"""Issue 28 item 2: an import's input lives in Git beside the workspace, and a clone has it.

The common layout is one repository holding the workspace and the dbt project side by
side (``kb/ws`` and ``kb/dbt``): the import path is ``../dbt``. ``git-commands`` stages it
with the evidence tree and ``.gitignore``, ``status`` says when it is not committed, and a
teammate's clone refreshes to ``unchanged``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cli_runner import tht
from gitflow_helpers import git, make_checkout, shell_env
from shop_project import write_shop


def _run_printed(tmp_path: Path, lines: list[str]) -> None:
    for line in lines:
        proc = subprocess.run(
            ["sh", "-e", "-c", line],
            cwd=tmp_path,
            env=shell_env(tmp_path),
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, line + proc.stdout + proc.stderr


def _adopt(ws: Path, path: str) -> dict[str, object]:
    added = tht(ws, "sources", "add", "--format", "dbt", path, "--language", "en")
    assert added.exit_code == 0, added.stdout + added.stderr
    assert added.json["result"]["entry"]["path"] == "../dbt"
    refreshed = tht(ws, "refresh")
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    (line,) = [
        x for x in refreshed.json["result"]["sources"] if x["locator"] == "import:dbt:../dbt"
    ]
    decided = tht(
        ws,
        "decide",
        "--source-id",
        line["source_id"],
        "--revision",
        line["revision"],
        "--decision",
        "replace",
    )
    assert decided.exit_code == 0, decided.stdout + decided.stderr
    return line


def test_a_project_beside_the_workspace_is_imported_committed_and_unchanged_in_a_clone(
    tmp_path: Path,
) -> None:
    co = make_checkout(tmp_path / "repo", "kb/ws")
    write_shop(co.top / "kb/dbt", staging=False)
    line = _adopt(co.ws, str(co.ws / "../dbt"))

    status = tht(co.ws, "status").json["result"]["git"]
    untracked = {f["path"]: f["role"] for f in status["untracked"]}
    assert untracked["../dbt/models/marts/schema.yml"] == "import"
    codes = [w["code"] for w in tht(co.ws, "status").json["warnings"]]
    assert "W806" in codes

    listed = tht(co.ws, "git-commands").json["result"]
    assert "kb/dbt" in listed["paths"] and "kb/ws/.gitignore" in listed["paths"]
    add, commit = (c for c in listed["commands"] if " add " in c or " commit " in c)
    _run_printed(tmp_path, [add, commit])
    assert git(co.top, "status", "--porcelain", "--", "kb") == ""
    after = tht(co.ws, "status")
    assert after.json["result"]["git"]["clean"] is True
    assert "W806" not in [w["code"] for w in after.json["warnings"]]

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(co.top), str(clone))
    ws = clone / "kb/ws"
    assert tht(ws, "consolidate").exit_code == 0
    again = tht(ws, "refresh")
    assert again.exit_code == 0, again.stdout + again.stderr
    statuses = {x["source_id"]: x["status"] for x in again.json["result"]["sources"]}
    assert statuses[line["source_id"]] == "unchanged"


def test_a_path_outside_the_repository_is_e501_with_a_hint_that_fits(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo", "ws")
    outside = write_shop(tmp_path / "elsewhere/dbt", staging=False)
    refused = tht(co.ws, "sources", "add", "--format", "dbt", str(outside))
    assert refused.exit_code == 5, refused.stdout
    error = refused.json["errors"][0]
    assert error["code"] == "E501"
    assert "Git work tree" in error["message"] and "credentials" not in error["message"]
    assert "import's path" in error["hint"]


def test_one_missing_input_fails_only_its_own_source(tmp_path: Path) -> None:
    co = make_checkout(tmp_path / "repo", "kb/ws")
    write_shop(co.top / "kb/dbt", staging=False)
    write_shop(co.top / "kb/other", staging=False)
    for path in ("../dbt", "../other"):
        added = tht(co.ws, "sources", "add", "--format", "dbt", str(co.ws / path))
        assert added.exit_code == 0, added.stdout
    shutil.rmtree(co.top / "kb/other")
    refreshed = tht(co.ws, "refresh")
    assert refreshed.exit_code == 5, refreshed.stdout + refreshed.stderr
    lines = {x["locator"]: x for x in refreshed.json["result"]["sources"]}
    assert lines["import:dbt:../dbt"]["status"] == "compared"
    failed = lines["import:dbt:../other"]
    assert failed["status"] == "failed" and failed["error"]["code"] == "E501"
    assert "../other" in failed["error"]["message"]
    # The other source was recorded: its comparison can be decided.
    shown = tht(co.ws, "sources", "show", lines["import:dbt:../dbt"]["source_id"][:12])
    assert shown.json["result"]["comparison"] is not None
