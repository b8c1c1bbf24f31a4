"""A BIRD-shaped source written for these tests: two databases, ten questions.

``harbor`` follows BIRD's own layout (``dev_databases/harbor/database_description``),
``clinic`` the short one (``clinic/database_description``).  The description
files carry what real ones do: a UTF-8 BOM, CRLF line ends, quoted cells over
several lines, trailing spaces in names, code lists in value_description.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evidence_tool.importers.base import ImportInput, SourceFile

BOM = "\ufeff"
HEADER = "original_column_name,column_name,column_description,data_format,value_description"

# BOM, CRLF, a code list over three lines in one quoted cell, a name with a trailing space.
VESSELS_CSV = (
    BOM
    + HEADER
    + "\r\n"
    + "VesselId,vessel id,unique id of the vessel,integer,\r\n"
    + 'Flag State ,flag state,"country whose flag the vessel flies, as\r\nan ISO code",text,\r\n'
    + 'hull_kind,,kind of hull,text,"S: single hull;\r\nD: double hull;\r\nX: unknown"\r\n'
    + "gross_tonnage,Gross Tonnage,,real,unit: metric tonnes\r\n"
)
# No BOM, LF, quoted code values, a description that only holds prose about values.
CALLS_CSV = (
    HEADER
    + "\n"
    + "call_id,,port call id,integer,\n"
    + 'status,call status,,text,"""A"": arrived; ""D"": departed; ""C"": cancelled"\n'
    + "berth_hours,berth hours,hours spent at the berth,real,"
    + '"commonsense evidence:\nlonger stays cost more"\n'
)
PETS_CSV = (
    BOM
    + HEADER
    + "\n"
    + "pet_id,,id of the pet,integer,\n"
    + 'species,,animal species,text,"0: dog; 1: cat; 2: other"\n'
    + 'neutered,,whether the pet is neutered,integer,"0: N; 1: Y"\n'
    + "weight_kg,weight,body weight in kilograms,real,\n"
)

QUESTIONS: list[dict[str, Any]] = [
    {
        "question_id": 0,
        "db_id": "harbor",
        "question": "How many double-hull vessels fly the Liberian flag?",
        "evidence": "double-hull refers to hull_kind = 'D'; Liberian flag refers to "
        "`Flag State` = 'LR'",
        "SQL": "SELECT COUNT(*) FROM vessels WHERE hull_kind = 'D' AND `Flag State` = 'LR'",
        "difficulty": "simple",
    },
    {
        "question_id": 1,
        "db_id": "harbor",
        "question": "What is the cancellation rate of port calls?",
        "evidence": "cancellation rate = DIVIDE(COUNT(status = 'C'), COUNT(call_id)) * 100",
        "SQL": "SELECT CAST(SUM(status = 'C') AS REAL) * 100 / COUNT(call_id) FROM calls",
        "difficulty": "moderate",
    },
    {
        "question_id": 2,
        "db_id": "harbor",
        "question": "List the vessels that stayed longest at a berth.",
        "evidence": "stayed longest refers to MAX(berth_hours); "
        "double-hull refers to hull_kind = 'D'",
        "SQL": "SELECT v.VesselId FROM vessels v JOIN calls c ON c.vessel = v.VesselId "
        "ORDER BY c.berth_hours DESC LIMIT 1",
        "difficulty": "moderate",
    },
    {
        "question_id": 3,
        "db_id": "harbor",
        "question": "Which calls departed?",
        "evidence": "status = 'D'",
        "SQL": "SELECT call_id FROM calls WHERE status = 'D'",
        "difficulty": "simple",
    },
    {
        "question_id": 4,
        "db_id": "harbor",
        "question": "What is the heaviest vessel's tonnage in kilotonnes?",
        "evidence": "tonnage in kilotonnes = gross_tonnage / 1000; heaviest refers to "
        "the largest gross tonnage",
        "SQL": "SELECT MAX(gross_tonnage) / 1000 FROM vessels",
        "difficulty": "challenging",
    },
    {
        "question_id": 5,
        "db_id": "clinic",
        "question": "How many cats are neutered?",
        "evidence": "cats refers to species = 1; neutered refers to neutered = 1",
        "SQL": "SELECT COUNT(*) FROM pets WHERE species = 1 AND neutered = 1",
        "difficulty": "simple",
    },
    {
        "question_id": 6,
        "db_id": "clinic",
        "question": "What share of pets weigh over 30 kg?",
        "evidence": "share = DIVIDE(SUM(weight_kg > 30), COUNT(pet_id)); "
        "weigh over 30 kg refers to weight_kg > 30",
        "SQL": "SELECT CAST(SUM(weight_kg > 30) AS REAL) / COUNT(pet_id) FROM pets",
        "difficulty": "moderate",
    },
    {
        "question_id": 7,
        "db_id": "clinic",
        "question": "Name the heaviest dog.",
        "evidence": "dog refers to species = 0; heaviest means the highest weight",
        "SQL": "SELECT name FROM pets WHERE species = 0 ORDER BY weight_kg DESC LIMIT 1",
        "difficulty": "simple",
    },
    {
        "question_id": 8,
        "db_id": "clinic",
        "question": "Average weight of neutered cats?",
        "evidence": "cats refers to species = 1; neutered refers to neutered = 1",
        "SQL": "SELECT AVG(weight_kg) FROM pets WHERE species = 1 AND neutered = 1",
        "difficulty": "simple",
    },
    {
        "question_id": 9,
        "db_id": "clinic",
        "question": "Which pets have no recorded weight?",
        "evidence": "",
        "SQL": "SELECT pet_id FROM pets WHERE weight_kg IS NULL",
        "difficulty": "simple",
    },
]

FILES: dict[str, str] = {
    "dev_databases/harbor/database_description/vessels.csv": VESSELS_CSV,
    "dev_databases/harbor/database_description/calls.csv": CALLS_CSV,
    "clinic/database_description/pets.csv": PETS_CSV,
    "dev_tables.json": "[]\n",
}


def questions_json(questions: list[dict[str, Any]] | None = None) -> str:
    """BIRD's own layout: an indented array, non-ASCII kept as written."""
    return json.dumps(QUESTIONS if questions is None else questions, indent=4, ensure_ascii=False)


def write(root: Path, questions: list[dict[str, Any]] | None = None) -> Path:
    """The fixture under ``root`` (bytes as given: no newline translation)."""
    for rel, text in {**FILES, "dev.json": questions_json(questions)}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def source_input(
    root: Path, *, language: str = "en", options: dict[str, Any] | None = None
) -> ImportInput:
    """What the pipeline hands the importer for the folder ``root``."""
    if root.is_file():
        files = [SourceFile(root.name, root, root.stat().st_size)]
    else:
        found = sorted(p for p in root.rglob("*") if p.is_file())
        files = [SourceFile(p.relative_to(root).as_posix(), p, p.stat().st_size) for p in found]
    return ImportInput(
        tuple(files),
        options or {},
        language,
        100 * 1024 * 1024,
        key="evidence.sources[0]",
        root="imports/bird",
    )
