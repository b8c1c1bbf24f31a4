"""Parsing on several cores (``workspace/_speed/parallel.py``) gives exactly the report
of the plain path, one process parsing every file (``THT_SERIAL=1``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from evidence_tool.workspace import validate_workspace
from evidence_tool.workspace._speed import parallel

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate


def _summary(root: Path) -> tuple[object, ...]:
    report = validate_workspace(root)
    forked = sum(f.flat is not None for f in report.files)  # parsed by a worker
    return forked, (
        [(f.rel, f.file_hash, f.unit_id, f.content_hash) for f in report.files],
        [d.to_dict() for d in report.errors],
        [w.to_dict() for w in report.warnings],
    )


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the parallel parse needs two cores")
def test_parallel_and_serial_scans_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = generate(parallel.PARALLEL_MIN + 60, tmp_path / "ws")
    broken = root / "evidence" / "curated" / "domain" / "u000000.md"
    broken.write_text(broken.read_text(encoding="utf-8").replace("kind: domain", "kind: domian"))
    monkeypatch.delenv("THT_SERIAL", raising=False)
    forked, report = _summary(root)
    monkeypatch.setenv("THT_SERIAL", "1")
    none, serial = _summary(root)
    assert forked > 0 and none == 0  # the workers parsed a share; the plain path all
    assert report == serial
    assert any(e["code"] == "E106" for e in report[1])
