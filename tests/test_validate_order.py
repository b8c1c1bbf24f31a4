"""Findings come out in one order: the same input gives the same bytes in every process,
whatever the hash seed (a CI diff or a golden file of `validate` output must not flap)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

UNIT = """\
---
schema_version: 4
id: evidence:order-check
applies_to:
  tables: [clinical.admissions]
---

# Three keys missing on one line

## Rule

Each finding below shares a file, a line, a column and a code.
"""


def test_findings_sharing_a_place_and_code_keep_one_order_in_every_process(
    tmp_path: Path,
) -> None:
    unit = tmp_path / "order-check.md"
    unit.write_text(UNIT, encoding="utf-8")
    outputs = set()
    seeds = range(1, 13)
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run(
            [sys.executable, "-m", "evidence_tool.cli.main", "evidence", "validate", str(unit)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        assert done.stdout.count("E105") + done.stderr.count("E105") >= 3
        outputs.add(done.stdout + done.stderr)
    assert len(outputs) == 1, sorted(outputs)
