"""Parsing on several cores gives exactly the report of one process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evidence_tool.workspace import scan as scan_module
from evidence_tool.workspace import validate_workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.generate import generate


def _summary(root: Path) -> tuple[object, ...]:
    report = validate_workspace(root)
    return (
        [(f.rel, f.file_hash, f.unit_id, f.content_hash) for f in report.files],
        [d.to_dict() for d in report.errors],
        [w.to_dict() for w in report.warnings],
    )


def test_parallel_and_serial_scans_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = generate(scan_module.PARALLEL_MIN + 60, tmp_path / "ws")
    broken = root / "evidence" / "curated" / "domain" / "u000000.md"
    broken.write_text(broken.read_text(encoding="utf-8").replace("kind: domain", "kind: domian"))
    parallel = _summary(root)
    monkeypatch.setenv("THT_SERIAL", "1")
    serial = _summary(root)
    assert parallel == serial
    assert any(e["code"] == "E106" for e in parallel[1])
