"""Identity, normalization, draft splitting and excerpts: the pure parts of SPEC 6.1-6.2."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence_tool.errors import SourceError
from evidence_tool.sources.identity import (
    content_hash,
    document_meta,
    expand_env,
    http_locator,
    normalize,
    source_id,
    split_units,
)
from evidence_tool.sources.policy import NetworkPolicy
from evidence_tool.sources.records import Identifier
from evidence_tool.sources.refiner import field_excerpts
from evidence_tool.unit import parse

REPO = Path(__file__).resolve().parents[2]
HANDBOOK = (REPO / "fixtures/workspace/evidence/source/lab-handbook.md").read_text()


def test_source_id_is_the_sha256_of_the_canonical_locator() -> None:
    locator = "fs:evidence/source/lab-handbook.md"
    assert source_id(locator) == hashlib.sha256(locator.encode()).hexdigest()


@pytest.mark.parametrize(
    ("url", "safe", "expected"),
    [
        ("https://u:p@Docs.Example.org/a.md", [], "https://docs.example.org/a.md"),
        ("https://h/a.md?token=abc&lang=en", [], "https://h/a.md"),
        ("https://h/a.md?token=abc&lang=en", ["lang"], "https://h/a.md?lang=en"),
        ("https://h/a.md?X-Amz-Signature=s&X-Amz-Credential=c&v=2", ["v"], "https://h/a.md?v=2"),
        ("https://h:8443/a.md?api_key=${KEY}", [], "https://h:8443/a.md"),
        ("https://h/a.md?q=${SECRET}", ["q"], "https://h/a.md"),
        ("https://h/a.md?a=1;token=t", ["a"], "https://h/a.md?a=1"),
        ("https://h/a.md#part", [], "https://h/a.md"),
        (
            "https://h.example/list/me@example.org/a.md",
            [],
            "https://h.example/list/me@example.org/a.md",
        ),
        ("http://localhost:8080/u/@team/a.md", [], "http://localhost:8080/u/@team/a.md"),
    ],
)
def test_locators_keep_only_listed_query_parameters(
    url: str, safe: list[str], expected: str
) -> None:
    assert http_locator(url, safe) == "http:" + expected


def test_env_references_are_expanded_and_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("T", "a/b@c")
    assert expand_env("https://u:${T}@h/x") == ("https://u:a%2Fb%40c@h/x", ["a/b@c"])
    monkeypatch.delenv("T")
    with pytest.raises(SourceError, match="not set"):
        expand_env("https://h/x?token=${T}")


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")))
def test_normalization_is_idempotent_and_line_ending_blind(text: str) -> None:
    lf = normalize(text.encode(), "t")
    assert normalize(lf.encode(), "t") == lf
    crlf = "\ufeff" + lf.replace("\n", "\r\n")
    assert content_hash(normalize(crlf.encode(), "t")) == content_hash(lf)


def test_non_utf8_is_an_acquisition_failure() -> None:
    with pytest.raises(SourceError):
        normalize(b"\xff\xfe", "x")


def test_handbook_splits_into_its_metadata_and_three_units() -> None:
    front, chunks = split_units(HANDBOOK)
    assert front is not None and "doi: 10.5555/psd.lab.2026" in front
    assert [parse(chunk).id for _, chunk in chunks] == [
        "evidence:lab:hemolysed-specimens",
        "evidence:lab:turnaround-time",
        "evidence:lab:turnaround-minutes",
    ]
    meta = document_meta(HANDBOOK)
    assert meta.title == "PSD laboratory handbook"
    assert meta.identifier == Identifier("doi", "10.5555/psd.lab.2026")


def test_a_draft_starting_with_a_unit_has_no_document_metadata() -> None:
    front, chunks = split_units(HANDBOOK[HANDBOOK.index("---\nschema_version") :])
    assert front is None and len(chunks) == 3


def test_excerpts_are_verbatim_field_texts() -> None:
    for _, chunk in split_units(HANDBOOK)[1]:
        unit = parse(chunk)
        excerpts = field_excerpts(chunk, unit)
        assert excerpts and all(e in HANDBOOK for e in excerpts)
    formula = split_units(HANDBOOK)[1][2][1]
    sql = field_excerpts(formula, parse(formula))[-1]
    assert sql.startswith("```sql") and "date_part" in sql


def test_allowed_hosts() -> None:
    policy = NetworkPolicy(("docs.example.org", "*.example.net", "127.0.0.1:9000"))
    assert policy.allows("Docs.Example.org")
    assert policy.allows("a.example.net") and not policy.allows("example.net.evil.org")
    assert policy.allows("127.0.0.1", 9000) and not policy.allows("127.0.0.1", 9001)
    assert not NetworkPolicy().allows("docs.example.org")


def test_a_document_frontmatter_giving_a_key_twice_is_a_problem_not_a_guess() -> None:
    """Which title or identifier a document has must not be the YAML loader's choice."""
    text = HANDBOOK.replace(
        "doi: 10.5555/psd.lab.2026", "doi: 10.5555/psd.lab.2026\ndoi: 10.5555/other.2027", 1
    )
    assert text != HANDBOOK
    meta = document_meta(text)
    assert meta.identifier is None and meta.title is None
    assert len(meta.problems) == 1 and "doi" in meta.problems[0], meta.problems
