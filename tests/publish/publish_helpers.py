"""Helpers for the publish tests: workspaces to publish from (the shipped fixture and a
BIRD-shaped one built here), and reading a published output back with this project's
own importer (its public entry point, ``importer_for(...).read``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from cli_runner import CliResult, invoke

from evidence_tool.importers.base import ImportInput, ImportResult, SourceFile
from evidence_tool.importers.formats import importer_for
from evidence_tool.publish.text import as_text
from evidence_tool.unit import Unit, render

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "workspace"


def tht(ws: Path, *args: str) -> CliResult:
    return invoke(["workspace", "evidence", *args, "--workspace-root", str(ws), "--json"])


def fixture_workspace(tmp: Path) -> Path:
    dest = tmp / "fixture-ws"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns(".evidence-cache"))
    return dest


def source_files(path: Path) -> tuple[SourceFile, ...]:
    """The regular files of a file or folder source, as the pipeline lists them."""
    if path.is_file():
        return (SourceFile(path.name, path, path.stat().st_size, path.name),)
    found = sorted(p for p in path.rglob("*") if p.is_file())
    return tuple(SourceFile(p.relative_to(path).as_posix(), p, p.stat().st_size) for p in found)


def import_back(fmt: str, path: Path, **options: Any) -> ImportResult:
    """What this project's importer of ``fmt`` makes of ``path`` (a file or a folder)."""
    source = ImportInput(source_files(path), dict(options), "en", 10 << 20)
    return importer_for(fmt).read(source)


# ---- a BIRD-shaped workspace: the units BIRD's importer makes, curated and consolidated.

RAIL_QUESTIONS = [
    {
        "question_id": 11,
        "db_id": "rail",
        "question": "How many delayed trains left Milano Centrale?",
        "evidence": "delayed refers to delay_min > 5; Milano Centrale refers to origin = 'MC'",
        "SQL": "SELECT COUNT(*) FROM trains WHERE delay_min > 5 AND origin = 'MC'",
        "difficulty": "simple",
    },
    {
        "question_id": 12,
        "db_id": "rail",
        "question": "What is the punctuality rate of regional trains?",
        "evidence": "punctuality rate = DIVIDE(SUM(delay_min <= 5), COUNT(train_id)); "
        "regional refers to category = 'R'",
        "SQL": "SELECT CAST(SUM(delay_min <= 5) AS REAL) / COUNT(train_id) FROM trains "
        "WHERE category = 'R'",
        "difficulty": "moderate",
    },
    {
        "question_id": 13,
        "db_id": "rail",
        "question": "Which stations have step-free access?",
        "evidence": "step-free access refers to step_free = 1",
        "SQL": "SELECT name FROM stations WHERE step_free = 1",
        "difficulty": "simple",
    },
]
RAIL_CSV = {
    "trains": "original_column_name,column_name,column_description,data_format,value_description\n"
    "train_id,train id,the train's number,integer,\n"
    'category,,service category,text,"R: regional; IC: intercity; FR: high speed"\n'
    "delay_min,delay,minutes late at arrival,integer,\n"
    "origin,,station code the train leaves from,text,\n",
    "stations": "original_column_name,column_name,column_description,data_format,value_description\n"
    "station_id,,station code,text,\n"
    'step_free,step free,whether a wheelchair can reach every platform,integer,"0: no; 1: yes"\n',
}


def bird_units(tmp: Path) -> list[Unit]:
    folder = tmp / "bird-src"
    desc = folder / "dev_databases" / "rail" / "database_description"
    desc.mkdir(parents=True)
    (folder / "dev.json").write_text(json.dumps(RAIL_QUESTIONS, indent=1), encoding="utf-8")
    for table, text in RAIL_CSV.items():
        (desc / f"{table}.csv").write_text(text, encoding="utf-8")
    result = import_back("bird", folder, schemas={"rail": "transit"})
    assert not result.review_items, result.review_items
    return [i.unit for i in result.units]


