"""The document limit counts what one refresh reads, so E503's advice (--source-id) works
(issue 14 item 9d), and an S3 listing is refused, never silently truncated."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from source_helpers import WARD, record, refresh, registry, tht, tree_state, use_remote_sources

from evidence_tool.sources.identity import s3_locator, source_id


def test_attack_refresh_one_source_among_more_than_the_limit(workspace: Path) -> None:
    for n in range(237):
        (workspace / f"evidence/incoming/note-{n:04}.md").write_text(f"# note {n}\n")
    before = tree_state(workspace)
    everything = refresh(workspace)
    assert everything.exit_code == 5 and everything.json["errors"][0]["code"] == "E503"
    assert "--source-id" in everything.json["errors"][0]["message"]
    assert tree_state(workspace) == before
    assert tht(workspace, "sources", "list").json["result"]["sources"] == []
    one = refresh(workspace, "--source-id", source_id(WARD)[:9])
    assert one.exit_code == 0, one.stdout
    assert [s["locator"] for s in one.json["result"]["sources"]] == [WARD]
    assert record(workspace, WARD)["comparison"] is not None


def _bucket(
    endpoint: str, name: str, count: int, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    import boto3

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDLISTING")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "listing-secret")
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket=name)
    for n in range(count):
        s3.put_object(Bucket=name, Key=f"memos/m{n:04}.md", Body=f"# memo {n}\n".encode())
    return {"kind": "s3", "bucket": name, "prefix": "memos/", "endpoint_url": endpoint}


def test_attack_refresh_the_last_object_of_a_prefix_longer_than_the_limit(
    workspace: Path,
    moto_endpoint: str,
    net_installation: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_remote_sources(workspace, [_bucket(moto_endpoint, "memo-archive", 213, monkeypatch)])
    inst = net_installation()
    before = tree_state(workspace)
    everything = refresh(workspace, installation=inst)
    assert everything.exit_code == 5 and everything.json["errors"][0]["code"] == "E503"
    assert tree_state(workspace) == before
    last = s3_locator("memo-archive", "memos/m0212.md")  # sorted after the first 200
    one = refresh(workspace, "--source-id", source_id(last)[:10], installation=inst)
    assert one.exit_code == 0, one.stdout
    assert [(s["locator"], s["status"]) for s in one.json["result"]["sources"]] == [
        (last, "compared")
    ]
    # The other 212 objects were neither read nor marked missing.
    assert [r["locator"] for r in registry(workspace)["sources"].values()] == [last]


def test_a_prefix_listing_more_than_the_listing_bound_is_refused_not_truncated(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evidence_tool.errors import SourceError
    from evidence_tool.sources import remote
    from evidence_tool.sources.policy import NetworkPolicy, specs_of

    (spec,) = specs_of([_bucket(moto_endpoint, "memo-overflow", 12, monkeypatch)])
    policy = NetworkPolicy(allowed_hosts=("127.0.0.1",), max_listed=9)
    with pytest.raises(SourceError) as refused:
        remote.discover_s3([spec], policy)
    assert refused.value.code == "E503" and "narrow the prefix" in str(refused.value)
    roomy = NetworkPolicy(allowed_hosts=("127.0.0.1",), max_listed=12)
    assert len(remote.discover_s3([spec], roomy)) == 12
