"""The in-memory BM25 of postings.py ranks exactly as FTS5: the same hits, in the same
order, with the same scores (bit for bit), marks and matched fields, on corpora made to
break it: exact ties at the depth boundary, words in most rows (FTS5's IDF floor),
non-ASCII text (unicode61's folding), rows replaced in place (rowids with gaps), filters,
the name boost, and queries FTS5 must rank itself."""

from __future__ import annotations

import hashlib
import random
import sqlite3
import time
from pathlib import Path

import pytest
from helpers import loaded_postings

from evidence_tool.activation import sqlite_index, sqlite_search
from evidence_tool.activation._speed.postings import Postings, PostingsCache
from evidence_tool.activation.sqlite_hits import LexicalRow
from evidence_tool.activation.sqlite_index import Filters, search_path
from evidence_tool.jsonvalue import JsonObject

COMMON = ["admission", "ward", "stay", "patient"]  # in most rows: FTS5's IDF floor
WORDS = [
    "discharge", "episode", "diagnosis", "dose", "therapy", "nurse", "bed", "rate", "month",
    "ricovero", "reparto", "degenza", "giornate", "dimissione", "paziente", "codice",
    "ward_stays", "K12", "2024", "Rates", "stays",
]  # fmt: skip
VALUES = ["Alameda County", "Day Hospital", "K12 ward", "ricovero ordinario"]
ODD = ["città", "søknad", "Ærø", "naïve", "ΔT", "µg", "straße"]  # unicode61 folds these


def _record(n: int, rng: random.Random, *, odd: bool, twin: int | None = None) -> JsonObject:
    """Unit ``n``; a ``twin`` has the words of unit ``twin`` (same length: exact ties)."""
    seed = rng if twin is None else random.Random(twin)
    vocab = WORDS + (ODD if odd and n % 3 == 0 else [])
    words = [seed.choice(vocab) for _ in range(seed.randint(3, 30))]
    common = [w for w in COMMON if seed.random() < 0.7]
    title = " ".join([seed.choice(vocab), seed.choice(WORDS)])
    kind = ("glossary", "domain", "formula")[n % 3]
    language = ("en", "it", "IT-ch")[n % 3] if twin is None else "en"
    table = f"public.{seed.choice(['ward_stays', 'admissions', 'labs'])}"
    raw: JsonObject = {
        "id": f"evidence:test:u{n:04d}",
        "kind": kind,
        "language": language,
        "title": title,
        "path": f"evidence/curated/{kind}/u{n:04d}.md",
        "provenance_kind": "manual",
        "metadata": {
            "purposes": ["sql_generation"] if n % 2 else ["sql_generation", "qa"],
            "applies_to": {"tables": [table], "concepts": [seed.choice(WORDS)]},
        },
        "payload": {"definition": " ".join(words + common), "notes": seed.choice(WORDS)},
    }
    if n % 5 == 0:  # values a question may quote (names.py reads them)
        raw["payload"]["values"] = [{"value": seed.choice(VALUES)}]  # type: ignore[index]
    raw["content_hash"] = hashlib.sha256(repr(sorted(raw.items())).encode()).hexdigest()
    return raw


def _corpus(n: int, seed: int, *, odd: bool = False, twins: int = 0) -> list[JsonObject]:
    rng = random.Random(seed)
    out = [_record(k, rng, odd=odd) for k in range(n)]
    # Twins share one text and language: equal BM25, told apart only by rowid.
    # Their ids run against their rowids, so a tie broken by id would pick others.
    out += [_record(9999 - k, rng, odd=False, twin=7) for k in range(twins)]
    return out


