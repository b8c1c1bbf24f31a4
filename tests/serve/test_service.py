"""The service in-process: pinning against an index ahead of its revision, several
workspaces, and an embedding service that fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import loaded_postings
from serve_helpers import EmbeddingService, consolidate

from evidence_tool.archive import LocalEvidenceArchive
from evidence_tool.archive.state import State, render_state
from evidence_tool.errors import EvidenceError
from evidence_tool.serve import EvidenceService, serve_settings
from evidence_tool.serve import service as service_module

FORMULA = "evidence/curated/formula/giornate-di-degenza.md"


def _retitle(root: Path, title: str) -> None:
    path = root / FORMULA
    text = path.read_text("utf-8").replace("# Giornate di degenza\n", f"# {title}\n")
    path.write_text(text, "utf-8")


def _code(exc: pytest.ExceptionInfo[EvidenceError]) -> str:
    return exc.value.code


def test_an_index_ahead_of_the_active_revision_is_never_labelled_with_it(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window of an activation: the index holds the candidate, state.yaml still names
    the previous revision.  No answer may call the candidate's hits the previous one's."""
    first = LocalEvidenceArchive(served).state().active
    _retitle(served, "Giornate di ricovero ospedaliero")
    second = consolidate(served)
    state = served / "evidence/.local/state.yaml"
    state.write_bytes(render_state(State(first, first, second)))  # active: first; pending
    monkeypatch.setattr(service_module, "PIN_PAUSE_S", 0.001)
    service = EvidenceService(serve_settings(None, str(served)))
    with pytest.raises(EvidenceError) as raised:
        service.search_evidence({"query": "ricovero ospedaliero"})
    assert _code(raised) == "E702"
    state.write_bytes(render_state(State(first, second, None)))  # the activation finished
    answer = service.search_evidence({"query": "ricovero ospedaliero"}).result
    assert answer["revision"] == second
    assert answer["hits"][0]["title"] == "Giornate di ricovero ospedaliero"  # type: ignore[index]
    assert service.readers["psd-clinical"].loads == 2


def _registry(tmp_path: Path, workspace: Path) -> Path:
    """An installation whose registry holds two consolidated workspaces."""
    registry = tmp_path / "registry"
    for name in ("alpha", "beta"):
        root = registry / "repo" / name
        shutil.copytree(workspace, root)
        descriptor = root / "workspace.yaml"
        text = descriptor.read_text("utf-8")
        descriptor.write_text(text.replace("id: psd-clinical", f"id: {name}"), "utf-8")
        consolidate(root)
    installation = tmp_path / "installation.yaml"
    installation.write_text(
        f"installation_version: 1\nworkspace_registry_root: {registry}\n", "utf-8"
    )
    return installation


def test_one_server_serves_every_workspace_of_the_registry(tmp_path: Path, workspace: Path) -> None:
    settings = serve_settings(str(_registry(tmp_path, workspace)), cwd=tmp_path)
    assert [w.name for w in settings.workspaces] == ["alpha", "beta"]
    service = EvidenceService(settings)
    health = service.health()
    assert [w["workspace"] for w in health["workspaces"]] == ["alpha", "beta"]  # type: ignore[index, union-attr]
    for asked, code in ((None, "E901"), ("gamma", "E904")):
        with pytest.raises(EvidenceError) as raised:
            service.search_evidence({"query": "degenza", "workspace": asked})
        assert _code(raised) == code
    found = service.search_evidence({"query": "degenza", "workspace": "beta"}).result
    assert found["workspace"] == "beta" and found["hits"]
    one = serve_settings(str(tmp_path / "installation.yaml"), workspace_id="alpha")
    assert [w.name for w in one.workspaces] == ["alpha"]


