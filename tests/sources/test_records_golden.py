"""The typed records change no byte: sources.json and every sources command's --json
output along a whole flow equal the golden file written by the code before the records
(dict-based, commit 7e7ab36).  ``THT_REGEN_GOLDEN=1`` writes a new one under the test's
temporary folder, to copy over (only from code whose output is known good).  Regenerated
for issue 28, whose outputs gained keys only ("changes" on refresh lines and sources show,
"excluded" and "overwrote_manual" on decide): every other value and sources.json itself
were checked equal to the previous golden before it was replaced."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_runner import record, tht

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden") / "registry_flow.json"
WARD = "fs:evidence/incoming/ward-codes.md"
LAB = "fs:evidence/source/lab-handbook.md"


def _flow(ws: Path) -> list[tuple[str, str]]:
    """(step, output) along refresh, list, show, replace, edit, refresh, keep, retry,
    retract."""
    steps: list[tuple[str, str]] = []

    def run(name: str, *args: str) -> None:
        result = tht(ws, *args)
        steps.append((name, result.stdout.replace(str(ws), "<ws>")))
        steps.append((f"{name}: sources.json", _registry_text(ws)))

    run("refresh", "refresh")
    run("list", "sources", "list")
    sid = record(ws, WARD)["source_id"]
    run("show", "sources", "show", sid)
    rec = record(ws, WARD)
    run("replace", "decide", "--source-id", sid, "--revision", rec["comparison"]["revision"],
        "--decision", "replace")  # fmt: skip
    draft = ws / "evidence/incoming/ward-codes.md"
    draft.write_text(draft.read_text(encoding="utf-8").replace("ward", "Ward", 1), "utf-8")
    run("refresh again", "refresh")
    run("show again", "sources", "show", sid[:8])
    lab = record(ws, LAB)
    if lab.get("comparison"):
        run("keep", "decide", "--source-id", lab["source_id"], "--revision",
            lab["comparison"]["revision"], "--decision", "keep")  # fmt: skip
    run("retry", "decide", "--source-id", sid, "--retry")
    run("retract", "sources", "retract", sid, "--note", "withdrawn")
    run("list after", "sources", "list")
    return steps


def _registry_text(ws: Path) -> str:
    path = ws / "evidence/.local/sources.json"
    return path.read_text(encoding="utf-8") if path.exists() else "<none>"


def test_sources_json_and_outputs_are_byte_identical_to_the_dict_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THT_NOW", "2026-11-30T12:00:00Z")
    monkeypatch.setenv("THT_ACTOR", "golden")
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures/workspace", ws)
    steps = _flow(ws)
    if os.environ.get("THT_REGEN_GOLDEN"):  # written under the test's folder: copy it over
        out = tmp_path / GOLDEN.name
        out.write_text(json.dumps(steps, indent=1, ensure_ascii=False) + "\n", "utf-8")
        pytest.skip(f"golden written to {out}")
    golden = [tuple(s) for s in json.loads(GOLDEN.read_text(encoding="utf-8"))]
    assert [name for name, _ in steps] == [name for name, _ in golden]
    assert len(steps) == 20  # every step ran, the keep decision included
    for (name, got), (_, want) in zip(steps, golden, strict=True):
        assert got == want, name
