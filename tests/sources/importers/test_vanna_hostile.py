"""Hostile and malformed Vanna exports: each a coded error naming file and line, never a
traceback, nothing recorded; and a large export that stays inside the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import tht
from import_helpers import add, comparison, error_of, refresh_one, sid_of, write
from source_helpers import tree_state

HEADER = ",id,question,content,training_data_type\n"
ROW = '{"id":"r1-doc","question":null,"content":"A rule.","training_data_type":"documentation"}'

# name -> (file name, bytes, expected code, expected line)
CASES: dict[str, tuple[str, bytes, str, int | None]] = {
    "not-json": ("t.json", b"id,question\nnot json at all\n", "E504", 1),
    "columns-orient": (
        "t.json",
        b'{"id":{"0":"a-sql"},"question":{"0":"Q?"},"content":{"0":"SELECT 1"}}',
        "E504",
        1,
    ),
    "truncated": ("t.json", ("[\n" + ROW + ",\n" + ROW[:30]).encode(), "E504", 3),
    "row-not-object": ("t.json", ("[\n" + ROW + ",\n  42\n]").encode(), "E504", 3),
    "row-without-type": ("t.json", b'[\n\n{"id": "x", "content": "c"}]', "E504", 3),
    "trailing-text": ("t.json", ("[" + ROW + "]\n]").encode(), "E504", 2),  # the text's line
    "deeply-nested": ("t.json", b"[" + b"[" * 100_000 + b"]" * 100_000 + b"]", "E504", 1),
    "binary-json": ("t.json", b"[\n" + b"\x89PNG\r\n\x1a\n\x00\x00" + b"]", "E504", 2),
    "binary-csv": (
        "t.csv",
        (HEADER + '0,a-doc,,"ok",documentation\n').encode() + b"1,\xff\xfe\x00,,x,sql\n",
        "E504",
        3,
    ),
    "wrong-columns": ("t.csv", b"question,sql\nQ?,SELECT 1\n", "E504", 1),
    "ragged-row": ("t.csv", (HEADER + "0,a-sql,Q?,SELECT 1\n").encode(), "E504", 2),
    "unclosed-quote": (
        "t.csv",
        (HEADER + '0,a-doc,,"fine",documentation\n1,b-sql,Q?,"SELECT 1\nFROM t\n').encode(),
        "E504",
        3,
    ),
    "empty-csv": ("t.csv", b"", "E504", None),
    "empty-id": ("t.jsonl", (ROW + '\n{"id":"","training_data_type":"sql"}\n').encode(), "E504", 2),
    "unclosed-string": ("t.json", ("[\n" + ROW + ',\n{"id": "x\n]').encode(), "E504", 3),
    "missing-value": ("t.json", ("[" + ROW + ",\n\n,\n" + ROW + "]").encode(), "E504", 3),
    "stray-brace": ("t.json", ("[" + ROW + "}\n]").encode(), "E504", 1),
    "jsonl-broken-line": ("t.jsonl", (ROW + "\n" + ROW + "\n{oops\n").encode(), "E504", 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_attack_malformed_vanna_export_is_a_coded_error(workspace: Path, name: str) -> None:
    file_name, data, code, line = CASES[name]
    write(workspace, f"imports/bad/{file_name}", data)
    assert add(workspace, "vanna", "imports/bad").exit_code == 0
    before = tree_state(workspace)
    failed = refresh_one(workspace, "vanna", "imports/bad")
    assert failed.exit_code == 5, failed.stdout + failed.stderr
    error = error_of(failed)
    assert error["code"] == code
    assert error["path"] == f"imports/bad/{file_name}"
    assert error["line"] == line
    where = f"imports/bad/{file_name}:{line}" if line else f"imports/bad/{file_name}"
    assert error["message"].startswith(where), error["message"]
    assert "Traceback" not in failed.stdout + failed.stderr
    assert tree_state(workspace) == before  # nothing recorded, not even an acquisition


def test_every_malformed_case_ran() -> None:
    assert len(CASES) == 18


def test_ten_thousand_rows_import_within_bounds(workspace: Path) -> None:
    rows = [
        {
            "id": f"{n:05d}-sql" if n % 3 else f"{n:05d}-ddl",
            "question": f"How many stays had code {n}?",
            "content": f"SELECT count(*) FROM clinical.stays WHERE code = {n}",
            "training_data_type": "sql" if n % 3 else "ddl",
        }
        for n in range(10_000)
    ]
    write(workspace, "imports/big/training.json", json.dumps(rows))
    assert add(workspace, "vanna", "imports/big").exit_code == 0
    done = refresh_one(workspace, "vanna", "imports/big")
    assert done.exit_code == 0, done.stdout[-2000:]
    comp = comparison(workspace, "vanna", "imports/big")
    assert len(comp["proposed"]) == 6_666 and comp["skipped"] == {"ddl": 3_334}
    assert comp["review_items"] == []


def test_a_folder_of_more_than_ten_thousand_files_is_e503(workspace: Path) -> None:
    folder = workspace / "imports/many"
    for n in range(10_001):
        write(workspace, f"imports/many/part-{n // 1000}/{n}.csv", b"")
    assert sum(1 for _ in folder.rglob("*.csv")) == 10_001
    assert add(workspace, "vanna", "imports/many").exit_code == 5  # add walks it too
    (workspace / "workspace.yaml").write_text(
        (workspace / "workspace.yaml")
        .read_text()
        .replace(
            "descriptor_version: 1\n  sources: []",
            "descriptor_version: 2\n  sources:\n  - {kind: import, format: vanna, path: imports/many}",
        )
    )
    failed = tht(workspace, "refresh", "--source-id", sid_of("vanna", "imports/many"))
    error = error_of(failed)
    assert error["code"] == "E503" and "more than 10000 files" in error["message"]


def test_oversized_or_titleless_rows_are_review_items_on_their_own_ids(workspace: Path) -> None:
    rows = [
        {
            "id": "huge-doc",
            "question": None,
            "content": "word " * 60_000,
            "training_data_type": "documentation",
        },
        {
            "id": "hashes-doc",
            "question": None,
            "content": "##\n\nThe rule itself.",
            "training_data_type": "documentation",
        },
    ]
    write(workspace, "imports/odd.json", json.dumps(rows))
    assert add(workspace, "vanna", "imports/odd.json").exit_code == 0
    assert refresh_one(workspace, "vanna", "imports/odd.json").exit_code == 0
    comp = comparison(workspace, "vanna", "imports/odd.json")
    items = [(i["code"], i["unit_id"]) for i in comp["review_items"]]
    assert items == [("invalid-unit", "evidence:vanna:huge-doc")]
    assert "E109" in comp["review_items"][0]["message"]
    titled = next(p for p in comp["proposed"] if p["id"] == "evidence:vanna:hashes-doc")
    assert "\n# The rule itself.\n" in titled["markdown"]
