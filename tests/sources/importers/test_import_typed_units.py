"""Issue 28, speed: an importer's typed units skip the parse-back, with the same bytes.

A first import refresh used to render every unit and parse the text again; a unit that
``renders_back`` vouches for is now taken as built.  Two promises, each checked here:
every format's units are vouched for only when their text parses back equal (and most
are vouched for, or nothing was gained); and a refresh writes byte for byte what the
parse-back path wrote (registry, import record, proposal cache, output) on a project
shaped like dbt's jaffle_shop and on a BIRD dev folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import bird_fixture
import pytest
from cli_runner import invoke
from dbt_helpers import MANIFEST, PROJECT
from import_helpers import add, sid_of
from shop_project import write_shop
from wren_cortex_fixtures import CORTEX_MODEL, WREN_PROJECT, run, write_tree

from evidence_tool.sources import import_source
from evidence_tool.unit import parse_unit, render
from evidence_tool.unit._speed.roundtrip import renders_back

VANNA = json.dumps(
    [
        {
            "id": f"a{year}-sql",
            "question": f"How many stays per ward in {year}?",
            "content": f"SELECT ward_code, count(*) FROM clinical.stays WHERE y = {year} GROUP BY 1",
            "training_data_type": "sql",
        }
        for year in (2023, 2024, 2025)
    ]
    + [
        {
            "id": "b2-doc",
            "question": None,
            "content": "# Wards\nA ward's code is its ```department``` code.",
            "training_data_type": "documentation",
        },
    ]
)


def _inputs(tmp: Path) -> dict[str, tuple[str, Path]]:
    write_tree(tmp / "vanna", {"training.json": VANNA})
    write_tree(tmp / "cortex", {"model.yaml": CORTEX_MODEL})
    return {
        "dbt project": ("dbt", PROJECT),
        "dbt manifest": ("dbt", MANIFEST),
        "jaffle_shop": ("dbt", write_shop(tmp / "shop")),
        "bird": ("bird", bird_fixture.write(tmp / "bird")),
        "wrenai": ("wrenai", write_tree(tmp / "wren", dict(WREN_PROJECT))),
        "cortex": ("cortex", tmp / "cortex" / "model.yaml"),
        "vanna": ("vanna", tmp / "vanna" / "training.json"),
    }


def test_every_format_s_units_are_vouched_for_only_when_they_parse_back(tmp_path: Path) -> None:
    counts: dict[str, tuple[int, int]] = {}
    for name, (fmt, root) in _inputs(tmp_path).items():
        vouched = refused = 0
        for item in run(fmt, root).units:
            text = render(item.unit)
            if renders_back(item.unit, text):
                vouched += 1
                parsed = parse_unit(text)
                assert not parsed.errors and parsed.unit == item.unit, (name, item.unit.id)
            else:
                refused += 1
        counts[name] = (vouched, refused)
    assert len(counts) == 7
    for name, (vouched, refused) in counts.items():
        # Most of each format's units take the fast path, or the speed-up is lost.
        assert vouched >= 2 and vouched >= 2 * refused, (name, vouched, refused)


def _snapshot(ws: Path) -> dict[str, bytes]:
    out = {}
    for folder in (ws / "evidence" / ".local", ws / ".evidence-cache" / "proposals"):
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                if path.name == "log.jsonl":  # appended to: this refresh's own event
                    data = data.splitlines()[-1]
                out[path.relative_to(ws).as_posix()] = data
    return out


def _refresh(ws: Path, fmt: str, rel: str) -> tuple[dict[str, bytes], str, str]:
    where = ["--workspace-root", str(ws)]
    text = invoke(["workspace", "evidence", "refresh", "--source-id", sid_of(fmt, rel), *where])
    assert text.exit_code == 0, text.stdout + text.stderr
    snap = _snapshot(ws)
    shown = invoke(["workspace", "evidence", "sources", "show", sid_of(fmt, rel)[:12], *where])
    # Forget the proposal and its comparison: the next refresh imports again.
    (ws / "evidence" / ".local" / "sources.json").unlink()
    for path in (ws / ".evidence-cache" / "proposals").glob("*"):
        path.unlink()
    return snap, text.stdout, shown.stdout


SHAPES: dict[str, tuple[str, str, Callable[[Path], object]]] = {
    "jaffle_shop": ("dbt", "imports/shop", write_shop),  # staging: incomplete elements too
    "bird": ("bird", "imports/bird", bird_fixture.write),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_refresh_writes_what_the_parse_back_path_wrote(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    fmt, rel, make = SHAPES[shape]
    monkeypatch.setenv("THT_NOW", "2026-12-04T10:00:00Z")
    make(workspace / rel)
    assert add(workspace, fmt, rel, "--language", "en").exit_code == 0
    answers: list[bool] = []

    def counted(unit: object, text: str) -> bool:
        answers.append(renders_back(unit, text))  # type: ignore[arg-type]
        return answers[-1]

    monkeypatch.setattr(import_source, "renders_back", counted)
    fast = _refresh(workspace, fmt, rel)
    monkeypatch.setattr(import_source, "renders_back", lambda unit, text: False)
    parsed = _refresh(workspace, fmt, rel)
    assert any(answers) and len(answers) >= 5
    assert fast[0].keys() == parsed[0].keys() and len(fast[0]) >= 3
    for name in fast[0]:
        assert fast[0][name] == parsed[0][name], name
    assert fast[1:] == parsed[1:]
