"""The dbt format end to end: sources add -> refresh -> comparison -> replace -> search.

The project here is written by the test (an operating-theatre schedule, smaller than the
fixture project and free of review items, so replace can go through); the fixture project
and manifest show that open review items hold replace back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runner import tht
from dbt_helpers import MANIFEST, PROJECT
from import_helpers import (
    add,
    comparison,
    import_and_replace,
    record_of,
    refresh_one,
    replace,
    search_ids,
    write,
)

DOCS = """\
{% docs session_state %}
Where a theatre session stands on the day.

| value | meaning |
|---|---|
| planned | on the list, not started |
| running | the first incision was made |
| closed | the last patient left the theatre |
{% enddocs %}
"""
SESSIONS = """\
version: 2
models:
  - name: theatre_sessions
    description: One row per operating-theatre session, morning or afternoon.
    config:
      alias: sessions
    columns:
      - name: session_id
        description: Key of the session.
      - name: state
        description: "{{ doc('session_state') }}"
        data_tests:
          - accepted_values:
              arguments:
                values: [planned, running, closed]
      - name: minutes_used
        description: Minutes between the first incision and the last closure.
        tags: [timing]
semantic_models:
  - name: sessions_sm
    model: ref('theatre_sessions')
    entities:
      - name: session
        type: primary
        expr: session_id
    measures:
      - name: used_minutes
        agg: sum
        expr: minutes_used
metrics:
  - name: theatre_minutes
    label: Theatre minutes used
    type: simple
    type_params:
      measure: used_minutes
"""
IDS = [
    "evidence:dbt:theatre_sessions",
    "evidence:dbt:theatre_sessions.session_id",
    "evidence:dbt:theatre_sessions.state",
    "evidence:dbt:theatre_sessions.state.values",
    "evidence:dbt:theatre_sessions.minutes_used",
    "evidence:dbt:measure.used_minutes",
    "evidence:dbt:metric.theatre_minutes",
    "evidence:dbt:entity.theatre_sessions.session",
]
REL = "imports/theatre"


def _project(ws: Path) -> None:
    write(ws, f"{REL}/dbt_project.yml", "name: theatre\nmodel-paths: [models]\n")
    write(ws, f"{REL}/models/docs.md", DOCS)
    write(ws, f"{REL}/models/sessions.yml", SESSIONS)


def test_project_round_trip_to_search_and_unchanged_again(workspace: Path) -> None:
    _project(workspace)
    comp = import_and_replace(workspace, "dbt", REL, "--language", "en", "--option", "schema=ot")
    assert [p["id"] for p in comp["proposed"]] == IDS
    assert comp["review_items"] == []
    assert {k: v for k, v in comp["not_imported"][0].items() if k != "at"} == {
        "element": "dbt model theatre_sessions column minutes_used",
        "what": "tags",
    }
    enum = next(
        p for p in comp["proposed"] if p["id"] == "evidence:dbt:theatre_sessions.state.values"
    )
    assert "## Column\n\not.sessions.state" in enum["markdown"]
    assert '### "running"\n\nthe first incision was made' in enum["markdown"]
    # The excerpts are the test block, the description scalar and the docs block's text.
    assert enum["excerpts"][0].startswith("accepted_values:")
    assert enum["excerpts"][2].startswith("Where a theatre session stands on the day.")

    assert "evidence:dbt:theatre_sessions.state.values" in search_ids(workspace, "first incision")
    assert "evidence:dbt:theatre_sessions" in search_ids(workspace, "operating-theatre session")
    shown = tht(workspace, "show", "evidence:dbt:metric.theatre_minutes")
    assert shown.json["result"]["imported_from"] == [f"{REL}/models/sessions.yml:31-35"]
    assert tht(workspace, "verify").exit_code == 0

    again = refresh_one(workspace, "dbt", REL)
    assert again.exit_code == 0
    assert [s["status"] for s in again.json["result"]["sources"]] == ["unchanged"]
    assert record_of(workspace, "dbt", REL)["comparison"] is None


def test_a_changed_description_is_a_modified_proposal_with_the_same_id(workspace: Path) -> None:
    _project(workspace)
    import_and_replace(workspace, "dbt", REL, "--language", "en")
    sessions = workspace / REL / "models" / "sessions.yml"
    sessions.write_text(
        SESSIONS.replace("Key of the session.", "Surrogate key of the theatre session.")
    )
    refreshed = refresh_one(workspace, "dbt", REL)
    assert refreshed.exit_code == 0, refreshed.stdout
    comp = comparison(workspace, "dbt", REL)
    assert [p["id"] for p in comp["proposed"]] == IDS
    assert comp["retire"] == []
    current = {c["id"]: c for c in comp["current"]}
    assert set(current) == set(IDS)
    changed = [
        p["id"] for p in comp["proposed"] if p["content_hash"] != current[p["id"]]["content_hash"]
    ]
    assert changed == ["evidence:dbt:theatre_sessions.session_id"]
    unit = next(p for p in comp["proposed"] if p["id"] == changed[0])
    assert unit["path"] == current[changed[0]]["path"]  # replaced in place, not a new file
    decided = replace(workspace, "dbt", REL)
    assert decided.exit_code == 0, decided.stdout
    assert "evidence:dbt:theatre_sessions.session_id" in search_ids(workspace, "surrogate key")


def test_italian_source_writes_italian_headings(workspace: Path) -> None:
    _project(workspace)
    comp = import_and_replace(workspace, "dbt", REL)  # the workspace's language: it
    enum = next(p for p in comp["proposed"] if p["id"].endswith(".state.values"))
    assert (
        enum["markdown"].count("## Valori") == 1
        and "# Valori di theatre_sessions.state" in (enum["markdown"])
    )
    mapping = next(p for p in comp["proposed"] if p["id"].startswith("evidence:dbt:entity."))
    assert "# Entità session di theatre_sessions" in mapping["markdown"]


def test_incomplete_elements_are_listed_and_do_not_hold_the_rest_back(workspace: Path) -> None:
    shutil.copytree(PROJECT, workspace / "imports" / "wards")
    assert add(workspace, "dbt", "imports/wards", "--language", "en").exit_code == 0
    assert refresh_one(workspace, "dbt", "imports/wards").exit_code == 0
    comp = comparison(workspace, "dbt", "imports/wards")
    assert comp["review_items"] == []
    held = sorted(n["reason"] for n in comp["not_imported"] if n.get("reason"))
    assert held == ["meaning-missing", "not-representable"]
    decided = replace(workspace, "dbt", "imports/wards")
    assert decided.exit_code == 0, decided.stdout + decided.stderr
    written = {p.name for p in (workspace / "evidence/curated").rglob("*.md")}
    assert "dbt-admissions.status.values.md" in written
    assert "dbt-admissions.admission_source.values.md" not in written


def test_manifest_file_source_refreshes_with_json_excerpts(workspace: Path) -> None:
    write(workspace, "imports/target/manifest.json", MANIFEST.read_bytes())
    assert add(workspace, "dbt", "imports/target/manifest.json").exit_code == 0
    refreshed = refresh_one(workspace, "dbt", "imports/target/manifest.json")
    assert refreshed.exit_code == 0, refreshed.stdout
    comp = comparison(workspace, "dbt", "imports/target/manifest.json")
    assert len(comp["proposed"]) == 20  # one element lacks meanings: not imported
    state = next(p for p in comp["proposed"] if p["id"] == "evidence:dbt:bed_stays.bed_state")
    assert json.loads(state["excerpts"][0]).startswith("State of the bed that night:")
