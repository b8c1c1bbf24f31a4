"""decide against a tree the refresh never saw: a new file carrying an id of the comparison
(issue 14 item 9a). Any new or changed curated file carrying an affected id is E304."""

from __future__ import annotations

from pathlib import Path

import pytest
from source_helpers import WARD, decide, record, refresh, source_line, tht, tree_state

WARD_PATH = "evidence/incoming/ward-codes.md"
POSTO_LETTO = "evidence:admin:posto-letto"


def _unit(uid: str, kind: str, body: str) -> str:
    return (
        f"---\nschema_version: 4\nid: {uid}\nkind: {kind}\nlanguage: it\n"
        f"purposes: [disambiguation]\n---\n\n{body}"
    )


def _posto_letto_copy(definition: str) -> str:
    return _unit(POSTO_LETTO, "glossary", f"# Posto letto\n\n## Definizione\n\n{definition}\n")


@pytest.mark.parametrize(
    ("decision", "where", "text"),
    [
        # A second, valid copy of a proposed id under a name of the curator's choosing.
        ("replace", "glossary/letto-autorizzato.md", _posto_letto_copy("Letto attivo.")),
        # Half-written: invalid, but it already names the id.
        ("replace", "glossary/pl-bozza.md", _unit(POSTO_LETTO, "glossary", "# Posto letto\n")),
        # keep writes no unit file, but it would decide against a tree it never saw.
        ("keep", "glossary/pl-nuovo.md", _posto_letto_copy("Letto in reparto.")),
    ],
)
def test_attack_curator_adds_a_file_carrying_a_proposed_id_before_decide(
    workspace: Path, decision: str, where: str, text: str
) -> None:
    assert source_line(refresh(workspace), WARD)["status"] == "compared"
    (workspace / "evidence/curated" / where).write_text(text)
    before = tree_state(workspace)
    stale = decide(workspace, WARD, decision)
    assert stale.exit_code == 3, stale.stdout
    error = stale.json["errors"][0]
    assert error["code"] == "E304"
    assert f"evidence/curated/{where}" in error["message"]
    assert stale.json["result"]["stale_paths"] == [f"evidence/curated/{where}"]
    # Nothing written, and no decision recorded as saved.
    assert tree_state(workspace) == before
    assert record(workspace, WARD)["decision"] is None
    # The review page says the same before anyone tries.
    page = Path(tht(workspace, "report").json["result"]["path"]).read_text()
    assert f"Stale: <code>evidence/curated/{where}</code>" in page


def test_attack_duplicate_of_an_adopted_unit_appears_before_the_next_decide(
    workspace: Path,
) -> None:
    assert source_line(refresh(workspace), WARD)["status"] == "compared"
    assert decide(workspace, WARD, "replace").exit_code == 0
    draft = workspace / WARD_PATH
    draft.write_text(draft.read_text().replace("Terapia intensiva.", "Terapia intensiva (TI)."))
    assert source_line(refresh(workspace), WARD)["status"] == "compared"
    # A curator copies a current unit of the source under a new name.
    enum_file = workspace / "evidence/curated/enum/admin-tipo-reparto.md"
    (workspace / "evidence/curated/enum/reparti-copia.md").write_bytes(enum_file.read_bytes())
    before = tree_state(workspace)
    for decision in ("replace", "keep"):
        stale = decide(workspace, WARD, decision)
        assert stale.exit_code == 3 and stale.json["errors"][0]["code"] == "E304"
        assert "reparti-copia.md" in stale.json["errors"][0]["message"]
        assert tree_state(workspace) == before


def test_a_conflicting_file_seen_by_the_refresh_does_not_make_keep_stale(workspace: Path) -> None:
    # The id is owned by a manual unit already when the refresh runs: a review item
    # blocks replace, but keep (which adopts nothing) must stay possible.
    owned = (workspace / "evidence/curated/domain/validated-lab-results.md").read_text()
    draft = workspace / "evidence/incoming/copied-rule.md"
    draft.write_text(owned.replace("Preliminary", "Provisional"))
    locator = "fs:evidence/incoming/copied-rule.md"
    assert source_line(refresh(workspace), locator)["review_items"] == 1
    kept = decide(workspace, locator, "keep")
    assert kept.exit_code == 0, kept.stdout
    assert record(workspace, locator)["decision"]["decision"] == "keep"