QUERIES = [
    "admission",  # one common word: every score tiny, ties everywhere
    "ward stay patient admission",
    "discharge episode",
    "the rate of admissions per month",  # stop words; a word whose stems differ
    "rates Rates rate",  # the same stem in several groups: several phrases
    "ward_stays degenza",
    "giornate di degenza in reparto",
    "K12 2024 codice",
    "nurse bed therapy dose diagnosis",
    "stays",
    "patients of 'Alameda County' in \"Day Hospital\"",  # quoted values
    "ricovero ordinario per K12 ward",
    "units quoting 'K12 ward' or `Day Hospital`",  # quoted values the units hold
]
ODD_QUERIES = ["città søknad", "Ærø naïve patient", "µg dose"]
FILTERS = [
    Filters(),
    Filters(kind="glossary"),
    Filters(language="it"),
    Filters(purpose="qa"),
    Filters(table="public.ward_stays"),
    Filters(kind="domain", language="IT", table="ward_stays"),
]


def _build(tmp_path: Path, records: list[JsonObject], name: str = "index.sqlite") -> Path:
    path = tmp_path / name
    sqlite_index.build_index(path, "rev-1", records)
    return path


def _hits(path: Path, query: str, filters: Filters, limit: int, postings: Postings | None) -> list:
    found = search_path(path, query, filters, limit, "bm25", postings=postings)
    return [found.revision] + [
        (h.id, h.score, h.bm25, h.matched, h.record.to_json()) for h in found.hits
    ]


def _same_everywhere(path: Path, queries: list[str]) -> int:
    postings = Postings.load(path)
    assert postings is not None
    cases = 0
    for query in queries:
        for filters in FILTERS:
            for limit in (3, 100):
                want = _hits(path, query, filters, limit, None)
                assert _hits(path, query, filters, limit, postings) == want, (query, filters)
                cases += len(want) > 1
    return cases


