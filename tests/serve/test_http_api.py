"""The plain JSON API against a real server on 127.0.0.1, with a real HTTP client."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
from serve_helpers import REPO, child_env, free_port, http_server, tht_argv

ENVELOPE = json.loads((REPO / "schemas/cli/envelope.schema.json").read_text("utf-8"))
KNOWN = "evidence:clinical:giornate-di-degenza"


def _checked(response: object) -> dict[str, object]:
    body = response.json()  # type: ignore[attr-defined]
    jsonschema.validate(body, ENVELOPE)
    assert body["ok"] is (response.status_code == 200), body  # type: ignore[attr-defined]
    return body  # type: ignore[no-any-return]


def _codes(body: dict[str, object]) -> list[str]:
    return [e["code"] for e in body["errors"]]  # type: ignore[attr-defined, index]


def test_the_json_api_answers_each_verb_in_the_cli_envelope(served: Path) -> None:
    with http_server(served) as server, server.client() as http:
        health = _checked(http.get("/v1/health"))
        (only,) = health["result"]["workspaces"]  # type: ignore[index]
        revision = only["active"]
        assert only["workspace"] == "psd-clinical" and len(revision) == 64

        found = _checked(http.get("/v1/search", params={"query": "degenza", "limit": 3}))
        result = found["result"]
        assert result["revision"] == revision and result["mode"] == "bm25"  # type: ignore[index]
        hits = result["hits"]  # type: ignore[index]
        assert 1 <= len(hits) <= 3
        first = hits[0]
        assert {"id", "kind", "title", "text", "applies_to", "score", "mode", "provenance"} <= set(
            first
        )
        assert first["provenance"]["kind"] in ("manual", "document")
        assert first["text"] and not first["text"].startswith("---")  # the body, no frontmatter

        unit = _checked(http.get(f"/v1/units/{KNOWN}"))["result"]
        assert unit["status"] == "active" and unit["unit"]["id"] == KNOWN  # type: ignore[index]
        assert unit["revision"] == revision  # type: ignore[index]

        cited = {"cited": [KNOWN, "evidence:clinical:made-up"], "retrieved": [KNOWN]}
        checked = _checked(http.post("/v1/cite-check", json=cited))["result"]
        assert checked["grounded"] == [KNOWN]  # type: ignore[index]
        assert checked["ungrounded"] == ["evidence:clinical:made-up"]  # type: ignore[index]

        about = _checked(http.get("/v1/evidence-for", params={"tables": "admissions"}))
        by_kind = about["result"]["by_kind"]  # type: ignore[index]
        assert about["result"]["resolved"] == {"admissions": ["clinical.admissions"]}  # type: ignore[index]
        assert sum(len(v) for v in by_kind.values()) == about["result"]["count"] > 0  # type: ignore[index]


def test_bad_input_is_a_coded_error_never_a_traceback(served: Path) -> None:
    cases = [
        ("/v1/search", {"query": "x" * 2001}, 400, "E901"),
        ("/v1/search", {"query": "degenza", "limit": "0"}, 400, "E901"),
        ("/v1/search", {"query": "degenza", "limit": "101"}, 400, "E901"),
        ("/v1/search", {"query": "degenza", "limit": "many"}, 400, "E901"),
        ("/v1/search", {"query": "degenza", "mode": "psychic"}, 400, "E901"),
        ("/v1/search", {}, 400, "E901"),
        ("/v1/search", {"query": "degenza", "workspace": "elsewhere"}, 404, "E904"),
        ("/v1/units/not an id", {}, 400, "E901"),
        ("/v1/units/EVIDENCE:Upper:case", {}, 400, "E901"),
        ("/v1/units/evidence:clinical:giornate-di-degenze", {}, 404, "E904"),
    ]
    with http_server(served) as server, server.client() as http:
        for path, params, status, code in cases:
            response = http.get(path, params=params)
            body = _checked(response)
            assert (response.status_code, _codes(body)) == (status, [code]), (path, params, body)
            assert "Traceback" not in response.text
            # A service cannot run a command with --help: the hint names the tools' page.
            (hint,) = [e["hint"] for e in body["errors"]]  # type: ignore[union-attr, index]
            assert "--help" not in hint and "command line" not in hint, (path, hint)
        near = http.get("/v1/units/evidence:clinical:giornate-di-degenze").json()
        assert (
            KNOWN in near["result"]["candidates"] and "did you mean" in near["errors"][0]["message"]
        )
        for raw in (b"not json", b"[1, 2]", b'{"cited": "one-string"}', b"{" * 300_000):
            body = _checked(http.post("/v1/cite-check", content=raw))
            assert _codes(body) == ["E901"], raw[:20]
    assert len(cases) == 10


def test_a_set_token_is_required_and_401_never_says_which_part_was_wrong(served: Path) -> None:
    with http_server(served, token="s3cret-token") as server:
        bodies = []
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Basic s3cret-token"},
            {"Authorization": "Bearer s3cret-token-and-more"},
            {"Authorization": "s3cret-token"},
        ):
            with server.client(token=None) as http:
                for path in ("/v1/health", "/v1/search?query=degenza", "/mcp"):
                    response = http.get(path, headers=headers)
                    assert response.status_code == 401, (path, headers)
                    bodies.append({**response.json(), "command": None})
        assert len(bodies) == 15
        assert all(b == bodies[0] for b in bodies), "a 401 must not tell one mistake from another"
        assert _codes(bodies[0]) == ["E920"] and "s3cret" not in json.dumps(bodies[0])
        with server.client() as http:
            assert http.get("/v1/search", params={"query": "degenza"}).status_code == 200


def test_a_non_loopback_bind_without_a_token_is_refused(served: Path) -> None:
    argv = tht_argv(
        "workspace", "evidence", "serve", "--transport", "http", "--host", "0.0.0.0",
        "--port", str(free_port()), "--workspace-root", str(served),
    )  # fmt: skip
    done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "THT_SERVE_TOKEN" in done.stderr and "Traceback" not in done.stderr


def test_sigterm_stops_the_server_cleanly(served: Path) -> None:
    with http_server(served) as server:
        with server.client() as http:
            assert http.get("/v1/health").status_code == 200
        code = server.stop()
    assert code == 0
    stderr = server.process.stderr.read() if not server.process.stderr.closed else ""  # type: ignore[union-attr]
    assert "Traceback" not in stderr


def test_a_port_in_use_is_a_coded_error(served: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = tht_argv(
            "workspace", "evidence", "serve", "--transport", "http", "--port", str(port),
            "--workspace-root", str(served),
        )  # fmt: skip
        done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "E901" in done.stderr and "--port" in done.stderr and "Traceback" not in done.stderr
