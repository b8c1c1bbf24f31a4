"""Issue 28: ``decide`` consolidates like ``consolidate``, the catalog step included, so the
snapshot a decision activates records the catalog its units were checked against (before,
``catalog diff`` then said no fingerprint was recorded)."""

from __future__ import annotations

import shutil
from pathlib import Path

from catalog_helpers import REPO
from drift_helpers import installation, new_workspace, run, warehouse

DRAFT = REPO / "fixtures/workspace/evidence/incoming/ward-codes.md"


def test_decide_runs_the_catalog_step_and_its_snapshot_records_the_fingerprint(
    tmp_path: Path,
) -> None:
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", "ddl", warehouse("ddl", tmp_path / "dwh"))
    assert run(ws, "consolidate", installation=inst).exit_code == 0
    (ws / "evidence/incoming").mkdir(parents=True, exist_ok=True)
    shutil.copy(DRAFT, ws / "evidence/incoming/ward-codes.md")
    refreshed = run(ws, "refresh", installation=inst)
    assert refreshed.exit_code == 0, refreshed.stdout
    (line,) = [x for x in refreshed.json["result"]["sources"] if x["status"] == "compared"]
    decided = run(ws, "decide", "--source-id", line["source_id"], "--revision",
                  line["revision"], "--decision", "replace", installation=inst)  # fmt: skip
    assert decided.exit_code == 0, decided.stdout
    summary = decided.json["result"]["consolidation"]["catalog"]
    assert summary["checked"] is True
    # Exit 2 when the active snapshot records no catalog: the decision's snapshot does.
    diff = run(ws, "catalog", "diff", installation=inst)
    assert diff.exit_code == 0, diff.stdout