def bird_workspace(tmp: Path) -> Path:
    """A new workspace holding the BIRD importer's units as curated files, initialized."""
    root = tmp / "bird-ws"
    made = invoke(["workspace", "new", str(root), "--id", "rail-ops", "--language", "en"])
    assert made.exit_code == 0, made.stdout + made.stderr
    units = bird_units(tmp)
    assert len(units) >= 12, [u.id for u in units]
    for unit in units:
        name = unit.id.removeprefix("evidence:").replace(":", ".")
        path = root / "evidence" / "curated" / unit.kind / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(unit), encoding="utf-8")
    for step in ("init", "consolidate"):
        done = tht(root, step)
        assert done.exit_code == 0, done.stdout + done.stderr
    return root


# ---- comparing what went out with what came back


def key_of(unit: Unit) -> str:
    """What identifies a unit across a round trip, whatever id the importer gives it: the
    text a target keeps verbatim (an example's question, a rule, a definition, an enum's
    column, a formula's SQL)."""
    p = unit.payload.to_json()
    field = {
        "example": "question",
        "domain": "rule",
        "glossary": "definition",
        "enum": "column",
        "formula": "sql",
    }[unit.kind]
    text = str(p[field])
    if unit.kind == "enum":  # table.column: dbt names every model in one schema
        text = ".".join(text.split(".")[-2:])
    return f"{unit.kind}:{text}"


def _main_text(unit: Unit) -> str:
    p = unit.payload.to_json()
    for field in ("rule", "definition", "question", "sql"):
        if isinstance(p.get(field), str):
            return str(p[field])
    return ""


def _text_without_words(unit: Unit) -> dict[str, Any]:
    """The payload less a glossary's synonyms and variants (compared on their own)."""
    p = unit.payload.to_json()
    return {k: v for k, v in p.items() if k not in ("synonyms", "variants")}


def losses(
    sent: list[Unit], back: list[Unit], merged: tuple[str, ...] = ()
) -> tuple[dict[str, set[str]], list[str]]:
    """Per kind of the published units, the fields that differ from the unit its import gave
    back: ``kind`` (it came back as another kind, its text as that kind's text),
    ``title``, ``text`` (the payload), ``synonyms`` (a glossary's synonyms and variants),
    ``applies_to``, ``merged`` (a unit of one of the ``merged`` kinds is in a unit holding
    several: Cortex's one ``custom_instructions``); and the ids that came back in no form.
    A unit of the same kind whose text starts with the one sent (or the other way round)
    is its twin with its text changed (a description that also lists an enum's meanings;
    a rule split at its subheadings)."""
    by_key = {}
    by_text: dict[str, Unit] = {}
    for unit in back:
        if unit.kind in ("example", "domain", "glossary", "enum", "formula"):
            by_key.setdefault(key_of(unit), unit)
        by_text.setdefault(_main_text(unit), unit)
    lost: dict[str, set[str]] = {}
    missing = []
    for unit in sent:
        fields = lost.setdefault(unit.kind, set())
        if unit.kind in merged:
            whole = [b for b in back if b.kind == "domain" and _merged_text(unit) in _main_text(b)]
            if whole:
                fields.add("merged")
            else:
                missing.append(unit.id)
            continue
        twin = by_key.get(key_of(unit)) if unit.kind in KEYED else None
        if twin is None and unit.kind in KEYED:
            mine = _main_text(unit)
            twin = next(
                (
                    b
                    for b in back
                    if b.kind == unit.kind
                    and _main_text(b)
                    and (_main_text(b).startswith(mine) or mine.startswith(_main_text(b)))
                ),
                None,
            )
        if twin is None:
            twin = by_text.get(as_text(unit))
            if twin is None or twin.kind == unit.kind:
                missing.append(unit.id)
                continue
            fields.add("kind")
        if twin.title != unit.title:
            fields.add("title")
        if twin.kind == unit.kind and _text_without_words(twin) != _text_without_words(unit):
            fields.add("text")
        same_text = _text_without_words(twin) == _text_without_words(unit)
        if twin.kind == "glossary" == unit.kind and twin.payload != unit.payload and same_text:
            fields.add("synonyms")
        if twin.metadata.applies_to != unit.metadata.applies_to:
            fields.add("applies_to")
    return {k: v for k, v in lost.items()}, missing


def _merged_text(unit: Unit) -> str:
    p = unit.payload.to_json()
    return str(p["rule"]) if unit.kind == "domain" else as_text(unit)


KEYED = ("example", "domain", "glossary", "enum", "formula")