def test_the_same_hits_as_fts5_on_generated_corpora(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evidence_tool.activation._speed import postings

    monkeypatch.setattr(postings, "_CHUNK", 97)  # the vocabulary read in many short parts
    cases = 0
    for seed, size in ((1, 60), (2, 260)):
        path = _build(tmp_path, _corpus(size, seed), f"index-{seed}.sqlite")
        cases += _same_everywhere(path, QUERIES)
    assert cases >= 150  # of 2 x 10 x 6 x 2 = 240 asked, most found something


def test_ties_at_the_depth_boundary_go_to_the_lower_rowid(tmp_path: Path) -> None:
    """150 identical units around a depth of 100: which tied rows make the cut."""
    path = _build(tmp_path, _corpus(40, 3, twins=150))
    con = sqlite3.connect(path)
    twin_words = con.execute("SELECT body FROM fts ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    con.close()
    queries = [" ".join(twin_words.split()[:3]), twin_words.split()[0], *QUERIES[:3]]
    assert _same_everywhere(path, queries) >= 30


def test_scores_are_fts5s_own_bit_for_bit(tmp_path: Path) -> None:
    """Every matching row's score, not only the best: the formula, not the order."""
    path = _build(tmp_path, _corpus(200, 4))
    postings = Postings.load(path)
    assert postings is not None
    compared = 0
    with sqlite3.connect(path) as con:
        for query in QUERIES:
            text = sqlite_search._stem_query(query)
            sql = (
                f"SELECT u.id, -bm25(fts, {sqlite_search._WEIGHTS}) FROM fts "
                "JOIN units u ON u.rowid = fts.rowid WHERE fts MATCH ?"
            )
            want = dict(con.execute(sql, [text]).fetchall())
            phrases = [t for group in _groups(query) for t in sorted(group)]
            got = dict(postings.top(phrases, None, len(postings.ids)) or [])
            assert got == want  # exact floats
            compared += len(want)
    assert compared > 1000


def _groups(query: str) -> list[set[str]]:
    from evidence_tool.activation.analysis import query_terms

    return query_terms(query)


def test_non_ascii_text_and_queries_fall_back_to_fts5(tmp_path: Path) -> None:
    """Rows whose text is not ASCII take FTS5's highlight(); a query word that is not one
    plain token is ranked by FTS5 altogether: the answers stay the same."""
    path = _build(tmp_path, _corpus(120, 5, odd=True))
    assert _same_everywhere(path, ODD_QUERIES + QUERIES[:4]) >= 50
    postings = Postings.load(path)
    assert postings is not None
    assert postings.top(["citta"], None, 10) is not None
    assert postings.top(["città"], None, 10) is None  # unicode61's folding: FTS5's to do


def test_rows_replaced_in_place_and_the_boost(tmp_path: Path) -> None:
    """An index updated in place (deleted rows, new rowids at the end): the rows are
    ``_bm25_rows``'s, all ``depth`` of them, ranked as ``_boosted`` ranks those (names,
    short definitions, quoted values: names.py's whole rule), each naming the fields
    ``_matched`` names from FTS5's marks."""
    from activation_helpers import said_literal

    from evidence_tool.activation.names import Namer
    from evidence_tool.activation.sqlite_hits import _boosted
    from evidence_tool.activation.sqlite_hits import _record as stored

    records = _corpus(150, 6)
    path = _build(tmp_path, records)
    rng = random.Random(9)
    changed = [_record(k, rng, odd=False) for k in range(0, 150, 7)]
    # Half of them deleted, half replaced (new rowids at the end).
    drop = {str(r["id"]) for r in changed}
    sqlite_index.update_in_place(path, "rev-2", drop, changed[1::2], lambda con: None)
    postings = Postings.load(path)
    assert postings is not None and postings.revision == "rev-2"
    assert max(postings.rowids) > len(postings.rowids)  # gaps: in place, not rebuilt
    cases = literal = matched = 0

    def seen(rows: dict[str, LexicalRow]) -> list[tuple[object, ...]]:
        return [
            (u, r.bm25, r.rank, r.record, r.marked, r.matched(stored(r.record, "r"), "stem"))
            for u, r in rows.items()
        ]

    with sqlite_index.open_readonly(path) as con:
        for query in QUERIES:
            text = sqlite_search._stem_query(query)
            for filters in FILTERS[:3]:
                where, args = sqlite_search._where(filters)
                plain = sqlite_search._bm25_rows(con, [text], where, args, 100)
                for boost in (0.0, 0.25, 1.0):
                    want = _boosted(plain, query, boost, "rev-2")
                    got = postings.lexical(con, query, filters, 100, boost)
                    assert got is not None and seen(got) == seen(want)
                    cases += len(want) > 0
                    matched += sum(
                        len(r.matched(stored(r.record, "r"), "stem")) > 1 for r in got.values()
                    )
                # The corpus exercises the boosts beyond names: values said or quoted.
                namer = Namer(query, 0.25)
                literal += sum(
                    said_literal(stored(r.record, "rev-2"), namer.said, namer.asked)
                    for r in plain.values()
                )
    assert cases >= 100 and matched >= 100
    assert literal >= 10
    assert _same_everywhere(path, QUERIES[:5]) >= 30


def test_postings_of_another_revision_or_file_are_not_used(tmp_path: Path) -> None:
    """Postings answer only for the file and revision they were loaded from."""
    path = _build(tmp_path, _corpus(50, 7))
    postings = Postings.load(path)
    assert postings is not None
    replacement = _build(tmp_path, _corpus(50, 7), "rebuilt.sqlite")
    replacement.replace(path)  # the same revision, another file (a rebuild)
    with sqlite_index.open_readonly(path) as con:
        assert postings.lexical(con, "ward stay", Filters(), 100, 0.25) is None
    assert _hits(path, "ward stay", Filters(), 10, postings) == _hits(
        path, "ward stay", Filters(), 10, None
    )


def test_the_cache_loads_in_the_background_and_follows_the_file(tmp_path: Path) -> None:
    path = _build(tmp_path, _corpus(80, 8))
    cache = PostingsCache(path)
    assert cache.get("rev-1") is None  # the first ask starts the load, FTS5 answers it
    loaded = loaded_postings(cache, "rev-1")
    assert loaded is not None and loaded.revision == "rev-1"
    assert cache.get("rev-1") is loaded and cache.loads == 1
    assert cache.get("rev-0") is None and loaded_postings(cache, "rev-0", 5) is None
    assert cache.loads == 1  # the same file: not read again for a revision it does not hold
    time.sleep(0.01)
    changed = [_record(k, random.Random(3), odd=False) for k in (1, 2)]
    drop = {str(r["id"]) for r in changed}
    sqlite_index.update_in_place(path, "rev-2", drop, changed, lambda con: None)
    again = loaded_postings(cache, "rev-2")
    assert again is not None and again.revision == "rev-2" and cache.loads == 2


@pytest.mark.parametrize("bad", ["", "a b", "ward-stay", "x\x00"])
def test_a_phrase_that_is_not_one_plain_token_is_fts5s(tmp_path: Path, bad: str) -> None:
    path = _build(tmp_path, _corpus(20, 9))
    postings = Postings.load(path)
    assert postings is not None
    assert postings.top([bad], None, 5) is None
    assert postings.top(["ward"], None, 5)


class _Toy:
    """A deterministic 8-dimensional 'model': few distinct vectors, so exact ties."""

    model_id = "test:toy:8"
    dim = 8

    def embed(self, texts: list[str]) -> list[list[float]]:
        from evidence_tool.embedding.vectors import normalized

        out = []
        for text in texts:
            rng = random.Random(sum(map(ord, text)) % 13)  # 13 distinct vectors
            out.append(normalized([rng.uniform(-1, 1) for _ in range(self.dim)]))
        return out


def _with_vectors(path: Path, records: list[JsonObject]) -> None:
    from evidence_tool.embedding.vectors import to_blob

    toy = _Toy()
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE vectors(id TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        for r in records[: len(records) - 5]:  # a few units without a vector
            con.execute(
                "INSERT INTO vectors VALUES (?, ?)",
                (r["id"], to_blob(toy.embed([str(r["title"])])[0])),
            )
        con.execute("INSERT INTO meta VALUES ('embedding', ?)", (toy.model_id,))


def test_dense_and_hybrid_from_memory_are_the_indexs_own(tmp_path: Path) -> None:
    """The dense ranking from the vectors in memory: the plain-Python ranking's hits,
    similarities and tie order (ties by id), with filters; hybrid answers the same."""
    from evidence_tool.activation.dense import dense_ranking

    records = _corpus(150, 10, twins=20)
    path = _build(tmp_path, records)
    _with_vectors(path, records)
    postings = Postings.load(path)
    assert postings is not None and postings.vectors is not None
    toy = _Toy()
    cases = 0
    with sqlite_index.open_readonly(path) as con:
        for query in QUERIES:
            vector = toy.embed([query])[0]
            for filters in FILTERS:
                where, args = sqlite_search._where(
                    filters
                    if not filters.table
                    else Filters(
                        filters.kind, filters.purpose, filters.language, "public.ward_stays"
                    )
                )
                for k in (3, 100):
                    want = dense_ranking(con, vector, where, args, k)
                    table = "public.ward_stays" if filters.table else None
                    found = postings.dense(
                        con,
                        vector,
                        Filters(filters.kind, filters.purpose, filters.language, table),
                        k,
                    )
                    assert found is not None and found[0] == want, (query, filters, k)
                    cases += len(want) > 0
    assert cases >= 100
    dense_only = 0
    for query in QUERIES:
        for mode in ("hybrid", "dense"):
            runs = [
                search_path(path, query, Filters(), 10, mode, lambda: toy, postings=p)
                for p in (None, postings)
            ]
            # Whole hits: a dense-only hit's record (title, applies_to...) comes from memory too.
            assert [h.to_json() for h in runs[0].hits] == [h.to_json() for h in runs[1].hits]
            assert runs[1].dense_path == "memory" and len(runs[1].hits) == 10
            dense_only += sum(1 for h in runs[1].hits if h.bm25 is None)
    assert dense_only >= 5  # hits whose record only the dense side read


@pytest.mark.parametrize("replace", [True, False])  # a new row; only a deletion
def test_a_load_that_an_update_overtook_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replace: bool
) -> None:
    """The load reads in short statements (an update elsewhere commits between them):
    when the revision moved meanwhile, what was read is not used."""
    path = _build(tmp_path, _corpus(40, 12))
    terms = Postings._terms
    changed = [_record(3, random.Random(5), odd=False)]

    def overtaken(
        con: sqlite3.Connection, position: dict[int, int], norm: object, n_rows: int
    ) -> object:
        inserted = changed if replace else []
        sqlite_index.update_in_place(
            path, "rev-2", {str(changed[0]["id"])}, inserted, lambda con: None
        )
        return terms(con, position, norm, n_rows)  # type: ignore[arg-type]

    monkeypatch.setattr(Postings, "_terms", staticmethod(overtaken))
    assert Postings.load(path) is None
    monkeypatch.setattr(Postings, "_terms", staticmethod(terms))
    loaded = Postings.load(path)
    assert loaded is not None and loaded.revision == "rev-2"


def _objects(root: object) -> int:
    """The Python objects reachable from ``root`` that the collector tracks (what a
    forked worker's reads write reference counts to: strings hang off them)."""
    import gc

    seen: set[int] = set()
    todo = [root]
    while todo:
        found = todo.pop()
        if id(found) in seen or found.__class__.__module__.startswith("numpy"):
            continue
        seen.add(id(found))
        todo += [r for r in gc.get_referents(found) if not isinstance(r, type)]
    return len(seen)


def test_postings_hold_the_units_strings_packed_not_objects_a_unit(tmp_path: Path) -> None:
    """A served revision's per-unit texts (records, columns, names) are held in a few
    buffers: the objects reachable from the postings grow by the ids and rowids alone
    (two a unit), not by the units' strings or the vocabulary's terms."""
    small = Postings.load(_build(tmp_path, _corpus(100, 3), "small.sqlite"))
    large = Postings.load(_build(tmp_path, _corpus(400, 3), "large.sqlite"))
    assert small is not None and large is not None
    per_unit = (_objects(large) - _objects(small)) / 300
    assert 0 < per_unit <= 2.5, per_unit  # was about 16 (a string, tuple, set... each)


def test_a_dense_similarity_of_signed_zeros_is_the_sql_paths_own(tmp_path: Path) -> None:
    """A zero vector ("zeros stay zeros", vectors.normalized) against a query whose
    components are all negative: every product is -0.0, and the similarity both SQL
    paths give (sum() from 0) is +0.0; the memory path must not answer -0.0 (shown as
    "-0.0" in a hit's JSON)."""
    from evidence_tool.activation.dense import dense_ranking
    from evidence_tool.embedding.vectors import to_blob

    records = _corpus(12, 3)
    path = _build(tmp_path, records)
    zeros, query = [0.0] * 3, [-0.6, -0.48, -0.64]
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE vectors(id TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        for n, r in enumerate(records):
            vec = zeros if n % 2 else [0.0, -0.6, 0.8]  # negative zeros: -0.0 products too
            con.execute("INSERT INTO vectors VALUES (?, ?)", (r["id"], to_blob(vec)))
        con.execute("INSERT INTO meta VALUES ('embedding', 'test:zero:3')")
    postings = Postings.load(path)
    assert postings is not None and postings.vectors is not None
    cases = 0
    with sqlite_index.open_readonly(path) as con:
        for k in (1, 5, 100):
            want = dense_ranking(con, query, [], [], k)
            found = postings.dense(con, query, Filters(), k)
            assert found is not None
            assert [(u, repr(s)) for u, s in found[0]] == [(u, repr(s)) for u, s in want]
            cases += sum(1 for _, s in want if s == 0.0)
    assert cases >= 5
