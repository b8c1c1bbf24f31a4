"""Issue 15, Messages: a source id prefix that names no single source is error E904,
which lists the candidates (short id and locator) instead of answering "no pending
comparison" (E304) as if the id had been right.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from source_helpers import LAB, WARD, record, refresh, tht, tree_state

from evidence_tool.errors import CODES


def _refreshed(ws: Path) -> dict[str, str]:
    assert refresh(ws).exit_code == 0
    return {loc: record(ws, loc)["source_id"] for loc in (LAB, WARD)}


def _assert_candidates(message: str, ids: dict[str, str]) -> None:
    for locator, sid in ids.items():
        assert f"{sid[:12]} {locator}" in message, message


@pytest.mark.parametrize("length", [1, 3, 5])
def test_decide_with_a_too_short_prefix_says_so_and_lists_candidates(
    workspace: Path, length: int
) -> None:
    ids = _refreshed(workspace)
    revision = record(workspace, LAB)["comparison"]["revision"]
    before = tree_state(workspace)
    prefix = ids[LAB][:length]  # a real prefix of a real source, only too short

    result = tht(
        workspace, "decide", "--source-id", prefix, "--revision", revision, "--decision", "keep"
    )

    assert result.exit_code == CODES["E904"].exit_code == 2, result.stdout
    [error] = result.json["errors"]
    assert error["code"] == "E904"
    assert f"source id {prefix!r} is too short" in error["message"]
    assert "at least 6 characters" in error["message"]
    # The candidates are the sources the prefix matches: here the one meant.
    _assert_candidates(error["message"], {LAB: ids[LAB]})
    assert "no pending comparison" not in error["message"]
    assert tree_state(workspace) == before


@pytest.mark.parametrize("given", ["ffff0000", "0" * 64, "lab-handbook"])
def test_decide_with_an_unknown_id_lists_candidates(workspace: Path, given: str) -> None:
    ids = _refreshed(workspace)
    revision = record(workspace, WARD)["comparison"]["revision"]

    result = tht(
        workspace, "decide", "--source-id", given, "--revision", revision, "--decision", "replace"
    )

    assert result.exit_code == 2, result.stdout
    [error] = result.json["errors"]
    assert error["code"] == "E904"
    assert f"source id {given!r} is not a known source" in error["message"]
    _assert_candidates(error["message"], ids)


def test_decide_retry_and_sources_show_use_the_same_answer(workspace: Path) -> None:
    ids = _refreshed(workspace)

    retry = tht(workspace, "decide", "--source-id", "ab", "--retry")
    show = tht(workspace, "sources", "show", "0123456789")

    for result in (retry, show):
        assert result.exit_code == 2, result.stdout
        [error] = result.json["errors"]
        assert error["code"] == "E904"
        _assert_candidates(error["message"], ids)


def test_a_unique_prefix_of_six_characters_still_decides(workspace: Path) -> None:
    ids = _refreshed(workspace)
    revision = record(workspace, WARD)["comparison"]["revision"]

    result = tht(
        workspace, "decide", "--source-id", ids[WARD][:6], "--revision", revision,
        "--decision", "keep",
    )  # fmt: skip

    assert result.exit_code == 0, result.stdout
    assert result.json["result"]["source_id"] == ids[WARD]


def test_a_known_source_with_an_unknown_revision_stays_E304(workspace: Path) -> None:
    ids = _refreshed(workspace)

    result = tht(
        workspace, "decide", "--source-id", ids[LAB], "--revision", "1" * 64, "--decision", "keep"
    )

    assert result.exit_code == 3
    assert result.json["errors"][0]["code"] == "E304"


@pytest.mark.parametrize("given", ["4", "b7c", "0123456789ab"])
def test_refresh_with_a_bad_source_id_lists_the_discovered_candidates(
    workspace: Path, given: str
) -> None:
    """Before any refresh the registry is empty: the candidates are what discovery found."""
    before = tree_state(workspace)
    result = refresh(workspace, "--source-id", given)
    assert result.exit_code == 2, result.stdout
    assert [e["code"] for e in result.json["errors"]] == ["E904"]
    message = result.json["errors"][0]["message"]
    assert ("too short" in message) == (len(given) < 6), message
    assert LAB in message and WARD in message, message
    assert tree_state(workspace) == before


@pytest.mark.parametrize("length", [8, 12, 40])
def test_decide_takes_a_revision_prefix_like_a_source_id_prefix(
    workspace: Path, length: int
) -> None:
    """Issue 28: --revision takes a unique prefix (from 8 hex digits), as --source-id does."""
    ids = _refreshed(workspace)
    revision = record(workspace, LAB)["comparison"]["revision"]
    done = tht(workspace, "decide", "--source-id", ids[LAB][:6], "--revision",
               revision[:length].upper() if length == 12 else revision[:length],
               "--decision", "keep")  # fmt: skip
    assert done.exit_code == 0, done.stdout
    assert done.json["result"]["revision"] == revision


def test_a_wrong_or_too_short_revision_names_the_pending_one(workspace: Path) -> None:
    ids = _refreshed(workspace)
    revision = record(workspace, LAB)["comparison"]["revision"]
    before = tree_state(workspace)
    for given in (revision[:7], "0" * 12 if revision[0] != "0" else "1" * 12):
        refused = tht(workspace, "decide", "--source-id", ids[LAB][:6], "--revision", given,
                      "--decision", "keep")  # fmt: skip
        error = refused.json["errors"][0]
        assert error["code"] == "E304"
        assert f"the pending one is {revision[:12]}" in error["message"]
    assert tree_state(workspace) == before
