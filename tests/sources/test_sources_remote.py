"""Remote sources: credentials stay out of files and output; retry reads no source."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from source_helpers import DRAFT, DocServer, decide, record, refresh, tht, use_remote_sources

SECRET = "marker-secret-7f3a9c"


def _grep(ws: Path, needle: str) -> list[str]:
    hits = []
    for path in ws.rglob("*"):
        if path.is_file() and needle.encode() in path.read_bytes():
            hits.append(path.relative_to(ws).as_posix())
    return hits


def _http_record(ws: Path) -> dict:
    return next(r for r in _registry_records(ws) if r["kind"] == "http")


def _registry_records(ws: Path) -> list[dict]:
    import json

    return list(json.loads((ws / "evidence/.local/sources.json").read_text())["sources"].values())


def test_credentials_from_the_environment_never_reach_files_or_output(
    workspace: Path,
    http_server: DocServer,
    net_installation: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", SECRET)
    http_server.secret = SECRET
    url = http_server.base + "/secret.md?token=${DOCS_TOKEN}&lang=en"
    url = url.replace("http://", "http://reader:${DOCS_TOKEN}@")
    # lang is listed as safe: it stays in the locator; the token never does.
    use_remote_sources(
        workspace, [{"kind": "http", "url": url, "safe_query_params": ["lang", "token"]}]
    )
    inst = net_installation()
    outputs = [refresh(workspace, installation=inst)]
    assert outputs[0].exit_code == 0, outputs[0].stdout
    assert http_server.requests[-1]["auth"] is not None  # the secret did reach the server
    rec = _http_record(workspace)
    assert rec["locator"] == f"http:{http_server.base}/secret.md?lang=en"
    outputs.append(decide(workspace, rec["locator"], "replace", installation=inst))
    assert outputs[-1].exit_code == 0, outputs[-1].stdout
    outputs.append(tht(workspace, "sources", "list", installation=inst))
    outputs.append(tht(workspace, "sources", "show", rec["source_id"], installation=inst))
    # A failing request names the URL, never the secret.
    http_server.secret = "rotated"
    outputs.append(refresh(workspace, installation=inst))
    assert outputs[-1].exit_code == 5
    assert "401" in outputs[-1].json["errors"][0]["message"]
    for out in outputs:
        assert SECRET not in out.stdout and SECRET not in out.stderr
    assert _grep(workspace, SECRET) == []
    assert _grep(workspace, "reader:") == ["workspace.yaml"]  # the template, not the secret


def test_literal_credentials_in_the_descriptor_are_stripped(
    workspace: Path, http_server: DocServer, net_installation: Callable[..., Path]
) -> None:
    http_server.secret = SECRET
    url = http_server.base.replace("http://", f"http://reader:{SECRET}@")
    use_remote_sources(workspace, [{"kind": "http", "url": f"{url}/secret.md?token={SECRET}"}])
    result = refresh(workspace, installation=net_installation())
    assert result.exit_code == 0, result.stdout
    assert SECRET not in result.stdout
    # Only the operator's own descriptor holds it (a warning case for the docs).
    assert _grep(workspace, SECRET) == ["workspace.yaml"]


def test_s3_source_with_credentials_from_the_environment(
    workspace: Path,
    moto_endpoint: str,
    net_installation: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDMARKER0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    s3 = boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket="psd-docs")
    s3.put_object(Bucket="psd-docs", Key="evidence/remote.md", Body=DRAFT.encode())
    s3.put_object(Bucket="psd-docs", Key="evidence/notes.txt", Body=b"not markdown")
    source = {
        "kind": "s3",
        "bucket": "psd-docs",
        "prefix": "evidence/",
        "endpoint_url": moto_endpoint,
        "region": "us-east-1",
    }
    use_remote_sources(workspace, [source])
    refused = refresh(workspace)  # no installation: no host is allowed, nothing is listed
    assert refused.exit_code == 5 and "allowed_hosts" in refused.json["errors"][0]["message"]
    inst = net_installation()
    result = refresh(workspace, installation=inst)
    assert result.exit_code == 0, result.stdout
    line = next(s for s in result.json["result"]["sources"] if s["kind"] == "s3")
    assert line["locator"] == "s3:psd-docs/evidence/remote.md"
    assert line["proposed"] == ["evidence:remote:discharge"]
    rec = record(workspace, "s3:psd-docs/evidence/remote.md")
    decided = decide(workspace, rec["locator"], "replace", installation=inst)
    assert decided.exit_code == 0, decided.stdout
    assert rec["title"] == "Remote glossary"
    for out in (result, decided):
        assert SECRET not in out.stdout and "AKIDMARKER0001" not in out.stdout
    assert _grep(workspace, SECRET) == [] and _grep(workspace, "AKIDMARKER0001") == []
    # The object disappears: the source is missing, its unit stays.
    s3.delete_object(Bucket="psd-docs", Key="evidence/remote.md")
    again = refresh(workspace, installation=inst)
    gone = next(s for s in again.json["result"]["sources"] if s["kind"] == "s3")
    assert gone["status"] == "missing"
    assert (workspace / "evidence/curated/glossary/remote-discharge.md").exists()


def test_activation_failure_keeps_the_decision_and_retry_reads_no_source(
    workspace: Path, tmp_path: Path, http_server: DocServer, net_installation: Callable[..., Path]
) -> None:
    flag = tmp_path / "index-down"
    script = tmp_path / "activate.py"
    script.write_text(f"import os, sys\nsys.exit(1 if os.path.exists({str(flag)!r}) else 0)\n")
    inst = net_installation(
        activation={"kind": "command", "command": [sys.executable, str(script)]}
    )
    use_remote_sources(workspace, [{"kind": "http", "url": http_server.base + "/doc.md"}])
    assert refresh(workspace, installation=inst).exit_code == 0
    rec = _http_record(workspace)
    flag.write_text("down")
    failed = decide(workspace, rec["locator"], "replace", installation=inst)
    assert failed.exit_code == 4, failed.stdout
    assert failed.json["errors"][0]["code"] == "E401"
    saved = _http_record(workspace)
    assert saved["decision"]["status"] == "pending_activation"
    assert saved["adopted_hash"] == rec["comparison"]["content_hash"]
    assert (workspace / "evidence/curated/glossary/remote-discharge.md").exists()
    state = (workspace / "evidence/.local/state.yaml").read_text()
    assert "pending: null" not in state
    flag.unlink()
    requests = len(http_server.requests)
    retried = tht(
        workspace, "decide", "--source-id", rec["source_id"], "--retry", installation=inst
    )
    assert retried.exit_code == 0, retried.stdout
    assert retried.json["result"]["consolidation"]["status"] == "activated"
    assert len(http_server.requests) == requests
    assert _http_record(workspace)["decision"]["status"] == "activated"
    assert "pending: null" in (workspace / "evidence/.local/state.yaml").read_text()
