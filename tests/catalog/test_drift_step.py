"""The catalog as an opt-in step of validate, verify --strict and consolidate: findings
are reported and never block, unless the descriptor says ``block: true``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke
from drift_helpers import installation, new_workspace, run, tree, warehouse

BROKEN = {  # (code, path) of the check's findings against the changed warehouse
    ("E180", "evidence/curated/domain/merges.md"),
    ("E181", "evidence/curated/domain/tariff.md"),
}


def _checked(tmp_path: Path, kind: str = "ddl", **catalog: object) -> tuple[Path, Path, Path]:
    """A consolidated workspace, its warehouse then changed under it."""
    ws = new_workspace(tmp_path)
    dwh = tmp_path / "dwh"
    inst = installation(tmp_path / "etc", kind, warehouse(kind, dwh), **catalog)
    assert run(ws, "consolidate", installation=inst).exit_code == 0
    warehouse(kind, dwh, changed=True)
    return ws, dwh, inst


@pytest.mark.parametrize("kind", ["ddl", "sqlite"])
def test_attack_block_true_refuses_consolidation_and_writes_nothing(
    tmp_path: Path, kind: str
) -> None:
    ws, _dwh, inst = _checked(tmp_path, kind, block=True)
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo (A)."), encoding="utf-8")
    before = tree(ws)
    refused = run(ws, "consolidate", installation=inst)
    assert refused.exit_code == 1, refused.stdout
    first, *findings = refused.json["errors"]
    assert first["code"] == "E192" and "block: true" in first["message"]
    assert {(e["code"], e["path"]) for e in findings} == BROKEN
    assert tree(ws) == before  # not a snapshot, not the mirror, not the caches
    dry = run(ws, "consolidate", "--dry-run", installation=inst)
    assert dry.exit_code == 1 and tree(ws) == before


def test_block_absent_consolidation_proceeds_and_reports(tmp_path: Path) -> None:
    ws, _dwh, inst = _checked(tmp_path)
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo (A)."), encoding="utf-8")
    done = run(ws, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout
    assert done.json["result"]["status"] == "activated"
    assert done.json["result"]["changes"]["modified"] == ["evidence:test:sex"]
    found = {(w["code"], w["path"]) for w in done.json["warnings"] if w["code"] != "E191"}
    assert found == BROKEN
    summary = done.json["result"]["catalog"]
    assert summary["block"] is False and summary["checked"] is True
    assert summary["findings"] == {"E180": 2, "E181": 1, "E191": 3}


@pytest.mark.parametrize("block", [False, True])
def test_validate_and_verify_strict_run_the_step(tmp_path: Path, block: bool) -> None:
    ws, _dwh, inst = _checked(tmp_path, block=block)
    record = (ws / ".evidence-cache/catalog-review.json").read_bytes()
    for args in (["validate"], ["verify", "--strict"]):
        result = run(ws, *args, installation=inst)
        errors = {(e["code"], e["path"]) for e in result.json["errors"]}
        warned = {(w["code"], w["path"]) for w in result.json["warnings"] if w["code"]}
        assert result.json["result"]["catalog"]["checked"] is True, args
        if block:
            assert result.exit_code == 1, (args, result.stdout)
            assert errors == BROKEN and not warned & BROKEN
        else:
            assert result.exit_code == 0, (args, result.stdout)
            assert not errors and warned >= BROKEN
    # Without the installation, the same commands do not read any warehouse.
    plain = run(ws, "validate")
    assert plain.exit_code == 0 and "catalog" not in plain.json["result"]
    # These commands only read: the catalog record stays as consolidate left it.
    assert (ws / ".evidence-cache/catalog-review.json").read_bytes() == record


def test_validate_formats_carry_the_step_findings(tmp_path: Path) -> None:
    ws, _dwh, inst = _checked(tmp_path, block=True)
    base = ["--installation", str(inst), "workspace", "evidence", "validate"]
    base += ["--workspace-root", str(ws)]
    gh = invoke([*base, "--format", "github"])
    assert gh.exit_code == 1
    lines = [ln for ln in gh.stdout.splitlines() if ln.startswith("::error")]
    assert len(lines) == 3 and all("title=E18" in ln for ln in lines)
    sarif = json.loads(invoke([*base, "--format", "sarif"]).stdout)
    levels = {(r["ruleId"], r["level"]) for r in sarif["runs"][0]["results"]}
    # block: true makes the check's findings errors; drift review items stay warnings
    assert levels == {("E180", "error"), ("E181", "error"), ("E191", "warning")}
    assert len([ln for ln in gh.stdout.splitlines() if "title=E191" in ln]) == 3


def test_an_unreadable_catalog_is_reported_and_records_nothing_unless_it_blocks(
    tmp_path: Path,
) -> None:
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", "ddl", [str(tmp_path / "nowhere")])
    done = run(ws, "consolidate", installation=inst)
    assert done.exit_code == 0, done.stdout
    assert [w["code"] for w in done.json["warnings"]] == ["E186"]
    assert done.json["result"]["catalog"]["checked"] is False
    manifest = next((ws / "evidence/.local/snapshots").glob("*/manifest.json")).read_text()
    assert '"catalog"' not in manifest
    blocking = installation(tmp_path / "etc2", "ddl", [str(tmp_path / "nowhere")], block=True)
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo (A)."), encoding="utf-8")
    before = tree(ws)
    refused = run(ws, "consolidate", installation=blocking)
    assert refused.exit_code == 6 and refused.json["errors"][0]["code"] == "E186"
    assert tree(ws) == before


def test_a_postgres_step_never_prints_the_dsn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever this version can do with PostgreSQL, its DSN stays in the environment."""
    monkeypatch.setenv("DWH_DSN", "postgresql://curator:pg-s3cr3t@127.0.0.1:1/dwh")
    ws = new_workspace(tmp_path)
    inst = installation(tmp_path / "etc", "postgres", [], dsn_env="DWH_DSN")
    for args in (["validate"], ["consolidate"], ["verify", "--strict"], ["config", "show"]):
        pre = ["--installation", str(inst)]
        if args[0] == "config":
            result = invoke([*pre, *args, "--workspace-root", str(ws), "--json"])
        else:
            result = run(ws, *args, installation=inst)
        assert result.exit_code in (0, 6), (args, result.stdout)
        assert "pg-s3cr3t" not in result.stdout + result.stderr, args
    shown = invoke(["--installation", str(inst), "config", "show", "--workspace-root", str(ws)])
    assert "DWH_DSN" in shown.stdout


