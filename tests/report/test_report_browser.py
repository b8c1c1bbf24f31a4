"""The review page in a real browser: units, filters, comparisons and decide commands."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from report_helpers import LAB, WARD, copy_fixture, invoke, ok, record, rich_workspace, tht

from evidence_tool.archive.local import LocalEvidenceArchive


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The rich workspace and its page (built once: the tests only read them)."""
    ws = rich_workspace(tmp_path_factory.mktemp("rich") / "ws")
    page = Path(ok(tht(ws, "report"))["path"])
    return ws, page


def _open(probe: Any, page: Path) -> Any:
    probe.page.goto(page.as_uri())
    return probe.page


def _visible_ids(page: Any) -> set[str]:
    ids = page.eval_on_selector_all(
        "#unit-list > article.unit:not([hidden])", "els => els.map(e => e.id)"
    )
    return {i.removeprefix("unit-") for i in ids}


def _wait_applied(page: Any, before: int) -> None:
    # A function, not a string: the page's CSP forbids eval of string predicates.
    page.wait_for_function(
        "before => +(document.getElementById('filters').dataset.applied || 0) > before", arg=before
    )


def _filter(page: Any, **selects: str) -> None:
    """Set select filters (one change event each) and wait until the script applied them."""
    for name, value in selects.items():
        before = page.eval_on_selector("#filters", "f => +(f.dataset.applied || 0)")
        page.select_option(f"#f-{name}", value)
        _wait_applied(page, before)


def _search(page: Any, text: str) -> None:
    before = page.eval_on_selector("#filters", "f => +(f.dataset.applied || 0)")
    page.fill("#f-q", text)
    _wait_applied(page, before)


def _text(ws: Path, uid: str) -> str:
    files = LocalEvidenceArchive(ws).scan().files
    return next(f.data.decode() for f in files if f.unit is not None and f.unit.id == uid)


def _units(ws: Path) -> list[Any]:
    return [f.unit for f in LocalEvidenceArchive(ws).scan().files if f.unit is not None]


def test_every_unit_is_listed_with_its_facts(probe: Any, rich: tuple[Path, Path]) -> None:
    ws, path = rich
    page = _open(probe, path)
    ids = {u.id for u in _units(ws)} | {"evidence:admin:patient-merge"}  # deleted, still shown
    assert _visible_ids(page) == ids
    assert page.inner_text("#shown") == f"{len(ids)} of {len(ids)} units shown"
    card = page.locator("[id='unit-evidence:admission-date']")
    assert "modified" in card.get_attribute("data-status")
    text = card.text_content()
    assert "Admission date versus admission timestamp" in text
    assert "clinical.admissions" in text and "manual by" in text
    deleted = page.locator("[id='unit-evidence:admin:patient-merge']")
    assert deleted.get_attribute("data-status") == "deleted"
    lab = page.locator("[id='unit-evidence:lab:hemolysed-specimens']")
    assert "document: fs:evidence/source/lab-handbook.md" in lab.text_content()
    assert not probe.console_errors and not probe.page_errors


def test_filters_narrow_the_list(probe: Any, rich: tuple[Path, Path]) -> None:
    ws, path = rich
    page = _open(probe, path)
    units = _units(ws)
    _filter(page, kind="formula")
    assert _visible_ids(page) == {u.id for u in units if u.kind == "formula"}
    _filter(page, kind="", language="it")
    italian = {u.id for u in units if u.metadata.language.split("-")[0] == "it"}
    assert _visible_ids(page) == italian and 0 < len(italian) < len(units)
    _filter(page, language="", status="modified")
    assert _visible_ids(page) == {"evidence:admission-date"}
    _filter(page, status="deleted")
    assert _visible_ids(page) == {"evidence:admin:patient-merge"}
    _filter(page, status="", table="lab.results")
    assert _visible_ids(page) == {
        u.id for u in units if "lab.results" in u.metadata.applies_to.tables
    }
    _filter(page, table="", provenance="document")
    assert _visible_ids(page) == {
        "evidence:lab:hemolysed-specimens",
        "evidence:lab:turnaround-time",
        "evidence:lab:turnaround-minutes",
    }
    _filter(page, provenance="")
    _search(page, "NIGHT")  # the search ignores case
    night = {u.id for u in units if "night" in _text(ws, u.id).lower()}
    assert _visible_ids(page) == night and len(night) > 1
    _filter(page, kind="domain")
    assert _visible_ids(page) == {"evidence:admission-date"}
    page.click("#filters button[type=reset]")
    page.wait_for_function(
        "() => document.querySelectorAll('#unit-list > article.unit[hidden]').length === 0"
    )
    assert page.input_value("#f-q") == ""
    assert not probe.console_errors and not probe.page_errors


def test_a_comparison_shows_both_sides_and_the_excerpts_in_the_source(
    probe: Any, rich: tuple[Path, Path]
) -> None:
    ws, path = rich
    page = _open(probe, path)
    comparison = record(ws, LAB)["comparison"]
    article = page.locator(f"article.comparison[data-source-id='{comparison['source_id']}']")
    assert article.get_attribute("data-revision") == comparison["revision"]
    local = article.locator(".local").first.inner_text()
    proposed = article.locator(".proposed").first.inner_text()
    assert "falsely high" in local and "falsely increased" not in local
    assert "falsely increased" in proposed and "falsely high" not in proposed
    assert article.locator("pre.diff del").first.inner_text() == "high"
    assert article.locator("pre.diff ins").first.inner_text() == "increased"
    facts = article.locator("dl.meta").inner_text()
    assert "evidence:lab:turnaround-minutes" in facts  # replace would retire it
    marks = article.locator("pre.source-text mark").all_inner_texts()
    excerpts = [x for p in comparison["proposed"] for x in p["excerpts"]]
    assert excerpts and marks
    for excerpt in excerpts:
        assert any(excerpt in m for m in marks), f"excerpt not highlighted: {excerpt!r}"
    assert not probe.console_errors and not probe.page_errors


def test_the_decide_commands_carry_the_comparison_revision_and_run(
    probe: Any, tmp_path: Path
) -> None:
    ws = copy_fixture(tmp_path / "my ws")  # a space: the commands must quote the root
    refreshed = ok(tht(ws, "refresh"))
    revisions = {s["source_id"]: s["revision"] for s in refreshed["sources"]}
    page = _open(probe, Path(ok(tht(ws, "report"))["path"]))
    articles = page.locator("article.comparison")
    assert articles.count() == 2
    for sid, revision in revisions.items():
        article = page.locator(f"article.comparison[data-source-id='{sid}']")
        for decision in ("keep", "replace"):
            command = article.locator(f"pre.command[data-decision='{decision}']").inner_text()
            assert shlex.split(command) == [
                "tht",
                "workspace",
                "evidence",
                "decide",
                "--workspace-root",
                str(ws),
                "--source-id",
                sid,
                "--revision",
                revision,
                "--decision",
                decision,
            ]
    for locator in (LAB, WARD):  # the page, refresh --json and sources.json agree
        rec = record(ws, locator)
        assert rec["comparison"]["revision"] == revisions[rec["source_id"]]
    ward = record(ws, WARD)["source_id"]
    keep = page.locator(f"article.comparison[data-source-id='{ward}'] pre.command").first
    result = invoke([*shlex.split(keep.inner_text())[1:], "--json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json["result"]["decision"] == "keep"
