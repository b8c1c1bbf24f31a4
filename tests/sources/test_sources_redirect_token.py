"""Issue 27 G8: a redirect target's path can carry a signed token (a CDN or S3 download
link); what is recorded of the fetch (``acquisitions/*.json``, ``sources.json``, the log)
and printed names only the target's origin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cli_runner import tht
from source_helpers import SIGNED_TOKEN, DocServer, use_remote_sources


def test_a_redirect_targets_path_token_is_never_recorded_or_printed(
    workspace: Path, http_server: DocServer, net_installation: Callable[..., Path]
) -> None:
    use_remote_sources(workspace, [{"kind": "http", "url": http_server.base + "/redirect-signed"}])
    result = tht(workspace, "refresh", installation=net_installation())
    assert result.exit_code == 0, result.stdout
    assert any(r["path"].startswith("/signed/") for r in http_server.requests)  # it was followed
    assert SIGNED_TOKEN not in result.stdout + result.stderr
    recorded = [p for p in (workspace / "evidence").rglob("*") if p.is_file()]
    acquisitions = [p for p in recorded if "acquisitions" in p.parts]
    assert acquisitions, "nothing was recorded: the case proves nothing"
    assert [p for p in recorded if SIGNED_TOKEN.encode() in p.read_bytes()] == []
    origin = http_server.base.split("//", 1)[1]
    assert any(f'//{origin}/"'.encode() in p.read_bytes() for p in acquisitions)
