"""The review page's typed records (issue 18): WrittenReport, the ``report`` command's
--json result, round-trips through to_json/from_json and sits in a schema-valid envelope;
the page model's rows read the library's JSON shapes they are built from, and the page's
source rows show the typed source summaries they are given."""

from __future__ import annotations

import json
from html import escape
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.report.collect import (
    CatalogState,
    ComparisonRef,
    ReviewRow,
    UnitStatus,
    WrittenReport,
)
from evidence_tool.report.page import sources_section
from evidence_tool.sources.records import (
    Identifier,
    Retraction,
    SourceKind,
    SourceRecord,
    SourceStatus,
)
from evidence_tool.sources.registry import CitingUnit as SourceCiting
from evidence_tool.sources.registry import SourceSummary
from evidence_tool.unit.schemas import load_schema

ENVELOPE = load_schema("cli/envelope.schema.json")
HEX = st.text(alphabet="0123456789abcdef", min_size=12, max_size=64)
TEXT = st.text(max_size=40)

REPORTS = st.builds(
    WrittenReport,
    path=TEXT,
    bytes=st.integers(min_value=0, max_value=2**40),
    units=st.integers(min_value=0, max_value=10**6),
    file_errors=st.integers(min_value=0, max_value=10**4),
    comparisons=st.lists(st.builds(ComparisonRef, HEX, HEX), max_size=4).map(tuple),
    initialized=st.booleans(),
    active=st.none() | HEX,
    pending=st.none() | HEX,
    opened=st.none() | st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(REPORTS)
def test_written_report_round_trips_in_a_valid_envelope(report: WrittenReport) -> None:
    data = report.to_json()
    assert WrittenReport.from_json(data) == report
    # Through the bytes an envelope carries, too.
    assert WrittenReport.from_json(json.loads(json.dumps(data))) == report
    envelope = {
        "ok": True,
        "command": "workspace evidence report",
        "workspace": "/ws",
        "result": data,
        "errors": [],
        "warnings": [],
    }
    jsonschema.Draft202012Validator(ENVELOPE).validate(envelope)
    assert ("opened" in data) is (report.opened is not None)


def test_written_report_refuses_a_wrong_shape() -> None:
    good = WrittenReport("/ws/p.html", 10, 2, 0, (), True, None, None).to_json()
    for key, bad in (("units", "2"), ("initialized", 1), ("comparisons", {}), ("path", None)):
        with pytest.raises(ValueError):
            WrittenReport.from_json({**good, key: bad})


SUMMARIES = st.builds(
    SourceSummary,
    st.builds(
        SourceRecord,
        source_id=HEX,
        locator=TEXT,
        kind=st.sampled_from(SourceKind),
        first_seen_at=TEXT,
        status=st.sampled_from(SourceStatus),
        title=st.none() | TEXT,
        identifier=st.none() | st.builds(Identifier, TEXT, TEXT),
        adopted_hash=st.none() | HEX,
        acknowledged_hash=st.none() | HEX,
        retraction=st.none() | st.builds(Retraction, TEXT, TEXT, TEXT),
    ),
    st.booleans(),
    st.lists(
        st.builds(SourceCiting, TEXT, st.sampled_from(["source", "original"]), TEXT),
        max_size=3,
    ).map(tuple),
)


@settings(max_examples=60, deadline=None)
@given(SUMMARIES)
def test_the_source_row_shows_every_field_of_a_source_summary(summary: SourceSummary) -> None:
    """The page reads the typed summary itself (no copy of it in between): its row holds
    the id, kind, status, title, identifier, both hashes, the citing units' roles, and the
    retraction warning above the table."""
    data: Any = SimpleNamespace(sources=[summary], sources_by_id={summary.source_id: summary})
    html = sources_section(data)
    record = summary.record
    row = html[html.index(f'<tr id="source-{escape(record.source_id)}">') :]
    shown = [escape(record.locator), escape(record.kind.value), escape(summary.status.value)]
    shown += [escape(record.title or ""), escape(record.source_id[:12])]
    if record.identifier:
        shown.append(escape(f"{record.identifier.type}: {record.identifier.value}"))
    shown += [escape(h[:12]) for h in (record.adopted_hash, record.acknowledged_hash) if h]
    shown += [f"({escape(c.role)})" for c in summary.citing_units]
    assert [s for s in shown if s not in row] == []
    assert (" · suppressed</td>" in row) is summary.suppressed
    warning = summary.warning()
    assert (warning is None) is (record.retraction is None)
    if warning is not None:
        assert f'<p class="warning">{escape(warning)}</p>' in html


def test_review_row_names_the_unit_or_who_raised_it() -> None:
    assert ReviewRow.of({"code": "E140", "message": "m", "unit_id": "u-1"}).by == "u-1"
    row = ReviewRow.of(
        {"code": "E191", "message": "gone", "raised_by": "catalog", "raised_at": "t"}
    )
    assert (row.code, row.by, row.raised_at) == ("E191", "catalog", "t")


def test_status_values_are_the_strings_the_page_prints() -> None:
    assert [s.value for s in UnitStatus] == [
        "unchanged",
        "added",
        "modified",
        "renamed",
        "reformatted",
        "deleted",
    ]
    assert CatalogState.NOT_CHECKED == "not checked" and f"{CatalogState.CLEAN}" == "clean"
