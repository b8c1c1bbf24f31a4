"""Dense vectors in the sqlite index from a real loopback embedding service: search
modes, filters before ranking, the content-addressed cache, a failing service (E401)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from embed_server import ServerState
from helpers import codes, envelope

from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.embedding.vectors import dot, from_blob

KEY = "sk-dense-4f02b8"
TITLE_LINE = "# "


def _installation(tmp: Path, url: str, **embedding: Any) -> Path:
    settings = {"kind": "http", "url": url, "model": "minilm", "dimensions": 384}
    settings |= {"batch_size": 16, "backoff_s": 0.01, "api_key_env": "EMBED_KEY", **embedding}
    path = tmp / f"installation-{len(list(tmp.glob('installation-*')))}.yaml"
    path.write_text(
        json.dumps({"installation_version": 1, "evidence": {"embedding": settings}}) + "\n"
    )
    return path


@pytest.fixture
def tht(cli: Callable[[list[str]], Any], workspace: Path) -> Callable[..., Any]:
    def run(
        *args: str,
        installation: Path | None = None,
        group: tuple[str, ...] = ("workspace", "evidence"),
    ) -> Any:
        argv = ["--installation", str(installation)] if installation else []
        result = cli([*argv, *group, *args, "--workspace-root", str(workspace), "--json"])
        envelope(result)
        return result

    return run


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY", KEY)
    monkeypatch.setenv("THT_ACTOR", "alice")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def _units(workspace: Path) -> int:
    snap = LocalEvidenceArchive(workspace).active_snapshot()
    assert snap is not None
    return len(list(snap.entries()))


def _edit_title(workspace: Path, word: str) -> None:
    path = sorted((workspace / "evidence" / "curated").rglob("*.md"))[0]
    lines = path.read_text(encoding="utf-8").split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith(TITLE_LINE))
    lines[i] += f" {word}"
    path.write_text("\n".join(lines), encoding="utf-8")


def _vectors(workspace: Path) -> dict[str, bytes]:
    con = sqlite3.connect(workspace / ".evidence-cache" / "index.sqlite")
    try:
        return dict(con.execute("SELECT id, vec FROM vectors").fetchall())
    finally:
        con.close()


def test_every_unit_gets_a_vector_and_hybrid_is_the_default(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, state = server
    inst = _installation(tmp_path, url)
    assert tht("consolidate", installation=inst).exit_code == 0
    n = _units(workspace)
    assert n > 20 and len(_vectors(workspace)) == n
    assert state.texts == n and max(len(r["input"]) for r in state.requests) == 16
    result = tht("search", "how long did the patient stay in hospital", installation=inst)
    assert result.exit_code == 0, result.stdout
    data = result.json["result"]
    assert data["mode"] == "hybrid" and data["hits"]
    # A fused score says how much of both sides points at the unit (0..1), not its rank.
    scores = [h["score"] for h in data["hits"]]
    assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    assert all(h["dense"] is not None for h in data["hits"])
    dense = tht("search", "length of stay", "--mode", "dense", installation=inst)
    assert dense.json["result"]["mode"] == "dense"
    hits = dense.json["result"]["hits"]
    assert all(h["bm25"] is None for h in hits)
    assert [h["score"] for h in hits] == [h["dense"] for h in hits]  # the cosine itself
    assert hits[0]["score"] < 1.0
    bm25 = tht("search", "degenza", "--mode", "bm25", installation=inst)
    assert bm25.json["result"]["mode"] == "bm25" and bm25.json["result"]["hits"]


def test_a_filter_matching_only_low_ranked_units_is_applied_before_ranking(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, _ = server
    inst = _installation(tmp_path, url)
    assert tht("consolidate", installation=inst).exit_code == 0
    query = "giornate di degenza del ricovero ospedaliero"
    for mode in ("dense", "hybrid"):
        everything = tht("search", query, "--mode", mode, "--limit", "1000", installation=inst)
        ranked = everything.json["result"]["hits"]
        assert len(ranked) == _units(workspace)  # dense ranks every unit
        last = ranked[-1]  # the unit least like the query
        only = tht(
            "search", query, "--mode", mode, "--kind", last["kind"], "--language",
            last["language"], "--limit", "1", installation=inst,
        )  # fmt: skip
        wanted = [
            h for h in ranked if (h["kind"], h["language"]) == (last["kind"], last["language"])
        ]
        assert [h["id"] for h in only.json["result"]["hits"]] == [wanted[0]["id"]]
        assert ranked.index(wanted[0]) >= 1  # low in the unfiltered ranking


def test_a_one_unit_change_embeds_one_text_and_a_model_change_all_once(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, state = server
    inst = _installation(tmp_path, url)
    assert tht("consolidate", installation=inst).exit_code == 0
    n = _units(workspace)
    assert state.texts == n
    _edit_title(workspace, "rivisto")
    assert tht("consolidate", installation=inst).json["result"]["status"] == "activated"
    assert state.texts == n + 1
    other = _installation(tmp_path, url, model="minilm-v2")
    result = tht("consolidate", installation=other)
    assert result.exit_code == 0, result.stdout
    assert state.texts == 2 * n + 1
    assert tht("consolidate", installation=other).exit_code == 0  # nothing left to embed
    assert state.texts == 2 * n + 1
    assert sum(len(r["input"]) for r in state.requests if r["model"] == "minilm-v2") == n
    # Back to the first model: its cache still holds every vector, nothing is sent.
    assert tht("consolidate", installation=inst).exit_code == 0
    assert state.texts == 2 * n + 1 and len(_vectors(workspace)) == n


def test_attack_torn_and_edited_cache_entries_are_recomputed(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, state = server
    inst = _installation(tmp_path, url)
    assert tht("consolidate", installation=inst).exit_code == 0
    good = _vectors(workspace)
    entries = sorted(
        p for p in (workspace / ".evidence-cache" / "embeddings").rglob("*") if p.is_file()
    )
    assert len(entries) == len(good)
    entries[0].write_bytes(entries[0].read_bytes()[:100])  # torn
    data = bytearray(entries[1].read_bytes())
    data[-3] ^= 0x40  # one float edited
    entries[1].write_bytes(bytes(data))
    (workspace / ".evidence-cache" / "index.sqlite").unlink()
    before = state.texts
    assert tht("consolidate", installation=inst).exit_code == 0
    assert state.texts == before + 2
    again = _vectors(workspace)
    assert again.keys() == good.keys()
    # Recomputed in a smaller batch: equal up to float noise (padding changes the sums).
    assert all(dot(from_blob(again[k]), from_blob(good[k])) > 0.9999 for k in good)


def test_a_failing_service_fails_activation_and_the_candidate_stays_pending(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, state = server
    inst = _installation(tmp_path, url, retries=1)
    assert tht("consolidate", installation=inst).exit_code == 0
    archive = LocalEvidenceArchive(workspace)
    before = archive.state().active
    _edit_title(workspace, "aggiornato")
    state.fail_next, state.fail_status = 1000, 500
    result = tht("consolidate", installation=inst)
    assert result.exit_code == 4 and codes(result.json) == ["E401"]
    assert result.json["result"]["status"] == "pending_activation"
    assert "embedding" in result.json["errors"][0]["message"]
    assert KEY not in result.stdout + result.stderr
    candidate = result.json["result"]["revision"]
    assert archive.state().active == before and archive.state().pending == candidate
    state.fail_next = 0
    retry = tht("consolidate", installation=inst)
    assert retry.json["result"]["status"] == "activated"
    assert archive.state().active == candidate


def test_dense_mode_without_vectors_says_how_to_get_them(
    workspace: Path, tht: Callable[..., Any]
) -> None:
    assert tht("consolidate").exit_code == 0
    assert tht("search", "degenza").json["result"]["mode"] == "bm25"
    result = tht("search", "degenza", "--mode", "dense")
    assert result.exit_code == 2
    assert "evidence.embedding" in result.json["errors"][0]["message"]


def test_config_show_names_the_key_variable_never_the_key(
    workspace: Path, tht: Callable[..., Any], server: tuple[str, ServerState], tmp_path: Path
) -> None:
    url, _ = server
    result = tht(installation=_installation(tmp_path, url), group=("config", "show"))
    shown = result.json["result"]["embedding"]
    assert shown["api_key_env"] == "EMBED_KEY" and shown["retries"] == 3
    assert KEY not in result.stdout
