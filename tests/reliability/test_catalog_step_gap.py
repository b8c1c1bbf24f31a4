"""The catalog step runs before consolidate takes the archive lock.  A unit edited in that
gap must not be recorded with a catalog fingerprint its new text was never checked
against: consolidation, under the lock, compares the units it records with the ones the
step checked, and refuses (E301, nothing written) when they differ."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import CliResult, invoke

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.catalog.step import catalog_step
from evidence_tool.errors import ConflictError
from evidence_tool.workspace.descriptor import load_installation

REPO = Path(__file__).resolve().parents[2]
UNIT = """---
schema_version: 4
id: evidence:gap:{name}
kind: domain
language: en
purposes: [sql_generation]
applies_to:
  tables: [lab.results]
  columns: [{column}]
---

# {name}

## Rule

Read the laboratory's results as stored.
"""


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".evidence-cache" not in p.parts
    }


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    made = invoke(["workspace", "new", str(ws), "--id", "gap", "--language", "en", "--json"])
    assert made.exit_code == 0, made.stdout
    folder = ws / "evidence/curated/domain"
    folder.mkdir(parents=True, exist_ok=True)
    for name, column in (("flags", "lab.results.flag"), ("units-of-measure", "lab.results.unit")):
        (folder / f"{name}.md").write_text(UNIT.format(name=name, column=column), "utf-8")
    inst = tmp_path / "installation.yaml"
    catalog = {"kind": "ddl", "paths": [str(REPO / "fixtures" / "warehouse")]}
    inst.write_text(json.dumps({"installation_version": 1, "evidence": {"catalog": catalog}}))
    return ws, inst


def _consolidate(ws: Path, inst: Path) -> CliResult:
    pre = ["--installation", str(inst), "workspace", "evidence", "consolidate"]
    return invoke([*pre, "--workspace-root", str(ws), "--json"])


def test_attack_unit_edited_between_the_catalog_step_and_the_lock_is_refused(
    tmp_path: Path,
) -> None:
    ws, inst = _workspace(tmp_path)
    first = _consolidate(ws, inst)
    assert first.exit_code == 0 and first.json["result"]["catalog"]["findings"] == {}
    installation = load_installation(str(inst))
    # What Session.consolidate does, with an editor's save landing between its two calls:
    # the new text names a column the warehouse does not have.
    outcome = catalog_step(ws, installation)
    assert outcome is not None and outcome.run is not None
    assert len(outcome.run.units) == 2 and not outcome.findings()
    edited = ws / "evidence/curated/domain/flags.md"
    edited.write_text(edited.read_text().replace("lab.results.flag", "lab.results.flags"))
    before = _tree(ws)
    archive = LocalEvidenceArchive(ws)
    try:
        archive.consolidate("gap-test", None, catalog=outcome.record())
    except ConflictError as exc:
        assert exc.code == "E301"
        assert "evidence:gap:flags" in exc.message and "evidence consolidate' again" in exc.message
        assert "evidence:gap:units-of-measure" not in exc.message
    else:
        raise AssertionError("a unit the catalog step never saw was consolidated")
    assert _tree(ws) == before  # no snapshot, no pointer moved
    # Run again, the step sees the edit: recorded, and its finding reported.
    again = _consolidate(ws, inst)
    assert again.exit_code == 0, again.stdout
    assert again.json["result"]["changes"]["modified"] == ["evidence:gap:flags"]
    assert again.json["result"]["catalog"]["findings"] == {"E181": 1}
