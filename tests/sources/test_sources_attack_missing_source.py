"""A document-derived unit whose source document is gone warns W151 in consolidate, status
and the review page until the document is restored or the unit retired (issue 14 item 9b)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_runner import invoke
from source_helpers import WARD, decide, refresh, source_line, tht

WARD_PATH = "evidence/incoming/ward-codes.md"
POSTO_LETTO = "evidence:admin:posto-letto"
POSTO_LETTO_FILE = "evidence/curated/glossary/admin-posto-letto.md"
TIPO_REPARTO_FILE = "evidence/curated/enum/admin-tipo-reparto.md"


def _adopt_ward(ws: Path) -> None:
    assert source_line(refresh(ws), WARD)["status"] == "compared"
    adopted = decide(ws, WARD, "replace")
    assert adopted.exit_code == 0, adopted.stdout
    assert adopted.json["warnings"] == []


def _w151(warnings: list[dict[str, Any]]) -> dict[str, str]:
    return {str(w["path"]): str(w["message"]) for w in warnings if w.get("code") == "W151"}


def _text(ws: Path, *args: str) -> str:
    """Text mode: what an operator reads on the terminal (stdout and stderr)."""
    result = invoke(["workspace", "evidence", *args, "--workspace-root", str(ws)])
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def test_attack_source_document_vanishes_then_a_derived_unit_is_edited(workspace: Path) -> None:
    _adopt_ward(workspace)
    # The operator moves the draft away; the refresh after that marks it missing.
    (workspace / WARD_PATH).rename(workspace / "evidence/incoming/ward-codes.md.bak")
    assert source_line(refresh(workspace), WARD)["status"] == "missing"
    unit = workspace / POSTO_LETTO_FILE
    unit.write_text(unit.read_text().replace("- PL\n", "- PL\n- letto ordinario\n"))
    consolidated = tht(workspace, "consolidate")
    assert consolidated.exit_code == 0, consolidated.stdout
    assert consolidated.json["result"]["changes"]["modified"] == [POSTO_LETTO]
    warned = _w151(consolidated.json["warnings"])
    # Both units of the source: the edited one (now manual, lineage kept) and the other.
    assert set(warned) == {POSTO_LETTO_FILE, TIPO_REPARTO_FILE}
    message = warned[POSTO_LETTO_FILE]
    assert POSTO_LETTO in message and WARD_PATH in message
    assert "tht workspace evidence refresh" in message  # restore ...
    assert "tht workspace evidence consolidate" in message  # ... or retire
    status = tht(workspace, "status")
    assert status.exit_code == 0
    assert _w151(status.json["warnings"]) == warned
    text = _text(workspace, "status")
    assert "W151" in text and POSTO_LETTO in text
    page = tht(workspace, "report")
    assert page.exit_code == 0, page.stdout
    html = Path(page.json["result"]["path"]).read_text()
    assert html.count("W151") >= 2 and "admin-posto-letto.md" in html
    # Restoring the document (and refreshing) ends the warning everywhere.
    (workspace / "evidence/incoming/ward-codes.md.bak").rename(workspace / WARD_PATH)
    assert source_line(refresh(workspace), WARD)["status"] == "unchanged"
    assert _w151(tht(workspace, "status").json["warnings"]) == {}
    assert _w151(tht(workspace, "consolidate").json["warnings"]) == {}
    assert "W151" not in Path(tht(workspace, "report").json["result"]["path"]).read_text()


def test_retiring_the_units_of_a_vanished_source_ends_the_warning(workspace: Path) -> None:
    _adopt_ward(workspace)
    (workspace / WARD_PATH).unlink()
    assert source_line(refresh(workspace), WARD)["status"] == "missing"
    (workspace / TIPO_REPARTO_FILE).unlink()
    first = tht(workspace, "consolidate")
    assert first.exit_code == 0, first.stdout
    assert set(_w151(first.json["warnings"])) == {POSTO_LETTO_FILE}
    (workspace / POSTO_LETTO_FILE).unlink()
    second = tht(workspace, "consolidate")
    assert second.exit_code == 0, second.stdout
    assert _w151(second.json["warnings"]) == {}
    assert _w151(tht(workspace, "status").json["warnings"]) == {}


def test_warnings_as_errors_refuses_a_missing_source_before_any_write(workspace: Path) -> None:
    """W151 is found above the archive; --warnings-as-errors refuses it like the files'."""
    _adopt_ward(workspace)
    (workspace / WARD_PATH).unlink()
    assert source_line(refresh(workspace), WARD)["status"] == "missing"
    unit = workspace / TIPO_REPARTO_FILE
    unit.write_text(unit.read_text() + "\nRivisto in reparto.\n")
    managed = workspace / "evidence/.local"
    before = sorted(p.name for p in (managed / "snapshots").iterdir())
    refused = tht(workspace, "consolidate", "--warnings-as-errors")
    assert refused.exit_code == 1, refused.stdout
    errors = refused.json["errors"]
    assert {e["code"] for e in errors} == {"E190"}
    assert {e["path"] for e in errors} == {POSTO_LETTO_FILE, TIPO_REPARTO_FILE}
    assert sorted(p.name for p in (managed / "snapshots").iterdir()) == before
    assert tht(workspace, "consolidate").exit_code == 0  # without the flag: a warning
