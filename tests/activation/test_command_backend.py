"""The ``command`` backend runs a real program (SPEC.md 8): environment, exit status, timeout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import (
    FORMULA,
    FORMULA_PATH,
    Tht,
    add_word,
    alive,
    stage_document,
    state,
    write_installation,
)
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive

PROGRAM = """
import json, os, subprocess, sys, time

out, mode = sys.argv[1], sys.argv[2]
with open(os.environ["EVIDENCE_CORPUS"], encoding="utf-8") as fh:
    corpus = [json.loads(line) for line in fh]
with open(out, "w", encoding="utf-8") as fh:
    json.dump({
        "revision": os.environ["EVIDENCE_REVISION"],
        "root": os.environ["EVIDENCE_WORKSPACE_ROOT"],
        "corpus_path": os.environ["EVIDENCE_CORPUS"],
        "cwd": os.getcwd(),
        "corpus": corpus,
    }, fh)
if mode == "fail":
    print("starting", file=sys.stderr)
    print("index server refused the batch", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    # A helper the program started: a timeout must stop it too.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(out + ".pid", "w") as fh:
        fh.write(str(child.pid))
    time.sleep(120)
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "index_evidence.py"
    path.write_text(PROGRAM)
    return path


def _installation(tmp_path: Path, program: Path, mode: str, timeout_s: float = 60) -> Path:
    command = [sys.executable, str(program), str(tmp_path / "seen.json"), mode]
    return write_installation(
        tmp_path / f"{mode}.yaml", {"kind": "command", "command": command, "timeout_s": timeout_s}
    )


def _seen(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "seen.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_program_gets_revision_root_and_a_typed_corpus(
    workspace: Path, tht: Tht, tmp_path: Path, program: Path
) -> None:
    source_id = stage_document(workspace, FORMULA, "giornate di degenza")
    assert tht("consolidate").json["result"]["status"] == "activated"
    add_word(workspace / FORMULA_PATH, "riveduto")  # a manual edit keeps the document lineage
    result = tht("consolidate", installation=_installation(tmp_path, program, "ok"))
    assert result.exit_code == 0, result.stdout
    revision = result.json["result"]["revision"]
    assert result.json["result"]["status"] == "activated" and state(workspace).active == revision

    seen = _seen(tmp_path)
    assert seen["revision"] == revision
    assert seen["root"] == seen["cwd"] == str(workspace)
    assert Path(seen["corpus_path"]).parent.parent == workspace / ".evidence-cache"
    snap = LocalEvidenceArchive(workspace).snapshot(revision)
    assert seen["corpus"] == list(snap.records())
    for r in seen["corpus"]:
        assert r["revision"] == revision
        assert r["provenance_kind"] == r["provenance"]["kind"] == "manual"
    formula = next(r for r in seen["corpus"] if r["id"] == FORMULA)
    assert "riveduto" in formula["title"]
    assert formula["provenance"]["original"]["kind"] == "document"
    assert formula["provenance"]["original"]["source_id"] == source_id


def test_a_document_declaration_reaches_the_program_typed(
    workspace: Path, tht: Tht, tmp_path: Path, program: Path
) -> None:
    stage_document(workspace, FORMULA, "giornate di degenza")
    assert tht("consolidate", installation=_installation(tmp_path, program, "ok")).exit_code == 0
    formula = next(r for r in _seen(tmp_path)["corpus"] if r["id"] == FORMULA)
    assert formula["provenance_kind"] == formula["provenance"]["kind"] == "document"
    assert formula["provenance"]["excerpts"] == ["giornate di degenza"]


def test_a_failing_program_fails_activation_and_keeps_the_candidate_pending(
    workspace: Path, tht: Tht, tmp_path: Path, program: Path
) -> None:
    before = state(workspace).active
    add_word(workspace / FORMULA_PATH, "riveduto")
    result = tht("consolidate", installation=_installation(tmp_path, program, "fail"))
    assert result.exit_code == 4 and codes(result.json) == ["E401"]
    message = result.json["errors"][0]["message"]
    assert "exited 3" in message and "index server refused the batch" in message
    candidate = result.json["result"]["revision"]
    assert result.json["result"]["status"] == "pending_activation"
    assert state(workspace).active == before and state(workspace).pending == candidate
    events = [e["event"] for e in LocalEvidenceArchive(workspace).events()]
    assert events[-2:] == ["consolidated", "activation failed"]

    retry = tht("consolidate", installation=_installation(tmp_path, program, "ok"))
    assert retry.json["result"]["status"] == "activated"
    assert state(workspace).active == candidate and state(workspace).pending is None
    assert _seen(tmp_path)["revision"] == candidate
    # Later activations replace the corpus file; they do not pile up one per revision.
    add_word(workspace / FORMULA_PATH, "ancora")
    later = tht("consolidate", installation=_installation(tmp_path, program, "ok"))
    corpora = sorted(p.name for p in (workspace / ".evidence-cache" / "corpus").iterdir())
    assert corpora == [f"{later.json['result']['revision']}.jsonl"]


def test_a_program_that_overruns_its_timeout_is_stopped_with_its_children(
    workspace: Path, tht: Tht, tmp_path: Path, program: Path
) -> None:
    before = state(workspace).active
    add_word(workspace / FORMULA_PATH, "riveduto")
    # The program hangs for good: that tht returns at all (within pytest's timeout) is
    # the proof it was stopped; no wall-clock bound is asserted (shared, noisy machines).
    result = tht("consolidate", installation=_installation(tmp_path, program, "hang", 1.5))
    assert result.exit_code == 4 and codes(result.json) == ["E401"]
    assert "timed out after 1.5 s" in result.json["errors"][0]["message"]
    assert state(workspace).active == before
    assert state(workspace).pending == result.json["result"]["revision"]
    helper = int((tmp_path / "seen.json.pid").read_text())
    deadline = time.monotonic() + 60  # a bound, not a pause
    while alive(helper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(helper), "the program's helper outlived the timeout"


def test_a_missing_program_fails_activation(workspace: Path, tht: Tht, tmp_path: Path) -> None:
    inst = write_installation(
        tmp_path / "i.yaml", {"kind": "command", "command": [str(tmp_path / "nope")]}
    )
    add_word(workspace / FORMULA_PATH, "riveduto")
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 4 and "cannot run" in result.json["errors"][0]["message"]
