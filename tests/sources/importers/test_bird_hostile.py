"""Hostile or malformed BIRD input: a coded error naming the file and the line, never a
traceback, and never a partial result."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import bird_fixture as bf
import pytest

from evidence_tool.errors import DescriptorError, EvidenceError
from evidence_tool.importers.bird import BirdImporter

VESSELS = "dev_databases/harbor/database_description/vessels.csv"
PETS = "clinic/database_description/pets.csv"


def _put(rel: str, data: bytes) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / rel).write_bytes(data)

    return edit


def _questions(text: str) -> Callable[[Path], None]:
    return _put("dev.json", text.encode("utf-8"))


def _csv_rows(*rows: str, header: str = bf.HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode("utf-8")


_Q = json.dumps(bf.QUESTIONS[0])
# (name, edit, file named, line named, words of the message)
CASES: list[tuple[str, Callable[[Path], None], str, int | None, str]] = [
    ("questions_not_json", _questions("SELECT 1;\n"), "dev.json", 1, "not a JSON array"),
    ("questions_an_object", _questions('\n\n{"questions": []}'), "dev.json", 3, "not an array"),
    (
        "record_missing_sql",
        _questions(
            f'[\n{_Q},\n{{"question_id": 7, "db_id": "x",\n "question": "q", "evidence": ""}}\n]'
        ),
        "dev.json",
        3,
        "lacks SQL",
    ),
    (
        "record_trailing_comma",
        _questions(f'[\n{_Q},\n\n{{"question_id": 8, "db_id": "x",\n "SQL": "s",}}\n]'),
        "dev.json",
        5,
        "invalid JSON",
    ),
    ("element_not_object", _questions(f"[{_Q},\n 17]"), "dev.json", 2, "not a JSON object"),
    ("array_never_closed", _questions(f"[\n{_Q},\n{_Q}\n"), "dev.json", 4, "expected ',' or ']'"),
    (
        "record_never_closed",
        _questions('[\n{"db_id": "x", "question": "'),
        "dev.json",
        2,
        "not closed",
    ),
    (
        "text_after_array",
        _questions(f"[{_Q}]\n\nDROP TABLE x"),
        "dev.json",
        3,
        "text after the closing",
    ),
    (
        "question_id_object",
        _questions(json.dumps([{**bf.QUESTIONS[0], "question_id": {"a": 1}}])),
        "dev.json",
        1,
        "question_id",
    ),
    (
        "evidence_not_string",
        _questions(json.dumps([{**bf.QUESTIONS[0], "evidence": 3}])),
        "dev.json",
        1,
        "evidence is not a string",
    ),
    (
        "nul_in_questions",
        _put("dev.json", f"[\n{_Q[:40]}\x00{_Q[40:]}]".encode()),
        "dev.json",
        2,
        "NUL",
    ),
    (
        "latin1_questions",
        _put("dev.json", f"[\n\n{_Q}]".replace("double", "d\xe9ble").encode("latin-1")),
        "dev.json",
        3,
        "not UTF-8",
    ),
    (
        "huge_record",
        _questions(
            json.dumps(
                [bf.QUESTIONS[0], {**bf.QUESTIONS[1], "evidence": "x" * 5_000_000}], indent=1
            )
        ),
        "dev.json",
        10,
        "larger than",
    ),
    (
        "csv_wrong_headers",
        _put(VESSELS, _csv_rows("a,b", header="name,type,comment")),
        VESSELS,
        1,
        "the header has 'name'",
    ),
    (
        "csv_header_lacks_name",
        _put(PETS, _csv_rows("x,y", header="column_name,column_description")),
        PETS,
        1,
        "lacks original_column_name",
    ),
    ("csv_empty", _put(PETS, b""), PETS, None, "empty"),
    (
        "csv_nul_byte",
        _put(PETS, _csv_rows("pet_id,,id,integer,", "spe\x00cies,,x,text,")),
        PETS,
        3,
        "NUL",
    ),
    (
        "csv_cp1252",
        _put(
            PETS,
            _csv_rows("pet_id,,id,integer,", "breed,,race canine \u2013 f\xe9line,text,").replace(
                "\u2013 f\xe9line".encode(), "\u2013 f\xe9line".encode("cp1252")
            ),
        ),
        PETS,
        3,
        "iconv -f cp1252",
    ),
    (
        "csv_ten_megabyte_cell",
        _put(PETS, _csv_rows("pet_id,,id,integer,", 'notes,,"' + "n" * 10_000_000 + '",text,')),
        PETS,
        3,
        "field larger than field limit",
    ),
    (
        "csv_unclosed_quote",
        _put(PETS, _csv_rows("pet_id,,id,integer,", 'species,,"animal', "kind,,x,text,")),
        PETS,
        3,
        "a quoted cell is not closed before the end of the file",
    ),
    (
        "csv_extra_cells",
        _put(PETS, _csv_rows("pet_id,,id,integer,,,surplus")),
        PETS,
        2,
        "7 cells, the header 5",
    ),
]


@pytest.mark.parametrize(
    ("name", "edit", "path", "line", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_attack_malformed_bird_input_is_a_coded_error_at_its_line(
    tmp_path: Path,
    name: str,
    edit: Callable[[Path], None],
    path: str,
    line: int | None,
    words: str,
) -> None:
    root = bf.write(tmp_path / "bird")
    edit(root)
    with pytest.raises(EvidenceError) as caught:
        BirdImporter().read(bf.source_input(root))
    err = caught.value
    assert (err.code, err.path, err.line) == ("E504", f"imports/bird/{path}", line), err.message
    assert words in err.message
    where = f"imports/bird/{path}:{line}" if line else f"imports/bird/{path}"
    assert err.message.startswith(where)


def test_attack_sweep_ran_every_case_class() -> None:
    # Both files, and the JSON, encoding and CSV classes: a sweep that lost its cases fails.
    assert len(CASES) == 21
    assert {c[2] for c in CASES} == {"dev.json", VESSELS, PETS}


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"schemas": {"harbor": 7}}, "evidence.sources[0].options.schemas.harbor"),
        ({"schemas": {"harbor": " "}}, "evidence.sources[0].options.schemas.harbor"),
        ({"questions": "nothing.json"}, "evidence.sources[0].options.questions"),
    ],
)
def test_attack_bad_options_name_the_descriptor_key(
    tmp_path: Path, options: dict[str, object], key: str
) -> None:
    root = bf.write(tmp_path / "bird")
    with pytest.raises(DescriptorError) as caught:
        BirdImporter().read(bf.source_input(root, options=options))
    assert caught.value.code == "E902"
    assert caught.value.message.startswith(key)


def test_attack_row_without_a_column_name_is_a_review_item_not_a_guess(tmp_path: Path) -> None:
    root = bf.write(tmp_path / "bird")
    (root / PETS).write_bytes(_csv_rows("pet_id,,id,integer,", " ,owner,who owns it,text,"))
    result = BirdImporter().read(bf.source_input(root))
    items = [i for i in result.review_items if i[0] == "invalid-element"]
    assert len(items) == 1 and f"imports/bird/{PETS}:3" in items[0][1]
    assert not [u for u in result.units if "owner" in u.unit.id]


def test_attack_value_list_naming_a_value_twice_imports_no_enum(tmp_path: Path) -> None:
    root = bf.write(tmp_path / "bird")
    (root / PETS).write_bytes(_csv_rows('sex,,sex,text,"M: male; F: female; M: mixed"'))
    result = BirdImporter().read(bf.source_input(root))
    assert [(c, u) for c, _, u in result.review_items] == [
        ("invalid-element", "evidence:bird:clinic.pets.sex.values")
    ]
    assert "evidence:bird:clinic.pets.sex" in {u.unit.id for u in result.units}
    assert "evidence:bird:clinic.pets.sex.values" not in {u.unit.id for u in result.units}


def test_attack_folder_without_bird_files_is_refused_not_an_empty_import(tmp_path: Path) -> None:
    root = tmp_path / "export"
    (root / "databases").mkdir(parents=True)
    (root / "databases/notes.csv").write_text(bf.HEADER + "\n", encoding="utf-8")
    (root / "dev_tables.json").write_text("[]", encoding="utf-8")
    with pytest.raises(EvidenceError) as caught:
        BirdImporter().read(bf.source_input(root))
    assert (caught.value.code, caught.value.path) == ("E504", "imports/bird")
    assert "holds no BIRD files" in caught.value.message