def test_a_failing_embedding_service_degrades_hybrid_to_bm25_with_a_warning(
    served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embeddings = EmbeddingService()
    try:
        installation = tmp_path / "installation.yaml"
        import json

        embedding = embeddings.settings()
        installation.write_text(
            json.dumps({"installation_version": 1, "evidence": {"embedding": embedding}}),
            "utf-8",
        )
        archive = LocalEvidenceArchive(served)
        from evidence_tool.activation import backend_for

        archive.consolidate("alice", backend_for({"kind": "sqlite"}, archive.layout, embedding))
        made = []
        real = service_module.embedder_for

        def counting(settings: object) -> object:
            made.append(settings)
            return real(settings)  # type: ignore[arg-type]

        monkeypatch.setattr(service_module, "embedder_for", counting)
        service = EvidenceService(serve_settings(str(installation), str(served)))
        for query in ("giornate di degenza", "ricoveri validi", "diagnosi principale"):
            hybrid = service.search_evidence({"query": query})
            assert hybrid.result["mode"] == "hybrid" and not hybrid.warnings
        assert len(made) == 1  # one embedder (one client, or one model) per server
        embeddings.failing = True
        for mode in (None, "hybrid", "dense"):
            degraded = service.search_evidence({"query": "giornate di degenza", "mode": mode})
            assert degraded.result["mode"] == "bm25" and degraded.result["hits"], mode
            assert [w.code for w in degraded.warnings] == ["W402"], mode
    finally:
        embeddings.close()


def test_one_units_record_is_the_snapshots_export_record(served: Path) -> None:
    from evidence_tool.serve.revisions import export_record

    archive = LocalEvidenceArchive(served)
    snap = archive.active_snapshot()
    assert snap is not None
    expected = {r["id"]: r for r in snap.records()}
    for entry in snap.entries():
        assert export_record(snap, entry).to_json() == expected[entry.id]
    assert len(expected) == len(snap.entries()) > 40


def test_an_activation_parses_only_the_units_it_changed(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """evidence_for reads every unit: after a one-unit change only that one is parsed."""
    service = EvidenceService(serve_settings(None, str(served)))
    first = service.evidence_for({"tables": ["admissions"]}).result
    view = service.readers["psd-clinical"].current()
    assert view is not None and len(view.parsed) == len(view.entries)
    _retitle(served, "Giornate di degenza ospedaliera")
    consolidate(served)
    parses = 0
    original = LocalEvidenceArchive.snapshot

    def counting(self: LocalEvidenceArchive, revision: str) -> object:
        snap = original(self, revision)
        real = snap.unit

        def unit(entry: object) -> object:
            nonlocal parses
            parses += 1
            return real(entry)  # type: ignore[arg-type]

        object.__setattr__(snap, "unit", unit)
        return snap

    monkeypatch.setattr(LocalEvidenceArchive, "snapshot", counting)
    second = service.evidence_for({"tables": ["admissions"]}).result
    assert second["revision"] != first["revision"] and second["count"] == first["count"]
    assert parses == 1


VANNA_CSV = (
    "id,question,content,training_data_type\r\n"
    'f1-sql,Average stay in cardiology?,"SELECT avg(los_days) FROM clinical.admissions",sql\r\n'
)


def test_provenance_says_manual_document_or_import(served: Path) -> None:
    """An agent tells a curator's assertion from a documented or an imported excerpt."""
    import hashlib
    import json

    from cli_runner import registry, tht

    csv = served / "imports/vanna/training.csv"
    csv.parent.mkdir(parents=True)
    csv.write_bytes(VANNA_CSV.encode())
    assert tht(served, "sources", "add", "--format", "vanna", str(csv)).exit_code == 0
    source = hashlib.sha256(b"import:vanna:imports/vanna/training.csv").hexdigest()
    assert tht(served, "refresh", "--source-id", source).exit_code == 0
    comparison = registry(served)["sources"][source]["comparison"]
    decided = tht(
        served, "decide", "--source-id", source, "--revision", comparison["revision"],
        "--decision", "replace",
    )  # fmt: skip
    assert decided.exit_code == 0, decided.stdout
    service = EvidenceService(serve_settings(None, str(served)))
    imported = service.get_evidence({"id": "evidence:vanna:f1-sql"}).result["unit"]
    provenance = imported["provenance"]  # type: ignore[index]
    assert provenance["origin"] == "import" and provenance["kind"] == "document"
    assert provenance["imported_from"] == ["imports/vanna/training.csv:2-2"]
    manual = service.get_evidence({"id": "evidence:clinical:drg"}).result["unit"]
    assert manual["provenance"]["origin"] == "manual"  # type: ignore[index]
    kinds = {
        h["provenance"]["origin"]  # type: ignore[index]
        for q in ("degenza ricovero", "diagnosi", "SDO scheda")
        for h in service.search_evidence({"query": q, "limit": 50}).result["hits"]  # type: ignore[union-attr]
    }
    assert kinds <= {"manual", "document", "import"} and "manual" in kinds
    json.dumps(imported)  # JSON all the way down
    _packing_changes_no_answer(served, ["degenza ricovero", "diagnosi", "SDO scheda", "f1"])


def test_evidence_for_resolves_through_the_search_path_and_says_what_it_could_not(
    served: Path, tmp_path: Path
) -> None:
    installation = tmp_path / "installation.yaml"
    installation.write_text(
        "installation_version: 1\nevidence:\n  catalog:\n    kind: ddl\n"
        "    search_path: [admin, clinical]\n",
        "utf-8",
    )
    service = EvidenceService(serve_settings(str(installation), str(served)))
    found = service.evidence_for({"tables": ["Admissions", "patients", "nowhere"]}).result
    assert found["resolved"] == {
        "Admissions": ["clinical.admissions"],
        "patients": ["admin.patients"],
        "nowhere": ["nowhere"],
    }
    assert found["notes"] == ["no active unit names a table 'nowhere'"]
    units = [u for group in found["by_kind"].values() for u in group]  # type: ignore[union-attr]
    assert len(units) == found["count"] > 0
    for u in units:
        named = {t.lower() for t in u["applies_to"].get("tables", [])}  # type: ignore[index]
        named |= {c.rsplit(".", 1)[0].lower() for c in u["applies_to"].get("columns", [])}  # type: ignore[index]
        assert named & {"clinical.admissions", "admin.patients"}, u["id"]  # type: ignore[index]
    with pytest.raises(EvidenceError) as raised:
        service.evidence_for({})
    assert _code(raised) == "E901"


def test_a_table_name_outside_the_search_path_in_two_schemas_is_ambiguous(served: Path) -> None:
    sdo = (served / "evidence/curated/glossary/sdo.md").read_text("utf-8")
    staged = sdo.replace("id: evidence:clinical:sdo", "id: evidence:clinical:sdo-staging")
    staged = staged.replace(
        "tables: [clinical.admissions, clinical.discharges, clinical.diagnoses, "
        "clinical.procedures]",
        "tables: [staging.admissions]",
    )
    (served / "evidence/curated/glossary/sdo-staging.md").write_text(staged, "utf-8")
    consolidate(served)
    service = EvidenceService(serve_settings(None, str(served)))  # search path: [public]
    found = service.evidence_for({"tables": ["admissions"]}).result
    assert found["resolved"] == {"admissions": ["clinical.admissions", "staging.admissions"]}
    (note,) = found["notes"]  # type: ignore[misc]
    assert "ambiguous" in note and "staging.admissions" in note  # type: ignore[operator]
    ids = [u["id"] for group in found["by_kind"].values() for u in group]  # type: ignore[union-attr, index]
    assert "evidence:clinical:sdo-staging" in ids and "evidence:clinical:sdo" in ids


def _cli_hits(root: Path, query: str, mode: str = "bm25") -> list[tuple[str, float]]:
    """What ``tht workspace evidence search`` ranks (the library call it makes)."""
    from evidence_tool.activation.sqlite_index import Filters, search
    from evidence_tool.workspace.layout import Layout

    found = search(Layout.at(root), query, Filters(), 10, mode)
    return [(h.id, h.score) for h in found.hits]


def _served_hits(service: EvidenceService, query: str) -> list[tuple[str, float]]:
    hits = service.search_evidence({"query": query, "mode": "bm25"}).result["hits"]
    return [(h["id"], h["score"]) for h in hits]  # type: ignore[index, union-attr]


def test_bm25_from_the_postings_answers_what_the_cli_answers(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the revision's postings are loaded FTS5 ranks, after it they do; an
    activation elsewhere brings a new load: every answer is the CLI search's."""
    from evidence_tool.activation import sqlite_search

    service = EvidenceService(serve_settings(None, str(served)))
    queries = ["giornate di degenza", "ricovero ospedaliero", "degenza media reparto", "tasso"]
    first = [_served_hits(service, q) for q in queries]  # the load starts with the first
    cache = service._postings["psd-clinical"]
    revision = LocalEvidenceArchive(served).state().active
    assert revision is not None and loaded_postings(cache, revision) is not None
    with monkeypatch.context() as m:  # FTS5's ranking is not asked any more
        m.setattr(sqlite_search, "_bm25_rows", None)
        assert [_served_hits(service, q) for q in queries] == first
    assert first == [_cli_hits(served, q) for q in queries]
    assert sum(len(h) for h in first) >= 4
    _retitle(served, "Giornate di ricovero ospedaliero")
    second = consolidate(served)
    assert (
        _served_hits(service, "ricovero ospedaliero")[0]
        == _cli_hits(served, "ricovero ospedaliero")[0]
    )
    assert loaded_postings(cache, second) is not None and cache.loads == 2
    assert [_served_hits(service, q) for q in queries] == [_cli_hits(served, q) for q in queries]


def test_unit_texts_are_read_once_and_a_new_revision_reads_only_the_changed_ones(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hit shows its unit's text: read for every unit when a revision loads (in the
    background), and kept across an activation for the blobs it did not change."""
    from evidence_tool.archive.snapshot import Snapshot

    reads: list[str] = []
    original = Snapshot.unit_bytes

    def counting(self: Snapshot, entry: object) -> bytes:
        reads.append(entry.id)  # type: ignore[attr-defined]
        return original(self, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(Snapshot, "unit_bytes", counting)
    service = EvidenceService(serve_settings(None, str(served)))
    reader = service.readers["psd-clinical"]
    view = reader.current()
    assert view is not None
    view.warm_texts()  # waits for the background warm-up, which read them all
    assert sorted(reads) == sorted(view.entries) and len(reads) > 40
    hits = service.search_evidence({"query": "giornate degenza", "mode": "bm25"}).result["hits"]
    assert hits and len(reads) == len(view.entries)  # the hits' texts were read already
    _retitle(served, "Giornate di degenza ospedaliera")
    consolidate(served)
    reads.clear()
    after = reader.current()
    assert after is not None and after.revision != view.revision
    after.warm_texts()
    held = {e.file_hash for e in view.entries.values()}
    changed = [e.id for e in after.entries.values() if e.file_hash not in held]
    assert reads == changed and len(changed) == 1
    assert "ospedaliera" in after.text(changed[0])


def _packing_changes_no_answer(served: Path, queries: list[str]) -> None:
    """Once every body is read, a view holds content hashes, bodies and the import flag
    in one buffer (forked workers then copy none of the manifest's objects): searches
    and get_evidence answer the same bytes as from the manifest's entries."""
    import msgspec

    service = EvidenceService(serve_settings(None, str(served)))
    service.supervised()  # nothing read in the background: the view stays unpacked
    view = service.readers["psd-clinical"].current()
    assert view is not None and view._packed is None

    def answers() -> list[bytes]:
        found = [service.search_evidence({"query": q, "limit": 50}).result for q in queries]
        found += [service.get_evidence({"id": uid}).result for uid in sorted(view.entries)]
        return [msgspec.json.encode(a) for a in found]

    before = answers()
    view.warm_texts()
    assert view._packed is not None and len(view._packed.keys) == len(view.entries) > 40
    assert answers() == before
    hits = sum(len(msgspec.json.decode(a)["hits"]) for a in before[: len(queries)])
    flags = [view._packed.get(n, 2) for n in range(len(view.entries))]
    assert hits > 20 and "1" in flags and "" in flags  # both kinds of provenance shown
    assert any(b'"origin":"import"' in a for a in before)
