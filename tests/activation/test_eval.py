"""``tht workspace evidence eval`` and the stemmed lexical index (issue 19, parts 2-3).

The question set is the shipped one (fixtures/eval/questions.yaml) or one written
here; figures are computed, never hard-coded.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from activation_helpers import Tht, unit_text, write_unit

from evidence_tool.activation.evaluation import ModeFigures, Question, _run_mode, load_questions
from evidence_tool.activation.sqlite_index import build_index
from evidence_tool.activation.sqlite_search import Filters, search_path
from evidence_tool.archive.local import LocalEvidenceArchive

QUESTIONS = Path(__file__).parents[2] / "fixtures" / "eval" / "questions.yaml"


def _eval(tht: Tht, questions: Path, *args: str) -> Any:
    result = tht("eval", str(questions), *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json["result"]


def _bm25(result: dict[str, Any], label: str = "active") -> dict[str, Any]:
    run = next(r for r in result["runs"] if r["label"] == label)
    return next(m for m in run["modes"] if m["mode"] == "bm25")  # type: ignore[no-any-return]


def _write(path: Path, questions: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"questions": questions}, indent=1), encoding="utf-8")
    return path


# -- the shipped question set --------------------------------------------------------


def _bm25_figures(path: Path, questions: list[Question]) -> ModeFigures:
    """The bm25 figures of the index file at ``path`` (to compare analyzers)."""

    def one(q: str, f: Filters, n: int, mode: str) -> list[str]:
        return search_path(path, q, f, n, mode).ids()

    return ModeFigures(mode="bm25", questions=_run_mode(one, "bm25", questions, {}, 5))


def test_stemming_bm25_is_not_worse_than_exact_tokens_on_the_question_set(
    indexed: Path, tmp_path: Path
) -> None:
    questions = load_questions(str(QUESTIONS))
    assert len(questions) >= 60
    snap = LocalEvidenceArchive(indexed).active_snapshot()
    assert snap is not None
    figures = {}
    for analyzer in ("exact", "stem"):
        path = tmp_path / f"{analyzer}.sqlite"
        build_index(path, snap.revision, snap.records(), analyzer)
        figures[analyzer] = _bm25_figures(path, questions).to_json()
        assert figures[analyzer]["evaluated"] == len(questions)
    for metric in ("recall", "mrr", "ndcg"):
        assert figures["stem"][metric] >= figures["exact"][metric], metric
    # Both languages are asked: a line per question says which units answer it.
    langs = {r["language"] for r in snap.records() if any(r["id"] in q.expected for q in questions)}
    assert {"en", "it"} <= langs


def test_every_expected_id_of_the_shipped_set_is_a_live_unit(indexed: Path, tht: Tht) -> None:
    result = _eval(tht, QUESTIONS, "--mode", "bm25")
    bm25 = _bm25(result)
    assert bm25["evaluated"] == result["questions"] >= 60 and bm25["retired_only"] == 0
    assert 0 < bm25["recall"] <= 1 and 0 < bm25["mrr"] <= 1 and 0 < bm25["ndcg"] <= 1


def test_an_unavailable_mode_is_said_never_silently_dropped(indexed: Path, tht: Tht) -> None:
    # No embedding section (kind none): dense and hybrid are listed, with the reason.
    result = _eval(tht, QUESTIONS)
    modes = {m["mode"]: m for m in result["runs"][0]["modes"]}
    assert set(modes) == {"bm25", "dense", "hybrid"}
    assert modes["bm25"]["available"] and modes["bm25"]["evaluated"] == result["questions"]
    for name in ("dense", "hybrid"):
        assert not modes[name]["available"]
        assert "evidence.embedding is kind none" in modes[name]["reason"]
    text = tht("eval", str(QUESTIONS), as_json=False).stdout
    assert "sqlite/bm25: recall@5" in text
    (why,) = [line for line in text.splitlines() if "unavailable" in line]
    assert "sqlite/dense, hybrid: unavailable (evidence.embedding is kind none" in why


def test_a_backend_without_a_searchable_index_is_a_usage_error(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    inst = tmp_path / "none.yaml"
    inst.write_text(
        json.dumps({"installation_version": 1, "evidence": {"activation": {"kind": "none"}}})
    )
    result = tht("eval", str(QUESTIONS), installation=inst)
    assert result.exit_code == 2, result.stdout
    assert "sqlite (default) and qdrant" in result.json["errors"][0]["message"]


# -- Italian and English stemming ------------------------------------------------------


def test_italian_stemming_matches_inflections(indexed: Path, tht: Tht) -> None:
    write_unit(
        indexed,
        "domain",
        "trasfusioni",
        unit_text(
            "evidence:test:trasfusioni",
            "domain",
            "it",
            ["disambiguation"],
            "Trasfusioni notturne",
            "Le trasfusioni eseguite di notte sono registrate dal reparto ricevente.",
        ),
    )
    assert tht("consolidate").exit_code == 0

    def ids(query: str) -> set[str]:
        hits = tht("search", query, "--limit", "1000").json["result"]["hits"]
        return {h["id"] for h in hits}

    assert "evidence:test:trasfusioni" in ids("trasfusione")  # singular finds the plural
    assert "evidence:test:trasfusioni" in ids("registrata")
    # 'ricovero' finds a unit that only says 'ricoveri' (the Cardiologia example).
    assert "evidence:example:degenza-media-cardiologia" in ids("ricovero")
    # English: 'discharged' finds the units that say 'discharge' or 'discharges'.
    assert "evidence:clinical:discharge-letter-markdown" in ids("discharged")


# -- deletions -----------------------------------------------------------------------


def test_a_deleted_expected_id_is_retired_with_who_and_when_never_a_miss(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    questions = _write(
        tmp_path / "q.yaml",
        [
            {"question": "Diagnosis related group", "expected": ["evidence:clinical:drg"]},
            {
                "question": "Tax code of a patient",
                "expected": ["evidence:mapping:tax-code", "evidence:clinical:drg"],
            },
            {
                "question": "In-hospital mortality",
                "expected": ["evidence:clinical:tasso-mortalita"],
            },
        ],
    )
    before = _bm25(_eval(tht, questions))
    (indexed / "evidence/curated/glossary/drg.md").unlink()
    assert tht("consolidate").json["result"]["status"] == "activated"

    after = _bm25(_eval(tht, questions))
    first, second, third = after["questions"]
    for row in (first, second):
        (retired,) = row["retired"]
        assert retired["id"] == "evidence:clinical:drg"
        assert retired["actor"] == "alice" and retired["deleted_at"] and retired["reason"]
        assert "evidence:clinical:drg" not in row.get("misses", [])
    assert "recall" not in first and after["retired_only"] == 1 and after["evaluated"] == 2
    assert second["recall"] == 1.0 and second["misses"] == []
    assert third["recall"] == before["questions"][2]["recall"]
    text = tht("eval", str(questions), "--mode", "bm25", as_json=False).stdout
    assert "retired evidence:clinical:drg (removed by alice at" in text


def test_an_id_the_archive_never_held_is_an_error_with_its_line(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "tax code", "expected": ["evidence:mapping:tax-code"]}\n'
        "\n"
        '{"question": "bed occupancy", "expected": ["evidence:admin:bed-occupancy-rat"]}\n',
        encoding="utf-8",
    )
    result = tht("eval", str(questions))
    assert result.exit_code == 2
    (error,) = result.json["errors"]
    assert error["code"] == "E911" and error["line"] == 3
    assert "evidence:admin:bed-occupancy-rat" in error["message"]


# -- --compare REV ---------------------------------------------------------------------


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.allow_system_temp
def test_compare_runs_the_questions_on_an_earlier_revision(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    first = LocalEvidenceArchive(indexed).state().active
    assert first is not None
    write_unit(
        indexed,
        "glossary",
        "zanzibar",
        unit_text(
            "evidence:test:zanzibar",
            "glossary",
            "en",
            ["disambiguation"],
            "Zanzibar protocol",
            "The zanzibar protocol governs night transfers.",
        ),
    )
    assert tht("consolidate").json["result"]["status"] == "activated"
    questions = _write(
        tmp_path / "q.yaml",
        [
            {"question": "zanzibar protocol", "expected": ["evidence:test:zanzibar"]},
            {"question": "tax code", "expected": ["evidence:mapping:tax-code"]},
        ],
    )
    tree = _tree(indexed)
    result = _eval(tht, questions, "--compare", first[:10], "--mode", "bm25")
    assert _tree(indexed) == tree  # nothing in the workspace touched
    now, then = _bm25(result, "active"), _bm25(result, "compare")
    assert [r["revision"] for r in result["runs"]] == [
        LocalEvidenceArchive(indexed).state().active,
        first,
    ]
    assert now["questions"][0]["recall"] == 1.0
    assert then["questions"][0]["recall"] == 0.0
    assert then["questions"][0]["misses"] == ["evidence:test:zanzibar"]
    assert now["questions"][1]["recall"] == then["questions"][1]["recall"] == 1.0


# -- hostile question sets -------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("notyaml.yaml", "questions: [\n  {question: x, expected: ['evidence:a'\n", 3),
        ("list.yaml", "- question: x\n  expected: ['evidence:a']\n", None),
        ("string.yaml", "questions:\n  - question: x\n    expected: evidence:a\n", 2),
        ("number.yaml", "questions:\n  - question: 12\n    expected: ['evidence:a']\n", 2),
        ("extra.yaml", "questions:\n  - question: x\n    expected: ['evidence:a']\n    k: 3\n", 2),
        (
            "badfilter.yaml",
            "questions:\n- question: x\n  expected: ['evidence:a']\n  filters: 3\n",
            2,
        ),
        ("empty.yaml", "questions: []\n", None),
        ("bad.jsonl", '{"question": "x", "expected": ["evidence:a"]}\n{nope\n', 2),
        ("binary.yaml", "\udcff\udcfe\x00garbage", None),
        # A key given twice: which expectation counts would be the loader's guess.
        (
            "twice.yaml",
            "questions:\n- question: where\n  expected: ['evidence:a']\n"
            "  expected: ['evidence:b']\n",
            4,
        ),
        ("twicetop.yaml", "questions: []\nquestions:\n- question: x\n", 2),
    ],
)
def test_a_hostile_question_set_is_a_coded_error(
    indexed: Path, tht: Tht, tmp_path: Path, name: str, content: str, line: int | None
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    result = tht("eval", str(path))
    assert result.exit_code == 2, result.stdout + result.stderr
    (error,) = result.json["errors"]
    assert error["code"] == "E910" and error["line"] == line and name in error["message"]


def test_a_hundred_thousand_questions_are_refused_bounded(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"question": "x", "expected": ["evidence:a"]}\n' * 100_000, "utf-8")
    many = tmp_path / "many.jsonl"
    many.write_text('{"question":"q","expected":["evidence:a"]}\n' * 6000, "utf-8")
    messages = []
    for path in (huge, many):
        result = tht("eval", str(path))
        assert result.exit_code == 2
        (error,) = result.json["errors"]
        assert error["code"] == "E910"
        messages.append(error["message"])
    assert "MiB" in messages[0] and "more than 5000 questions" in messages[1]
    assert os.path.getsize(huge) > 4 * 1024 * 1024 > os.path.getsize(many)


def test_a_missing_question_file_is_e910_naming_it(indexed: Path, tht: Tht, tmp_path: Path) -> None:
    # The file is read by the library after the workspace is found: outside a workspace the
    # answer is E603, inside it a coded E910, never click's uncoded usage text.
    missing = tmp_path / "questions-of-last-year.yaml"
    result = tht("eval", str(missing))
    assert result.exit_code == 2, result.stdout + result.stderr
    (error,) = result.json["errors"]
    assert error["code"] == "E910" and "questions-of-last-year.yaml" in error["message"]


# -- filters before ranking ------------------------------------------------------------


def test_a_filter_keeps_units_ranked_below_the_limit(
    indexed: Path, tht: Tht, tmp_path: Path
) -> None:
    for n in range(7):  # seven English units rank first: the word is in their titles
        uid = f"evidence:test:wombat-{n}"
        title = f"Wombat wombat register {n}"
        text = unit_text(uid, "glossary", "en", ["disambiguation"], title, "Wombat wombat.")
        write_unit(indexed, "glossary", f"wombat-{n}", text)
    long_text = "Il registro del reparto elenca i letti. " * 30 + "Una voce dice wombat."
    italian = unit_text(
        "evidence:test:wombat-it", "domain", "it", ["disambiguation"], "Registro letti", long_text
    )
    write_unit(indexed, "domain", "wombat-it", italian)
    assert tht("consolidate").exit_code == 0
    unfiltered = [
        h["id"] for h in tht("search", "wombat", "--limit", "1000").json["result"]["hits"]
    ]
    assert len(unfiltered) == 8 and unfiltered[-1] == "evidence:test:wombat-it"
    hits = tht("search", "wombat", "--language", "it", "--limit", "2").json["result"]["hits"]
    assert [h["id"] for h in hits] == ["evidence:test:wombat-it"]
    questions = _write(
        tmp_path / "q.yaml",
        [
            {
                "question": "wombat",
                "expected": ["evidence:test:wombat-it"],
                "filters": {"language": "it"},
            }
        ],
    )
    row = _bm25(_eval(tht, questions, "--k", "1", "--mode", "bm25"))["questions"][0]
    assert row["recall"] == 1.0 and row["rr"] == 1.0


# -- an index of the former format -----------------------------------------------------


def test_attack_index_of_the_exact_token_format_is_rebuilt_never_misread(
    indexed: Path, tht: Tht
) -> None:
    import sqlite3

    path = indexed / ".evidence-cache" / "index.sqlite"
    snap = LocalEvidenceArchive(indexed).active_snapshot()
    assert snap is not None
    path.unlink()
    build_index(path, snap.revision, snap.records(), "exact")  # words, not stems
    with sqlite3.connect(path) as con:
        con.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    con.close()
    result = tht("search", "ricoveri")
    assert result.exit_code == 7 and result.json["errors"][0]["code"] == "E702"
    assert "consolidate" in result.json["errors"][0]["message"]
    assert tht("consolidate").json["result"]["status"] == "reindexed"
    hits = tht("search", "ricovero", "--limit", "1000").json["result"]["hits"]
    assert "evidence:example:degenza-media-cardiologia" in {h["id"] for h in hits}


def test_attack_format_2_index_with_a_valid_stamp_is_still_rebuilt(indexed: Path, tht: Tht) -> None:
    """perf's stamp vouches for an index file; one written before format 3 holds no
    format, and must not vouch for an index of words."""
    import sqlite3
    import time

    from evidence_tool import __version__
    from evidence_tool.activation.sqlite_schema import STAMP_NAME

    path = indexed / ".evidence-cache" / "index.sqlite"
    snap = LocalEvidenceArchive(indexed).active_snapshot()
    assert snap is not None
    path.unlink()
    build_index(path, snap.revision, snap.records(), "exact")
    with sqlite3.connect(path) as con:
        con.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
    con.close()
    st = os.stat(path)
    stamp = {
        "revision": snap.revision,
        "file": [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino],
        "taken_ns": time.time_ns() + 10**12,  # well after the file's change
        "tool": __version__,
    }
    (path.parent / STAMP_NAME).write_text(json.dumps(stamp), encoding="utf-8")
    assert tht("consolidate").json["result"]["status"] == "reindexed"
    assert tht("search", "ricovero").exit_code == 0


# -- which questions the dense ranking serves ------------------------------------------


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Quante giornate di degenza ha avuto il paziente?", "it"),
        ("What is the average length of stay per ward?", "en"),
        ("Tasso mortalità intraospedaliera", None),  # no function word: not told
        ("DRG 428 hba1c", None),
        ("a i in", None),  # stop words both languages share tell nothing
    ],
)
def test_a_question_language_is_told_by_its_own_function_words(
    question: str, language: str | None
) -> None:
    from evidence_tool.activation.analysis import query_language

    assert query_language(question) == language


def test_the_model_card_and_the_languages_key_say_what_a_model_serves(tmp_path: Path) -> None:
    from evidence_tool.embedding import serves
    from evidence_tool.embedding.http import HttpEmbedder
    from evidence_tool.embedding.local import card_languages

    cases = {
        "---\nlicense: mit\nlanguage: en\ntags:\n- x\n---\n# Model\n": frozenset({"en"}),
        "---\nlanguage:\n- it\n- en-GB\nlicense: mit\n---\n": frozenset({"it", "en"}),
        "---\nlanguage: [multilingual, de]\n---\n": None,
        "# a card with no front matter\nlanguage: en\n": None,
    }
    for n, (card, expected) in enumerate(cases.items()):
        folder = tmp_path / f"model-{n}"
        folder.mkdir()
        (folder / "README.md").write_text(card, encoding="utf-8")
        assert card_languages(folder) == expected, card
    assert card_languages(tmp_path / "missing") is None
    url = "http://127.0.0.1:9/v1/embeddings"
    english = HttpEmbedder(
        {
            "url": url,
            "model": "m",
            "dimensions": 8,
            "languages": ["EN"],
            "batch_size": 4,
            "timeout_s": 1,
            "retries": 0,
            "backoff_s": 0,
        }
    )
    assert serves(english, "en") and not serves(english, "it") and serves(english, None)
    anything = HttpEmbedder(
        {
            "url": url,
            "model": "m",
            "dimensions": 8,
            "batch_size": 4,
            "timeout_s": 1,
            "retries": 0,
            "backoff_s": 0,
        }
    )
    assert serves(anything, "it") and serves(anything, "en")
