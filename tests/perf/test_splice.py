"""Splicing (archive/_speed/splice.py): a new manifest built from the previous one's bytes is
byte for byte the manifest encoded afresh, whatever changed, and a previous document in
any other layout lends nothing instead of lending the wrong bytes."""

from __future__ import annotations

import json
from typing import Any

from helpers import render_local_manifest_generic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.archive._speed import splice
from evidence_tool.archive.manifest import (
    PreviousJson,
    PreviousYaml,
    manifest_bytes,
    render_local_manifest,
)
from evidence_tool.unit.hashing import canonical_json

# Text that looks like the structure the splicer searches for, inside values.
TRICKY = st.sampled_from(
    [
        "plain",
        'quote " and \\ backslash',
        "line\nbreak",
        "\n- id: evidence:x:a\n",
        '"id":"evidence:x:a",',
        '],"units":[\n',
        ",\n",
        "héllo ✓",
        "",
        "- id: ",
    ]
)
IDS = st.lists(
    st.text(alphabet="abc:# '\"-", min_size=1, max_size=6).map(lambda s: "evidence:x:" + s),
    unique=True,
    max_size=12,
).map(sorted)
HEX = st.sampled_from(["0" * 64, "a" * 64, "1e5" + "0" * 61, "f" * 64])


@st.composite
def provenance(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"kind": "manual", "curator": draw(TRICKY), "declared_at": "2026-11-29T10:00:00Z"}
    return {
        "kind": "document",
        "source_id": draw(HEX),
        "source_path": "evidence/source/acquired/a/b.md",
        "source_hash": draw(HEX),
        "excerpts": draw(st.lists(TRICKY, max_size=3)),
    }


@st.composite
def unit_entry(draw: st.DrawFn, uid: str) -> dict[str, Any]:
    items = draw(
        st.lists(
            st.fixed_dictionaries({"code": st.just("R1"), "message": TRICKY, "content_hash": HEX}),
            max_size=2,
        )
    )
    return {
        "id": uid,
        "path": f"evidence/curated/domain/{draw(st.sampled_from(['a', 'b-c', 'x.y']))}.md",
        "kind": draw(st.sampled_from(["domain", "glossary"])),
        "content_hash": draw(HEX),
        "file_hash": draw(HEX),
        "provenance": draw(provenance()),
        "review_items": items,
    }


@st.composite
def manifest(draw: st.DrawFn) -> dict[str, Any]:
    units = [draw(unit_entry(uid)) for uid in draw(IDS)]
    deletions = [
        {"id": uid, "reason": draw(TRICKY), "last_content_hash": draw(HEX), "source_id": None}
        for uid in draw(IDS)
    ]
    sources = [{"path": p, "blob": draw(HEX)} for p in sorted(draw(st.sets(TRICKY, max_size=3)))]
    return {
        "format": 1,
        "units": units,
        "deletions": deletions,
        "suppressed_sources": sorted(draw(st.sets(TRICKY, max_size=2))),
        "sources": sources,
    }


