"""An undecided source is refined once per (content hash, refiner identity), proved with a real
command refiner that counts its runs in a file (issue 14 item 9c)."""

from __future__ import annotations

import sys
from pathlib import Path

from source_helpers import WARD, installation, refresh, source_line

REPO = Path(__file__).resolve().parents[2]
WARD_PATH = "evidence/incoming/ward-codes.md"

# Logs each run, then answers exactly as the shipped example refiner does.
COUNTING_REFINER = """\
import io, json, runpy, sys
request = json.loads(sys.stdin.read())
with open({counter!r}, "a") as log:
    log.write(request["locator"] + " " + request["content_hash"][:12] + "\\n")
if "REFINER-GIVES-UP" in request["text"]:
    sys.exit(3)
example = runpy.run_path({example!r})
sys.stdin = io.StringIO(json.dumps(request))
sys.exit(example["main"]())
"""


def _counting_installation(tmp_path: Path, *extra_args: str) -> tuple[Path, Path]:
    counter = tmp_path / "calls.log"
    script = tmp_path / "counting_refiner.py"
    body = COUNTING_REFINER.format(
        counter=str(counter), example=str(REPO / "examples/refiner_units.py")
    )
    script.write_text(body)
    command = [sys.executable, str(script), *extra_args]
    return installation(tmp_path, refiner={"kind": "command", "command": command}), counter


def _calls(counter: Path) -> list[str]:
    return counter.read_text().splitlines() if counter.exists() else []


def _revisions(result: object) -> list[object]:
    return [s.get("revision") for s in result.json["result"]["sources"]]  # type: ignore[attr-defined]


def test_attack_undecided_sources_refreshed_again_and_again_refine_once(
    workspace: Path, tmp_path: Path
) -> None:
    inst, counter = _counting_installation(tmp_path)
    first = refresh(workspace, installation=inst)
    assert first.exit_code == 0, first.stdout
    compared = [s for s in first.json["result"]["sources"] if s["status"] == "compared"]
    assert len(compared) == 2 and len(_calls(counter)) == 2
    registry_bytes = (workspace / "evidence/.local/sources.json").read_bytes()
    for _ in range(4):  # nobody decides; the operator keeps refreshing
        again = refresh(workspace, installation=inst)
        assert again.exit_code == 0, again.stdout
        assert _revisions(again) == _revisions(first)
    assert refresh(workspace, "--dry-run", installation=inst).exit_code == 0
    assert len(_calls(counter)) == 2
    assert (workspace / "evidence/.local/sources.json").read_bytes() == registry_bytes
    # New bytes are refined once; going back to bytes already refined costs nothing.
    draft = workspace / WARD_PATH
    original = draft.read_text()
    draft.write_text(original.replace("Terapia subintensiva.", "Terapia semi-intensiva."))
    refresh(workspace, installation=inst)
    refresh(workspace, installation=inst)
    assert len(_calls(counter)) == 3
    draft.write_text(original)
    back = refresh(workspace, installation=inst)
    assert source_line(back, WARD)["revision"] == source_line(first, WARD)["revision"]
    assert len(_calls(counter)) == 3


def test_a_different_refiner_or_a_changed_refiner_program_refines_again(
    workspace: Path, tmp_path: Path
) -> None:
    inst, counter = _counting_installation(tmp_path)
    assert refresh(workspace, installation=inst).exit_code == 0
    assert len(_calls(counter)) == 2
    # The same program with another argument is another refiner.
    other, _ = _counting_installation(tmp_path, "--strict")
    assert refresh(workspace, installation=other).exit_code == 0
    assert len(_calls(counter)) == 4
    # The program's bytes changed: its earlier proposals are not reused.
    script = tmp_path / "counting_refiner.py"
    script.write_text(script.read_text() + "# revised\n")
    assert refresh(workspace, installation=other).exit_code == 0
    assert len(_calls(counter)) == 6
    # The built-in refiner has an identity of its own: the command's proposals stay its own.
    builtin = refresh(workspace)
    assert builtin.exit_code == 0 and len(_calls(counter)) == 6


def test_attack_damaged_proposal_cache_is_refined_again_not_trusted(
    workspace: Path, tmp_path: Path
) -> None:
    inst, counter = _counting_installation(tmp_path)
    first = refresh(workspace, installation=inst)
    cached = sorted((workspace / ".evidence-cache").rglob("*.json"))
    assert len(cached) == 2
    cached[0].write_bytes(cached[0].read_bytes()[:40])  # torn
    text = cached[1].read_text()
    doctored = text.replace("disambiguation", "sql_generation", 1)
    assert doctored != text
    cached[1].write_text(doctored)  # edited by hand: a proposal nobody refined
    again = refresh(workspace, installation=inst)
    assert again.exit_code == 0, again.stdout
    assert len(_calls(counter)) == 4
    assert _revisions(again) == _revisions(first)


def test_a_failed_refresh_keeps_the_proposals_it_already_paid_for(
    workspace: Path, tmp_path: Path
) -> None:
    inst, counter = _counting_installation(tmp_path)
    # A third draft, read after the other two, on which the refiner gives up (E502).
    broken = workspace / "evidence/source/zz-broken.md"
    broken.write_text("# REFINER-GIVES-UP\n")
    failed = refresh(workspace, installation=inst)
    assert failed.exit_code == 5 and failed.json["errors"][0]["code"] == "E502"
    paid = _calls(counter)
    assert len(paid) == 3 and "zz-broken" in paid[-1]
    broken.unlink()
    assert refresh(workspace, installation=inst).exit_code == 0
    assert _calls(counter) == paid  # the two good drafts were not refined again


def test_a_refiner_naming_a_huge_file_is_named_by_its_size_and_time(tmp_path: Path) -> None:
    import os

    from evidence_tool.sources.refiner import HASHED_UP_TO, CommandRefiner

    weights = tmp_path / "weights.bin"
    with weights.open("wb") as f:
        f.truncate(HASHED_UP_TO + 4096)  # sparse: nothing to read, nothing to hash
    script = tmp_path / "refine.py"
    script.write_text("print('{}')\n")
    command = [sys.executable, "refine.py", str(weights)]
    first = CommandRefiner(command, cwd=str(tmp_path)).identity()
    assert first["programs"][str(weights)].startswith(f"size={HASHED_UP_TO + 4096} ")
    assert len(first["programs"]["refine.py"]) == 64  # a small script: its sha256
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # new weights
    assert CommandRefiner(command, cwd=str(tmp_path)).identity() != first
