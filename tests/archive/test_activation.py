"""Activation through the ``command`` backend, with real subprocesses (SPEC.md 5 step 5, 8)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from archive_helpers import PYTHON, UNIT, UNIT_PATH, edit_visibly, retitle, tree
from archive_helpers import write_installation as installation_file
from helpers import codes

from evidence_tool.archive.local import LocalEvidenceArchive

INDEXER = textwrap.dedent(
    """\
    import json, os, pathlib, sys

    calls, broken = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    corpus = pathlib.Path(os.environ["EVIDENCE_CORPUS"])
    records = [json.loads(line) for line in corpus.read_text().splitlines() if line]
    seen = json.loads(calls.read_text()) if calls.exists() else []
    seen.append({
        "revision": os.environ["EVIDENCE_REVISION"],
        "root": os.environ["EVIDENCE_WORKSPACE_ROOT"],
        "corpus": str(corpus),
        "cwd": os.getcwd(),
        "records": [
            {k: r[k] for k in ("id", "revision", "provenance_kind", "provenance")}
            for r in records
        ],
    })
    calls.write_text(json.dumps(seen))
    if broken.exists():
        print("index server unreachable", file=sys.stderr)
        sys.exit(1)
    """
)


class Indexer:
    """A real indexing program; ``broken = True`` makes it exit 1."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.script = folder / "index_evidence.py"
        self.script.write_text(INDEXER, encoding="utf-8")
        self.calls_file = folder / "calls.json"
        self.flag = folder / "broken"
        self.installation = installation_file(
            folder / "installation.yaml",
            command=[PYTHON, str(self.script), str(self.calls_file), str(self.flag)],
        )

    @property
    def broken(self) -> bool:
        return self.flag.exists()

    @broken.setter
    def broken(self, value: bool) -> None:
        if value:
            self.flag.write_text("down\n")
        else:
            self.flag.unlink(missing_ok=True)

    @property
    def calls(self) -> list[dict]:
        return json.loads(self.calls_file.read_text()) if self.calls_file.exists() else []


@pytest.fixture
def indexer(tmp_path: Path) -> Indexer:
    return Indexer(tmp_path / "indexer")


def test_failed_activation_keeps_the_candidate_pending_and_a_retry_activates_it(
    documented: Path, indexer: Indexer, tht
) -> None:
    archive = LocalEvidenceArchive(documented)
    first = tht("consolidate", root=documented, installation=indexer.installation)
    assert first.exit_code == 0, first.stdout
    active = archive.state().active
    assert active == first.json["result"]["revision"] and archive.state().pending is None

    retitle(documented / "evidence/curated/glossary/drg.md")
    indexer.broken = True
    failed = tht("consolidate", root=documented, installation=indexer.installation)

    assert failed.exit_code == 4
    assert codes(failed) == ["E401"]
    assert "index server unreachable" in failed.json["errors"][0]["message"]
    candidate = failed.json["result"]["revision"]
    assert failed.json["result"]["status"] == "pending_activation"
    assert archive.state().active == active
    assert archive.state().pending == candidate != active
    [event] = [e for e in archive.events() if e["event"] == "activation failed"]
    assert event["revision"] == candidate and "exited 1" in event["reason"]

    indexer.broken = False
    retry = tht("consolidate", root=documented, installation=indexer.installation)

    assert retry.exit_code == 0, retry.stdout
    assert retry.json["result"]["status"] == "activated"
    assert retry.json["result"]["revision"] == candidate
    assert archive.state().active == candidate and archive.state().pending is None
    assert [c["revision"] for c in indexer.calls[-2:]] == [candidate, candidate]


def test_the_command_sees_the_revision_the_root_and_a_typed_corpus(
    documented: Path, indexer: Indexer, tht
) -> None:
    result = tht("consolidate", root=documented, installation=indexer.installation)
    assert result.exit_code == 0, result.stdout
    [call] = indexer.calls
    assert call["revision"] == result.json["result"]["revision"]
    assert Path(call["root"]) == documented and Path(call["cwd"]) == documented
    assert Path(call["corpus"]).is_relative_to(documented / ".evidence-cache")
    records = {r["id"]: r for r in call["records"]}
    assert len(records) == 48
    assert {r["revision"] for r in records.values()} == {call["revision"]}
    assert {r["provenance_kind"] for r in records.values()} == {"manual", "document"}
    assert records[UNIT]["provenance"]["kind"] == "document"
    assert records["evidence:clinical:drg"]["provenance_kind"] == "manual"


def test_the_corpus_carries_original_lineage(documented: Path, indexer: Indexer, tht) -> None:
    edit_visibly(documented / UNIT_PATH)
    assert tht("consolidate", root=documented, installation=indexer.installation).exit_code == 0
    record = next(r for r in indexer.calls[-1]["records"] if r["id"] == UNIT)
    assert record["provenance_kind"] == "manual"
    assert record["provenance"]["original"]["kind"] == "document"


def test_an_active_revision_is_not_activated_again(
    consolidated: Path, indexer: Indexer, tht
) -> None:
    assert tht("consolidate", root=consolidated, installation=indexer.installation).exit_code == 0
    calls = len(indexer.calls)
    before = tree(consolidated, lock_content=False)
    again = tht("consolidate", root=consolidated, installation=indexer.installation)
    assert again.exit_code == 0
    assert again.json["result"]["status"] == "unchanged"
    assert again.json["result"]["wrote"] is False
    assert len(indexer.calls) == calls
    assert tree(consolidated, lock_content=False) == before


def test_no_activate_leaves_the_candidate_pending(
    consolidated: Path, indexer: Indexer, tht
) -> None:
    retitle(consolidated / UNIT_PATH)
    result = tht(
        "consolidate", "--no-activate", root=consolidated, installation=indexer.installation
    )
    assert result.exit_code == 0
    assert result.json["result"]["status"] == "pending_activation"
    assert LocalEvidenceArchive(consolidated).state().pending == result.json["result"]["revision"]
    assert indexer.calls == []


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["/nonexistent/indexer"], id="missing-program"),
        pytest.param([PYTHON, "-c", "import sys; sys.exit(3)"], id="exit-3"),
    ],
)
def test_any_failure_of_the_command_is_e401(
    consolidated: Path, tmp_path: Path, tht, command: list[str]
) -> None:
    retitle(consolidated / UNIT_PATH)
    inst = installation_file(tmp_path / "inst.yaml", command=command)
    archive = LocalEvidenceArchive(consolidated)
    active = archive.state().active
    result = tht("consolidate", root=consolidated, installation=inst)
    assert result.exit_code == 4 and codes(result) == ["E401"]
    assert archive.state().active == active
    assert archive.state().pending == result.json["result"]["revision"]


def test_a_command_that_outlives_its_timeout_fails(consolidated: Path, tmp_path: Path, tht) -> None:
    retitle(consolidated / UNIT_PATH)
    inst = tmp_path / "inst.yaml"
    inst.write_text(
        "# installation descriptor\ninstallation_version: 1\nevidence:\n  activation:\n"
        f"    kind: command\n    command: {json.dumps([PYTHON, '-c', 'import time; time.sleep(30)'])}\n"
        "    timeout_s: 0.5\n",
        encoding="utf-8",
    )
    result = tht("consolidate", root=consolidated, installation=inst)
    assert result.exit_code == 4 and codes(result) == ["E401"]
    assert "timed out" in result.json["errors"][0]["message"]