def test_warnings_as_errors_refuses_the_step_findings_like_any_coded_warning(
    tmp_path: Path,
) -> None:
    ws, _dwh, inst = _checked(tmp_path)
    unit = ws / "evidence/curated/enum/sex.md"
    unit.write_text(unit.read_text().replace("Attivo.", "Attivo (A)."), encoding="utf-8")
    before = tree(ws)
    refused = run(ws, "consolidate", "--warnings-as-errors", installation=inst)
    assert refused.exit_code == 1, refused.stdout
    refused_codes = {e["message"].split()[0] for e in refused.json["errors"]}
    assert {e["code"] for e in refused.json["errors"]} == {"E190"}
    assert refused_codes == {"E180", "E181", "E191"}
    assert tree(ws) == before


def test_a_dry_run_with_the_step_reports_the_check_and_writes_nothing(tmp_path: Path) -> None:
    ws, _dwh, inst = _checked(tmp_path)
    before = tree(ws)
    dry = run(ws, "consolidate", "--dry-run", installation=inst)
    assert dry.exit_code == 0, dry.stdout
    assert dry.json["result"]["status"] == "would_activate"
    assert dry.json["result"]["catalog"]["findings"] == {"E180": 2, "E181": 1, "E191": 3}
    assert tree(ws) == before


def test_step_findings_reported_as_warnings_keep_their_column(tmp_path: Path) -> None:
    """The step's findings, reported (block off), point where ``check`` points: the same
    line and column, in --json and in the text output."""
    ws, _dwh, inst = _checked(tmp_path, "sqlite")
    checked = run(ws, "check", installation=inst)
    want = {(e["code"], e["path"], e["line"], e["column"]) for e in checked.json["errors"]}
    assert len(want) >= 4 and all(col for *_, col in want)  # E180 x2, E181, E191 items
    for args in (["validate"], ["verify", "--strict"], ["consolidate"]):
        result = run(ws, *args, installation=inst)
        assert result.exit_code == 0, (args, result.stdout)
        got = {
            (w["code"], w["path"], w["line"], w.get("column"))
            for w in result.json["warnings"]
            if w["code"] and w["code"].startswith("E18")
        }
        assert got == {w for w in want if w[0] != "E191"} and got, args
    pre = ["--installation", str(inst), "workspace", "evidence", "validate"]
    text = invoke([*pre, "--workspace-root", str(ws)])
    line, col = next(
        (e["line"], e["column"]) for e in checked.json["errors"] if e["code"] == "E181"
    )
    assert f"evidence/curated/domain/tariff.md:{line}:{col}:" in text.stdout + text.stderr
