"""One reader per format, one rule and one wording for both of its callers (issue 32):
Vanna and BIRD files with the same damage give the same coded error at the same place,
and a stray quote inside an unquoted CSV cell is a literal character for both."""

from __future__ import annotations

import json
from pathlib import Path

import bird_fixture as bf
import pytest

from evidence_tool.errors import EvidenceError
from evidence_tool.importers.base import ImportInput, ImportResult, SourceFile
from evidence_tool.importers.bird import BirdImporter
from evidence_tool.importers.spans import MAX_ITEM
from evidence_tool.importers.vanna import VannaImporter

PETS = "clinic/database_description/pets.csv"
V_HEADER = "id,question,content,training_data_type\n"
V_ROW = {
    "id": "r-doc",
    "question": None,
    "content": "A rule.",
    "training_data_type": "documentation",
}
Q = bf.QUESTIONS[0]


def _vanna(tmp_path: Path, name: str, data: bytes) -> ImportResult:
    path = tmp_path / name
    path.write_bytes(data)
    files = (SourceFile(name, path, len(data)),)
    return VannaImporter().read(ImportInput(files, {}, "en", 1 << 30, root="imports/vanna"))


def _bird(tmp_path: Path, rel: str, data: bytes) -> ImportResult:
    root = bf.write(tmp_path / "bird")
    (root / rel).write_bytes(data)
    return BirdImporter().read(bf.source_input(root))


def _pets(*rows: str) -> bytes:
    return ("\n".join([bf.HEADER, *rows]) + "\n").encode("utf-8")


def _array(*items: str) -> bytes:
    return ("[\n" + ",\n".join(items) + "\n]\n").encode("utf-8")


def test_a_stray_quote_in_an_unquoted_cell_is_literal_for_vanna(tmp_path: Path) -> None:
    data = (V_HEADER + 'h-doc,,Heights like 5\'10" are in feet,documentation\n'
            'n-doc,,Next row,documentation\n').encode()  # fmt: skip
    result = _vanna(tmp_path, "t.csv", data)
    rules = {u.unit.id: u for u in result.units}
    assert sorted(rules) == ["evidence:vanna:h-doc", "evidence:vanna:n-doc"]
    (span,) = rules["evidence:vanna:h-doc"].spans
    assert span.text == "h-doc,,Heights like 5'10\" are in feet,documentation"
    assert data[span.start : span.end].decode() == span.text and span.start == len(V_HEADER)


def test_a_stray_quote_in_an_unquoted_cell_is_literal_for_bird(tmp_path: Path) -> None:
    data = _pets("pet_id,,id,integer,", "height,,height as 5'10\",text,", "breed,,breed,text,")
    result = _bird(tmp_path, PETS, data)
    ids = {u.unit.id: u for u in result.units}
    height = ids["evidence:bird:clinic.pets.height"]
    assert "height as 5'10\"" in height.unit.payload.definition  # type: ignore[attr-defined]
    assert "evidence:bird:clinic.pets.breed" in ids  # the next line is its own row
    assert height.spans[0].text == "height,,height as 5'10\",text,"


# (name, Vanna file and bytes, BIRD file and bytes, line both name, words both say)
DAMAGE: list[tuple[str, tuple[str, bytes], tuple[str, bytes], int, str]] = [
    (
        "unclosed quote",
        ("t.csv", (V_HEADER + 'a-doc,,ok,documentation\nb-doc,,"open\nstill\n').encode()),
        (PETS, _pets("pet_id,,id,integer,", 'species,,"open', "still,,x,text,")),
        3,
        "a quoted cell is not closed before the end of the file",
    ),
    (
        "text after the array",
        ("t.json", _array(json.dumps(V_ROW)) + b"\n\nextra"),
        ("dev.json", _array(json.dumps(Q)) + b"\n\nextra"),
        6,
        "invalid JSON: text after the closing ']'",
    ),
    (
        "an item that is not an object",
        ("t.json", _array(json.dumps(V_ROW), '"row"')),
        ("dev.json", _array(json.dumps(Q), '"row"')),
        3,
        "an item of the array is not a JSON object",
    ),
    (
        "an oversize item",
        ("t.json", _array(json.dumps(V_ROW), json.dumps({**V_ROW, "content": "x" * MAX_ITEM}))),
        ("dev.json", _array(json.dumps(Q), json.dumps({**Q, "evidence": "x" * MAX_ITEM}))),
        3,
        f"an item of the array is larger than {MAX_ITEM} bytes",
    ),
    (
        "Windows-1252 bytes",
        ("t.csv", V_HEADER.encode() + b"a-doc,,caf\xe9 rule,documentation\n"),
        (PETS, _pets("pet_id,,id,integer,").replace(b"id,integer", b"caf\xe9,integer")),
        2,
        "not UTF-8 text (byte 0xe9); save the file as UTF-8",
    ),
    (
        "a NUL byte",
        ("t.json", _array(json.dumps(V_ROW).replace("A rule", "A\x00rule"))),
        ("dev.json", _array(json.dumps(Q).replace('", "', '\x00", "', 1))),
        2,
        "a NUL byte",
    ),
    (
        "an unclosed array",
        ("t.json", _array(json.dumps(V_ROW)).removesuffix(b"]\n")),
        ("dev.json", _array(json.dumps(Q)).removesuffix(b"]\n")),
        3,
        "invalid JSON: expected ',' or ']'",
    ),
]


@pytest.mark.parametrize("case", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_the_same_damage_is_the_same_coded_error_for_vanna_and_bird(
    tmp_path: Path, case: tuple[str, tuple[str, bytes], tuple[str, bytes], int, str]
) -> None:
    _, (v_name, v_data), (b_rel, b_data), line, words = case
    with pytest.raises(EvidenceError) as vanna:
        _vanna(tmp_path, v_name, v_data)
    with pytest.raises(EvidenceError) as bird:
        _bird(tmp_path, b_rel, b_data)
    for err, path in (
        (vanna.value, f"imports/vanna/{v_name}"),
        (bird.value, f"imports/bird/{b_rel}"),
    ):
        assert (err.code, err.path, err.line) == ("E504", path, line), err.message
        assert err.message.startswith(f"{path}:{line}: {words}"), err.message


def test_every_damage_case_ran() -> None:
    assert len(DAMAGE) == 7


def test_a_bom_is_read_past_by_both(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    vanna = _vanna(tmp_path, "t.json", bom + _array(json.dumps(V_ROW)))
    (span,) = vanna.units[0].spans
    assert span.start == len(bom) + 2 and span.text == json.dumps(V_ROW)
    bird = _bird(tmp_path, "dev.json", bom + _array(json.dumps(Q)))
    assert any(u.spans[0].text == json.dumps(Q) for u in bird.units)
    assert (
        len(_vanna(tmp_path, "t.csv", bom + (V_HEADER + "a-doc,,r,documentation\n").encode()).units)
        == 1
    )
