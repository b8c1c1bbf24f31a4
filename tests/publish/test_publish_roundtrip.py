"""Round trips (issue 33): publish each format from the shipped fixture workspace and from
a BIRD-shaped one, import the output back with this project's own importer, and compare.

Every published unit must come back in some form; per kind, the fields that change are
exactly the ones listed below with the reason (what the target format has no place for).
Fields: ``kind`` (it comes back as another kind holding its text), ``title``, ``text``
(the payload), ``synonyms`` (a glossary's synonyms and variants), ``applies_to``, and
``merged`` (several units come back as one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml_check
from cortex_spec import SEMANTIC_MODEL, structural_problems
from publish_helpers import bird_workspace, fixture_workspace, import_back, losses

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.publish import load_active, publish
from evidence_tool.unit import Unit

# Reasons, once: every importer names the tables and columns from the target's own
# structure, so applies_to comes back as what the target could say (no concepts, a
# knowledge file none at all).
A = "applies_to"
LOSSES: dict[tuple[str, str], dict[str, set[str]]] = {
    # Cortex: a metric is named by an identifier (its concept and title become that name,
    # its columns are not kept); an enum's meanings are one line each in the description;
    # a verified query is titled by its question and keeps only the SQL; every rule is in
    # the one custom_instructions.
    ("fixture", "cortex"): {
        "formula": {A, "text", "title"},
        "enum": {A, "text", "title"},
        "glossary": {A, "title"},
        "example": {A, "text", "title"},
        "domain": {"merged"},
        "normalization": {"merged"},
    },
    ("bird", "cortex"): {
        "formula": {A, "text", "title"},
        "enum": {A, "title"},
        "glossary": {A, "text"},  # a column's description also lists its enum's meanings
        "example": {"text"},  # BIRD titles are the questions; the Evidence line is lost
    },
    # WrenAI: SQL pairs are titled by their question; glossary terms have no synonyms;
    # formulas, enums and normalizations are instruction text (kind); a rule with
    # subheadings comes back split at them (text).
    ("fixture", "wrenai"): {
        "formula": {A, "kind"},
        "enum": {A, "kind"},
        "normalization": {A, "kind"},
        "domain": {A, "text"},
        "glossary": {A, "synonyms"},
        "example": {A, "title"},
    },
    ("bird", "wrenai"): {
        "formula": {A, "kind"},
        "enum": {A, "kind"},
        "glossary": {A, "synonyms"},
        "example": set(),
    },
    # Vanna: documentation rows (title: the first line) and question/SQL pairs, nothing else.
    ("fixture", "vanna"): {
        **{k: {A, "kind", "title"} for k in ("formula", "enum", "glossary")},
        **{k: {A, "kind", "title"} for k in ("normalization", "mapping", "reference")},
        "domain": {A, "title"},
        "example": {A, "text", "title"},
    },
    ("bird", "vanna"): {
        **{k: {A, "kind", "title"} for k in ("formula", "enum", "glossary")},
        "example": {"text"},
    },
    # dbt: models and columns are titled by their names, every model in the importer's one
    # schema (the fixture has several), no synonyms, a column's one description holds its
    # definition and its enum's meanings.
    ("fixture", "dbt"): {"enum": {A, "text", "title"}, "glossary": {A, "title"}},
    ("bird", "dbt"): {"glossary": {A, "text", "synonyms"}, "enum": {A, "title"}},
}
OPTIONS = {("bird", "dbt"): {"schema": "transit"}}
OUTPUT = {"cortex": "model.yaml", "vanna": "training.jsonl", "wrenai": "wren", "dbt": "dbt"}


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("roundtrip")
    return {"fixture": fixture_workspace(tmp), "bird": bird_workspace(tmp)}


def _units(ws: Path) -> dict[str, Unit]:
    archive = LocalEvidenceArchive(ws)
    state = archive.state()
    assert state.active is not None
    return {e.unit.id: e.unit for e in load_active(archive, state.active).entries}


@pytest.mark.parametrize("fmt", ["cortex", "wrenai", "vanna", "dbt"])
@pytest.mark.parametrize("which", ["fixture", "bird"])
def test_round_trip_loses_exactly_the_listed_fields(
    workspaces: dict[str, Path], which: str, fmt: str
) -> None:
    ws = workspaces[which]
    units = _units(ws)
    out = ws / "published" / f"{fmt}-rt" / OUTPUT[fmt]
    result = publish(ws, fmt, str(out))
    skipped = {n.unit_id for n in result.not_exported}
    sent = [u for i, u in sorted(units.items()) if i not in skipped]
    assert len(sent) == result.units > 0
    if fmt == "dbt":  # the patch is reviewed into a project: give it one to be read as
        (out / "dbt_project.yml").write_text("name: patch\nmodel-paths: ['.']\n", "utf-8")
    back = import_back(fmt, out, **OPTIONS.get((which, fmt), {}))
    merged = ("domain", "normalization") if fmt == "cortex" else ()
    lost, missing = losses(sent, [i.unit for i in back.units], merged)
    assert missing == []
    assert lost == LOSSES[(which, fmt)]
    # Nothing published lands outside what the importer reads as the format's layout.
    outside = [n for n in back.not_imported if n.element.startswith("file ")]
    assert [n for n in outside if "dbt_project.yml" not in n.element] == []


def test_cortex_model_meets_the_published_specification(workspaces: dict[str, Path]) -> None:
    import jsonschema

    for which, ws in sorted(workspaces.items()):
        out = ws / "published" / "spec" / "model.yaml"
        publish(ws, "cortex", str(out), database="ANALYTICS")
        model = yaml_check.load_exactly(out.read_bytes())
        jsonschema.validate(model, SEMANTIC_MODEL)
        assert structural_problems(model) == [], which
        assert {t["base_table"]["database"] for t in model["tables"]} == {"ANALYTICS"}
        queries = model["verified_queries"]
        assert queries and all(isinstance(q.get("verified_at"), int) for q in queries)


def test_the_checks_can_fail() -> None:
    """The schema and the structural check refuse what a careless publisher could write."""
    import jsonschema

    bad = {
        "name": "m",
        "tables": [
            {
                "name": "t",
                "base_table": {"database": "D", "schema": "s", "table": "t"},
                "dimensions": [{"name": "a", "expr": "a"}],  # no data_type
            }
        ],
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SEMANTIC_MODEL)
    twice = {"name": "m", "tables": [bad["tables"][0], bad["tables"][0]]}  # type: ignore[index]
    assert structural_problems(twice) == ["table t twice"]


@pytest.mark.parametrize("fmt", ["cortex", "wrenai", "vanna", "dbt"])
def test_round_trip_through_sources_add_and_refresh(
    workspaces: dict[str, Path], tmp_path: Path, fmt: str
) -> None:
    """The whole import path into a fresh workspace (spans verified, units rendered and
    parsed again): every unit the importer reads from the output is proposed, none is
    invalid."""
    import shutil

    from cli_runner import invoke
    from publish_helpers import tht

    ws = workspaces["bird"]
    out = ws / "published" / f"{fmt}-pipeline" / OUTPUT[fmt]
    publish(ws, fmt, str(out))
    fresh = tmp_path / "fresh"
    made = invoke(["workspace", "new", str(fresh), "--id", "fresh", "--language", "en"])
    assert made.exit_code == 0, made.stdout + made.stderr
    target = fresh / "imports" / OUTPUT[fmt]
    if out.is_dir():
        shutil.copytree(out, target)
        if fmt == "dbt":
            (target / "dbt_project.yml").write_text("name: patch\nmodel-paths: ['.']\n", "utf-8")
    else:
        target.parent.mkdir(parents=True)
        shutil.copy(out, target)
    assert tht(fresh, "sources", "add", "--format", fmt, str(target)).exit_code == 0
    refreshed = tht(fresh, "refresh")
    assert refreshed.exit_code == 0, refreshed.stdout + refreshed.stderr
    expected = len(import_back(fmt, target, **OPTIONS.get(("bird", fmt), {})).units)
    [line] = refreshed.json["result"]["sources"]
    assert line["review_items"] == 0, line
    assert len(line["proposed"]) == expected > 0, line