@st.composite
def edited(draw: st.DrawFn, prev: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """``prev``'s very objects, with some changed, dropped or added: sorted like derive's."""
    out = []
    for e in prev:
        action = draw(st.sampled_from(["keep", "keep", "keep", "change", "drop", "add"]))
        if action == "keep":
            out.append(e)
        elif action == "change":
            out.append({**e, "content_hash": "c" * 64})
        elif action == "add":
            out.append(e)
            out.append({**e, key: e[key] + "+", "file_hash": "d" * 64})
    return sorted(out, key=lambda e: e[key])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_spliced_manifest_is_the_manifest_encoded_afresh(data: st.DataObject) -> None:
    prev_bytes = manifest_bytes(data.draw(manifest()))
    prev = json.loads(prev_bytes)  # the objects derive takes over, parsed from those bytes
    new = {
        **prev,
        "units": data.draw(edited(prev["units"], "id")),
        "deletions": data.draw(edited(prev["deletions"], "id")),
        "sources": data.draw(edited(prev["sources"], "path")),
    }
    previous = PreviousJson(prev_bytes, prev)
    assert manifest_bytes(new, previous) == manifest_bytes(new)
    assert json.loads(manifest_bytes(new, previous)) == new
    for key in ("units", "deletions", "sources"):
        if prev[key]:
            assert previous.splice(key, new[key]) is not None, f"{key} was not spliced"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_spliced_mirror_is_the_mirror_rendered_afresh(data: st.DataObject) -> None:
    prev = json.loads(manifest_bytes(data.draw(manifest())))
    text = render_local_manifest(prev, "0" * 64)
    assert text == render_local_manifest_generic(prev, "0" * 64)
    new = {
        **prev,
        "units": data.draw(edited(prev["units"], "id")),
        "deletions": data.draw(edited(prev["deletions"], "id")),
    }
    previous = PreviousYaml(text, prev)
    spliced = render_local_manifest(new, "1" * 64, previous)
    assert spliced == render_local_manifest(new, "1" * 64)
    assert spliced == render_local_manifest_generic(new, "1" * 64)
    for key in ("units", "deletions"):
        if prev[key]:
            assert previous.splice(key, new[key], lambda e: b"-\n") is not None, key


def test_every_entry_of_a_lined_array_has_a_line_of_its_own() -> None:
    """So Git shows one changed line per changed unit."""
    doc = {
        "format": 1,
        "units": [{"id": "evidence:x:a", "n": "1\n2"}, {"id": "evidence:x:b"}],
        "deletions": [],
        "suppressed_sources": ["s1", "s2"],
        "sources": [{"path": "p", "blob": "b"}],
    }
    assert manifest_bytes(doc).decode().split("\n") == [
        '{"deletions":[],"format":1,"sources":[',
        '{"blob":"b","path":"p"}',
        '],"suppressed_sources":["s1","s2"],"units":[',
        '{"id":"evidence:x:a","n":"1\\n2"},',
        '{"id":"evidence:x:b"}',
        "]}",
    ]


@settings(max_examples=100, deadline=None)
@given(manifest())
def test_an_older_compact_manifest_lends_nothing(doc: dict[str, Any]) -> None:
    compact = canonical_json(doc)  # the layout of manifests written before lines
    prev = json.loads(compact)
    previous = PreviousJson(compact, prev)
    for key in ("units", "deletions", "sources"):
        if prev[key]:
            assert previous.splice(key, list(prev[key])) is None
    assert manifest_bytes(prev, previous) == manifest_bytes(prev)


LAYOUTS = {
    "pretty": lambda doc: json.dumps(doc, indent=1, sort_keys=True).encode(),
    "unsorted compact": lambda doc: json.dumps(doc, separators=(",", ":")).encode(),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(sorted(LAYOUTS)))
def test_a_manifest_in_another_layout_lends_nothing(data: st.DataObject, layout: str) -> None:
    doc = data.draw(manifest())
    raw = LAYOUTS[layout](doc)
    prev = json.loads(raw)  # the objects are always parsed from the very bytes
    new = {**prev, "units": data.draw(edited(prev["units"], "id"))}
    assert manifest_bytes(new, PreviousJson(raw, prev)) == manifest_bytes(new)


def test_the_plan_copies_runs_and_encodes_only_what_changed() -> None:
    prev = [{"id": c} for c in "abcdef"]
    changed = {"id": "c", "x": 1}
    added = {"id": "cc"}
    new = [prev[0], prev[1], changed, added, prev[3], prev[5]]  # e dropped
    assert splice.plan(prev, new, "id") == [(0, 2), changed, added, (3, 4), (5, 6)]
    assert splice.plan(prev, list(prev), "id") == [(0, 6)]
    assert splice.plan([], [changed], "id") == [changed]
    assert splice.plan(prev, [], "id") == []
    # Out of order (never produced by derive): never a run that goes backwards.
    assert splice.plan(prev, [prev[3], prev[1]], "id") == [(3, 4), prev[1]]
