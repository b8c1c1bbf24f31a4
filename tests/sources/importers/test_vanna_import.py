"""The Vanna format end to end: sources add -> refresh -> comparison -> replace -> search.

The exports are written here in the shapes pandas gives ``vn.get_training_data()``:
``to_json(orient="records")`` (slashes escaped, one line), ``to_json(lines=True)`` and
``to_csv()`` with its unnamed index column, multi-line quoted SQL and CRLF line ends.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runner import invoke, registry, tht
from import_helpers import (
    add,
    comparison,
    import_and_replace,
    record_of,
    refresh_one,
    replace,
    search_ids,
    sid_of,
    write,
)

SQL_A = "SELECT ward_code, count(*) AS stays\nFROM clinical.admissions\nGROUP BY ward_code"
ROWS = [
    {
        "id": "0c3a9e52-71f4-4c55-9d7e-1f0b3a6d2e11-sql",
        "question": "Quanti ricoveri per reparto nell'anno?",
        "content": SQL_A,
        "training_data_type": "sql",
    },
    {
        "id": "a5d1c6f0-2b8e-4e0a-8c44-6f3f2f9b7a20-doc",
        "question": None,
        "content": "Il reparto di dimissione è quello che chiude il ricovero, non quello "
        "di ammissione. Use clinical/admissions.discharge_ward.",
        "training_data_type": "documentation",
    },
    {
        "id": "c9e4-ddl",
        "question": None,
        "content": "CREATE TABLE clinical.admissions (admission_id int)",
        "training_data_type": "ddl",
    },
    {
        "id": "d0f1-ddl",
        "question": None,
        "content": "CREATE TABLE clinical.wards (ward_code text)",
        "training_data_type": "ddl",
    },
]
SQL_ID = "evidence:vanna:0c3a9e52-71f4-4c55-9d7e-1f0b3a6d2e11-sql"
DOC_ID = "evidence:vanna:a5d1c6f0-2b8e-4e0a-8c44-6f3f2f9b7a20-doc"


def records_json(rows: list[dict[str, object]]) -> str:
    """What ``df.to_json(orient="records")`` writes: compact, '/' escaped, no newline."""
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False).replace("/", "\\/")


CSV_EXPORT = (
    ",id,question,content,training_data_type,dataset\r\n"
    '0,f1-sql,Average stay in cardiology?,"SELECT avg(los_days)\r\n'
    "FROM clinical.admissions\r\n"
    "WHERE ward_code = 'CARD'\",sql,psd\r\n"
    '1,f2-doc,,"Length of stay counts nights, ""not"" days.",documentation,psd\r\n'
    "2,f3-ddl,,CREATE TABLE t (a int),ddl,psd\r\n"
)


def test_json_records_round_trip_to_search_and_unchanged_again(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    comp = import_and_replace(workspace, "vanna", "imports/vanna", "--language", "en")
    assert [p["id"] for p in comp["proposed"]] == [SQL_ID, DOC_ID]
    assert comp["skipped"] == {"ddl": 2}
    assert comp["not_imported"] == [] and comp["review_items"] == []
    # Each excerpt is the row's exact JSON bytes (non-ASCII and escaped slashes included).
    raw = (workspace / "imports/vanna/training.json").read_bytes()
    for p in comp["proposed"]:
        assert len(p["excerpts"]) == 1 and p["excerpts"][0].encode() in raw
    sql_unit = next(p for p in comp["proposed"] if p["id"] == SQL_ID)
    assert "## Question\n\nQuanti ricoveri per reparto nell'anno?" in sql_unit["markdown"]
    assert f"```sql\n{SQL_A}\n```" in sql_unit["markdown"]
    doc_unit = next(p for p in comp["proposed"] if p["id"] == DOC_ID)
    assert "clinical/admissions.discharge_ward" in doc_unit["markdown"]  # unescaped

    assert SQL_ID in search_ids(workspace, "ricoveri reparto")
    assert DOC_ID in search_ids(workspace, "dimissione chiude")
    shown = tht(workspace, "show", SQL_ID)
    assert shown.json["result"]["imported_from"] == ["imports/vanna/training.json:1-1"]
    assert tht(workspace, "verify").exit_code == 0

    again = refresh_one(workspace, "vanna", "imports/vanna")
    assert again.exit_code == 0
    assert [s["status"] for s in again.json["result"]["sources"]] == ["unchanged"]
    assert record_of(workspace, "vanna", "imports/vanna")["comparison"] is None


def test_csv_with_index_column_multiline_cells_and_crlf(workspace: Path) -> None:
    write(workspace, "imports/legacy/training.csv", CSV_EXPORT)
    comp = import_and_replace(workspace, "vanna", "imports/legacy/training.csv")
    assert [p["id"] for p in comp["proposed"]] == ["evidence:vanna:f1-sql", "evidence:vanna:f2-doc"]
    assert comp["skipped"] == {"ddl": 1}
    # The extra column is named once, with where it is, never dropped silently.
    assert comp["not_imported"] == [
        {
            "element": "column dataset of imports/legacy/training.csv",
            "what": "its values",
            "at": "imports/legacy/training.csv:2-4",
        }
    ]
    first = comp["proposed"][0]
    # The span is the whole record, its three lines, without the final line end.
    assert first["excerpts"] == [
        '0,f1-sql,Average stay in cardiology?,"SELECT avg(los_days)\r\nFROM clinical.admissions'
        "\r\nWHERE ward_code = 'CARD'\",sql,psd"
    ]
    assert "## Domanda\n\nAverage stay in cardiology?" in first["markdown"]  # workspace: it
    assert 'Length of stay counts nights, "not" days.' in comp["proposed"][1]["markdown"]
    shown = tht(workspace, "show", "evidence:vanna:f1-sql").json["result"]
    assert shown["imported_from"] == ["imports/legacy/training.csv:2-4"]
    listed = tht(workspace, "sources", "show", sid_of("vanna", "imports/legacy/training.csv"))
    assert listed.exit_code == 0
    assert "evidence:vanna:f2-doc" in search_ids(workspace, "nights")


def test_sources_show_lists_not_imported_and_skipped(workspace: Path) -> None:
    write(workspace, "imports/v/training.csv", CSV_EXPORT)
    assert add(workspace, "vanna", "imports/v").exit_code == 0
    assert refresh_one(workspace, "vanna", "imports/v").exit_code == 0
    short = sid_of("vanna", "imports/v")[:12]
    shown = tht(workspace, "sources", "show", short)
    assert shown.json["result"]["comparison"]["skipped"] == {"ddl": 1}
    assert len(shown.json["result"]["comparison"]["not_imported"]) == 1
    plain = invoke(
        ["workspace", "evidence", "sources", "show", short, "--workspace-root", str(workspace)]
    )
    assert plain.exit_code == 0
    assert "  skipped  1 ddl\n" in plain.stdout
    assert (
        "  not imported its values of column dataset of imports/v/training.csv "
        "(imports/v/training.csv:2-4)\n" in plain.stdout
    )


def test_json_lines_export(workspace: Path) -> None:
    lines = "\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n"
    write(workspace, "imports/jl/training.jsonl", lines)
    comp = import_and_replace(workspace, "vanna", "imports/jl")
    assert [p["id"] for p in comp["proposed"]] == [SQL_ID, DOC_ID]
    assert comp["proposed"][1]["excerpts"] == [lines.split("\n")[1]]
    shown = tht(workspace, "show", DOC_ID).json["result"]
    assert shown["imported_from"] == ["imports/jl/training.jsonl:2-2"]


def test_changed_content_is_a_modified_proposal_with_the_same_id(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    import_and_replace(workspace, "vanna", "imports/vanna")
    assert len(list((workspace / "evidence/curated/example").glob("vanna-*.md"))) == 1
    changed = [dict(r) for r in ROWS]
    changed[0]["content"] = SQL_A.replace("count(*)", "count(DISTINCT admission_id)")
    write(workspace, "imports/vanna/training.json", records_json(changed))
    again = refresh_one(workspace, "vanna", "imports/vanna")
    assert again.json["result"]["sources"][0]["status"] == "compared"
    comp = comparison(workspace, "vanna", "imports/vanna")
    assert [p["id"] for p in comp["proposed"]] == [SQL_ID, DOC_ID]
    assert comp["retire"] == [] and comp["review_items"] == []
    assert {c["id"] for c in comp["current"]} == {SQL_ID, DOC_ID}
    changed_unit = next(p for p in comp["proposed"] if p["id"] == SQL_ID)
    current = next(c for c in comp["current"] if c["id"] == SQL_ID)
    assert changed_unit["path"] == current["path"]  # replaced in place, not a new file
    assert changed_unit["content_hash"] != current["content_hash"]
    assert replace(workspace, "vanna", "imports/vanna").exit_code == 0
    text = (workspace / changed_unit["path"]).read_text()
    assert "count(DISTINCT admission_id)" in text


def test_a_deleted_unit_stays_suppressed_on_reimport(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    comp = import_and_replace(workspace, "vanna", "imports/vanna")
    doc_path = next(p["path"] for p in comp["proposed"] if p["id"] == DOC_ID)
    (workspace / doc_path).unlink()
    assert tht(workspace, "consolidate").exit_code == 0
    # The export changes (another row edited), so the source is compared again.
    changed = [dict(r) for r in ROWS]
    changed[0]["question"] = "Quanti ricoveri per reparto nel 2025?"
    write(workspace, "imports/vanna/training.json", records_json(changed))
    assert refresh_one(workspace, "vanna", "imports/vanna").exit_code == 0
    comp = comparison(workspace, "vanna", "imports/vanna")
    assert [p["id"] for p in comp["proposed"]] == [SQL_ID]
    assert comp["dropped"] == [{"id": DOC_ID, "reason": "reserved by a deletion record"}]
    assert replace(workspace, "vanna", "imports/vanna").exit_code == 0
    assert not (workspace / doc_path).exists()


def test_duplicate_vanna_ids_are_a_review_item_and_block_replace(workspace: Path) -> None:
    rows = [ROWS[0], {**ROWS[0], "question": "Ricoveri per reparto?"}]
    write(workspace, "imports/dup.json", records_json(rows))
    assert add(workspace, "vanna", "imports/dup.json").exit_code == 0
    assert refresh_one(workspace, "vanna", "imports/dup.json").exit_code == 0
    comp = comparison(workspace, "vanna", "imports/dup.json")
    assert [i["code"] for i in comp["review_items"]] == ["duplicate-id"]
    refused = replace(workspace, "vanna", "imports/dup.json")
    assert refused.exit_code == 1 and refused.json["errors"][0]["code"] == "E140"
    assert f"--exclude {SQL_ID}" in refused.json["errors"][0]["message"]
    # Issue 28: the operator may leave the unit with the item out, and adopt the rest.
    done = replace(workspace, "vanna", "imports/dup.json", "--exclude", SQL_ID)
    assert done.exit_code == 0, done.stdout
    assert done.json["result"]["excluded"] == [SQL_ID]
    assert not [p for p in done.json["result"]["written"] if "curated" in p]


def test_rows_without_question_or_content_are_review_items(workspace: Path) -> None:
    rows = [
        {"id": "q1-sql", "question": "", "content": "SELECT 1", "training_data_type": "sql"},
        {"id": "q2-doc", "question": None, "content": " ", "training_data_type": "documentation"},
        {"id": "q3-x", "question": None, "content": "x", "training_data_type": "question_sql"},
    ]
    write(workspace, "imports/odd.json", records_json(rows))
    assert add(workspace, "vanna", "imports/odd.json").exit_code == 0
    assert refresh_one(workspace, "vanna", "imports/odd.json").exit_code == 0
    comp = comparison(workspace, "vanna", "imports/odd.json")
    assert comp["proposed"] == []
    assert [(i["code"], i["unit_id"]) for i in comp["review_items"]] == [
        ("invalid-element", "evidence:vanna:q1-sql"),
        ("invalid-element", "evidence:vanna:q2-doc"),
    ]
    assert [n["what"] for n in comp["not_imported"]] == ["training_data_type 'question_sql'"]


def test_options_and_language_change_the_content_hash(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    import_and_replace(workspace, "vanna", "imports/vanna", "--language", "en")
    desc = (workspace / "workspace.yaml").read_text()
    (workspace / "workspace.yaml").write_text(desc.replace("language: en", "language: it"))
    again = refresh_one(workspace, "vanna", "imports/vanna")
    assert again.json["result"]["sources"][0]["status"] == "compared"
    comp = comparison(workspace, "vanna", "imports/vanna")
    assert "## Domanda" in comp["proposed"][0]["markdown"]


def test_the_record_keeps_only_cited_rows(workspace: Path) -> None:
    filler = [
        {
            "id": f"ddl-{n}",
            "question": None,
            "content": "CREATE TABLE x (a int)" * 40,
            "training_data_type": "ddl",
        }
        for n in range(200)
    ]
    write(workspace, "imports/big.json", records_json([ROWS[0], *filler]))
    comp = import_and_replace(workspace, "vanna", "imports/big.json")
    assert comp["skipped"] == {"ddl": 200}
    rec = registry(workspace)["sources"][sid_of("vanna", "imports/big.json")]
    sid = rec["source_id"]
    kept = list((workspace / "evidence/source/acquired" / sid).glob("*.md"))
    assert len(kept) == 1
    record = kept[0].read_text()
    assert comp["proposed"][0]["excerpts"][0] in record
    assert "CREATE TABLE" not in record
    assert kept[0].stat().st_size < (workspace / "imports/big.json").stat().st_size / 20
    shutil.rmtree(workspace / "imports")  # the input may go: the record is what derives
    assert tht(workspace, "verify").exit_code == 0


def test_review_page_lists_not_imported_and_skipped(workspace: Path) -> None:
    write(workspace, "imports/v/training.csv", CSV_EXPORT)
    assert add(workspace, "vanna", "imports/v").exit_code == 0
    assert refresh_one(workspace, "vanna", "imports/v").exit_code == 0
    written = tht(workspace, "report")
    assert written.exit_code == 0, written.stdout
    page = Path(written.json["result"]["path"]).read_text()
    article = page[page.index('id="comparison-' + sid_of("vanna", "imports/v")) :]
    article = article[: article.index("</article>")]
    assert "<dt>not imported</dt>" in article
    assert "column dataset of imports/v/training.csv" in article
    assert "imports/v/training.csv:2-4" in article
    assert "<dt>skipped</dt><dd>1 ddl</dd>" in article
    assert "0,f1-sql,Average stay in cardiology?" in article  # the import record as source


def test_refresh_says_what_was_skipped_and_not_imported(workspace: Path) -> None:
    write(workspace, "imports/v/training.csv", CSV_EXPORT)
    assert add(workspace, "vanna", "imports/v").exit_code == 0
    args = ["workspace", "evidence", "refresh", "--workspace-root", str(workspace)]
    plain = invoke([*args, "--source-id", sid_of("vanna", "imports/v")])
    assert plain.exit_code == 0, plain.stdout
    assert (
        "2 proposed, retire none, 0 review item(s), 1 not imported, skipped 1 ddl" in plain.stdout
    )
    as_json = invoke([*args, "--source-id", sid_of("vanna", "imports/v"), "--json"])
    line = as_json.json["result"]["sources"][0]
    assert line["not_imported"] == 1 and line["skipped"] == {"ddl": 1}


def test_a_removed_entry_makes_the_source_missing_with_w151(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    import_and_replace(workspace, "vanna", "imports/vanna")
    gone = refresh_one(workspace, "vanna", "imports/vanna")
    assert gone.json["result"]["sources"][0]["status"] == "unchanged"
    desc = workspace / "workspace.yaml"
    text = desc.read_text()
    desc.write_text(text[: text.index("evidence:")] + "evidence:\n  descriptor_version: 1\n")
    # The path itself stays: only the entry is gone, so nothing names it any more.
    after = tht(workspace, "refresh")
    assert after.exit_code == 0, after.stdout
    line = next(s for s in after.json["result"]["sources"] if s["kind"] == "import")
    assert line["status"] == "missing"
    status = tht(workspace, "consolidate")
    codes = [w["code"] for w in status.json["warnings"]]
    assert codes.count("W151") == 2  # the two units it gave, nothing retired
    assert len(list((workspace / "evidence/curated/example").glob("vanna-*.md"))) == 1


def test_bom_and_a_resaved_index_column_and_non_ascii_offsets(workspace: Path) -> None:
    """Excel-style re-save: a BOM, pandas' 'Unnamed: 0' column, accented text before the
    cited rows (byte offsets differ from character offsets)."""
    text = (
        "Unnamed: 0,id,question,content,training_data_type\n"
        "0,è1-doc,,Già dimesso: il paziente è uscito dal reparto.,documentation\n"
        "1,è2-sql,Quanti pazienti già dimessi?,SELECT count(*) FROM dimissioni,sql\n"
    )
    write(workspace, "imports/bom/training.csv", b"\xef\xbb\xbf" + text.encode())
    comp = import_and_replace(workspace, "vanna", "imports/bom")
    assert [p["id"] for p in comp["proposed"]] == ["evidence:vanna:1-doc", "evidence:vanna:2-sql"]
    assert comp["not_imported"] == [] and comp["review_items"] == []
    assert comp["proposed"][1]["excerpts"] == [text.split("\n")[2]]
    shown = tht(workspace, "show", "evidence:vanna:2-sql").json["result"]
    assert shown["imported_from"] == ["imports/bom/training.csv:3-3"]


def test_an_edited_imported_unit_still_says_where_it_came_from(workspace: Path) -> None:
    write(workspace, "imports/vanna/training.json", records_json(ROWS))
    comp = import_and_replace(workspace, "vanna", "imports/vanna")
    path = workspace / next(p["path"] for p in comp["proposed"] if p["id"] == DOC_ID)
    path.write_text(path.read_text().replace("non quello", "mai quello"))
    assert tht(workspace, "consolidate").exit_code == 0
    shown = tht(workspace, "show", DOC_ID).json["result"]
    assert shown["provenance"]["kind"] == "manual"  # edited: manual, lineage kept
    assert shown["imported_from"] == ["imports/vanna/training.json:1-1"]
