"""Parse workers send flat results; the main process reads them without building units.

A worker's result used to be a pickled ParseResult (nested frozen dataclasses): its
unpickling cost the main process a sixth of the parse.  Now it is tuples of primitives
(unit.parse.flatten), the typed result is built only when asked, and every answer a
scan gives (ids, kinds, validity, hashes, key lines, findings) is the same either way.
Operation counts, never time.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from evidence_tool.unit import render
from evidence_tool.unit.parse import ParseResult, flatten, parse_unit, unflatten
from evidence_tool.workspace import validate_workspace
from evidence_tool.workspace._speed import parallel
from evidence_tool.workspace.curated import CuratedFile

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from unit_helpers import PROPERTY, unit_text
from unit_strategies import units

from bench.generate import generate

parse_module = importlib.import_module("evidence_tool.unit.parse")

BROKEN = {
    # a kind typo (E106), a duplicate key (E103), a near-miss heading (W111), not UTF-8
    "typo": unit_text("# T\n\n## Rule\n\nr\n", kind="domian"),
    "dupe": unit_text("# T\n\n## Rule\n\nr\n", extra="kind: domain\n"),
    "warn": unit_text("# T\n\n## Rule\n\nr\n\n## Rules\n\nmore\n"),
    "bytes": b"---\nid: \xff\n---\n",
}


def _same(result: ParseResult, back: ParseResult) -> None:
    assert back == result  # dataclass equality: unit, errors, warnings, id, key lines


@settings(PROPERTY, max_examples=120)
@given(units())
def test_flat_results_of_valid_units_rebuild_the_same_typed_result(unit: object) -> None:
    result = parse_unit(render(unit), path="evidence/curated/x/u.md")  # type: ignore[arg-type]
    assert result.unit is not None
    back = unflatten(flatten(result, content_hash=True))
    _same(result, back)
    assert back.unit is not None
    # The hash computed by the worker travels with the unit and is the true one.
    assert back.unit.__dict__["content_hash"] == result.unit.content_hash
    assert "content_hash" not in unflatten(flatten(result)).unit.__dict__


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_flat_results_keep_every_finding(name: str) -> None:
    result = parse_unit(BROKEN[name], path=f"evidence/curated/domain/{name}.md")
    assert result.errors or result.warnings
    _same(result, unflatten(flatten(result)))


def _answers(f: CuratedFile) -> tuple[object, ...]:
    return (
        f.unit_id,
        f.kind,
        f.valid,
        f.key_line("id"),
        f.key_line("kind"),
        f.key_line("purposes"),
        list(f.errors),
        list(f.warnings),
    )


@pytest.mark.parametrize("name", [*sorted(BROKEN), "valid"])
def test_a_flat_file_answers_as_a_typed_one_without_building_the_unit(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = BROKEN.get(name, unit_text("# T\n\n## Rule\n\nr\n"))
    data = text if isinstance(text, bytes) else text.encode()
    rel = f"evidence/curated/domain/{name}.md"
    result = parse_unit(data, path=rel)
    typed = CuratedFile(rel, rel, data, result)
    flat = CuratedFile(rel, rel, data, flat=flatten(result))
    built = _count_unit_builds(monkeypatch)
    answers = _answers(flat)
    assert built[0] == 0
    assert answers == _answers(typed)
    # The content hash was not sent (a validate's workers skip it): asking builds the unit.
    assert (flat.content_hash, flat.identity()) == (typed.content_hash, typed.identity())
    assert flat.unit == typed.unit
    assert built[0] == (1 if result.unit is not None else 0)


def _count_unit_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = parse_module.unflatten_unit

    def spy(*args: object) -> object:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(parse_module, "unflatten_unit", spy)
    return calls


def _parallel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, seed: int
) -> tuple[Path, list[int]]:
    """A workspace of ``n`` units that is parsed on several processes, and the count of
    units built from flat results from now on."""
    root = generate(n, tmp_path / "ws", seed=seed)
    monkeypatch.delenv("THT_SERIAL", raising=False)
    return root, _count_unit_builds(monkeypatch)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the parallel parse needs two cores")
def test_parallel_validate_shares_the_parse_and_builds_no_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = parallel.PARALLEL_MIN + 137
    root, built = _parallel(tmp_path, monkeypatch, n, seed=5)
    report = validate_workspace(root)
    assert built[0] == 0
    assert report.ok and report.summary()["valid"] == n
    by_worker = sum(f.flat is not None and f.parsed is None for f in report.files)
    here = sum(f.flat is None and f.parsed is not None for f in report.files)
    # Both this process and the worker(s) parsed a share; together, every file once.
    assert by_worker > 0 and here > 0 and by_worker + here == n
    monkeypatch.setenv("THT_SERIAL", "1")
    serial = validate_workspace(root)
    assert [(f.rel, f.unit_id, f.kind, f.content_hash) for f in report.files] == [
        (f.rel, f.unit_id, f.kind, f.content_hash) for f in serial.files
    ]
    assert built[0] == by_worker  # content_hash asked: the units are built now, once each


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the parallel parse needs two cores")
def test_a_recording_scan_gets_both_hashes_from_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = parallel.PARALLEL_MIN + 41
    root, built = _parallel(tmp_path, monkeypatch, n, seed=9)
    files = sorted(str(p) for p in (root / "evidence" / "curated").rglob("*.md"))
    items = [(p, p[len(str(root)) + 1 :]) for p in files]
    parsed = parallel.parse_many(items, None, True)
    flat = [f for f in parsed.values() if f.flat is not None]
    assert len(parsed) == n and flat
    assert all(f._hash is not None and f.flat[4][7] is not None for f in flat)  # type: ignore[index]
    hashes = [(f.file_hash, f.content_hash) for f in flat]
    assert built[0] == 0  # answered from what the workers sent
    typed = [CuratedFile(f.rel, f.location, f.data, parse_unit(f.data, path=f.rel)) for f in flat]
    assert hashes == [(t.file_hash, t.content_hash) for t in typed]
