"""Secrets in source URLs (issue 14 items 5-7), attacked as an outsider would.

A URL is stored and printed as scheme, host, port and path only; a query value
survives only when the descriptor lists its parameter under
``safe_query_params``; userinfo and ``${ENV}`` values are never stored or
printed.  Every channel is searched: each file under the workspace (the
report, ``log.jsonl``, ``acquisitions/``, the archive's objects), stdout and
stderr of ``--json`` and text runs.  Only ``workspace.yaml`` may hold a literal
secret: the operator wrote it there.

The server is a real HTTP server on 127.0.0.1 and S3 is moto's server mode.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import string
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pytest
from cli_runner import CliResult, invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.sources.identity import http_locator

REPO = Path(__file__).resolve().parents[2]
SOAK = os.environ.get("THT_SOAK") == "1"
EXAMPLES = 200 if SOAK else 8

DRAFT = """---
title: Leak probe {n}
---

---
schema_version: 4
id: evidence:probe:item-{n}
kind: glossary
language: en
purposes: [disambiguation]
---

# Probe item {n}

## Definition

Probe document number {n}, served to test redaction.
"""


class _Handler(BaseHTTPRequestHandler):
    server: _ProbeServer

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        auth = self.headers.get("Authorization") or ""
        self.server.seen.append(unquote(self.path) + " " + auth)
        if auth.startswith("Basic "):
            self.server.seen.append(base64.b64decode(auth[6:]).decode("utf-8", "replace"))
        if parts.path.startswith("/hop/"):  # a redirect whose target carries a signed query
            target = self.server.redirect_to
            self._send(302, b"", {"Location": target})
            return
        if parts.path.startswith("/denied/"):
            self._send(403, b"no")
            return
        number = int(hashlib.sha256(parts.path.encode()).hexdigest()[:6], 16)
        self._send(200, DRAFT.format(n=number).encode())


class _ProbeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[str] = []
        self.redirect_to = "/"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[_ProbeServer]:
    srv = _ProbeServer()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def _actor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "probe-operator")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)


def _fresh_workspace(dest: Path) -> Path:
    shutil.copytree(
        REPO / "fixtures" / "workspace",
        dest,
        symlinks=True,
        ignore=shutil.ignore_patterns(".evidence-cache"),
    )
    return dest


def _use_sources(ws: Path, sources: list[dict[str, Any]]) -> None:
    desc = {
        "descriptor_version": 4,
        "id": "psd-clinical",
        "name": "PSD clinical",
        "default_language": "it",
        "evidence": {"descriptor_version": 2, "sources": sources},
    }
    (ws / "workspace.yaml").write_text(json.dumps(desc, indent=2))


def _installation(folder: Path) -> Path:
    path = folder / "probe-installation.yaml"
    network = {"allowed_hosts": ["127.0.0.1"], "timeout_s": 5, "max_bytes": 1 << 20}
    path.write_text(json.dumps({"installation_version": 1, "evidence": {"network": network}}))
    return path


def _run(ws: Path, inst: Path | None, *args: str, as_json: bool = True) -> CliResult:
    pre = ["--installation", str(inst)] if inst else []
    tail = ["--json"] if as_json else []
    if args[0] == "config":
        return invoke([*pre, *args, "--workspace-root", str(ws), *tail])
    return invoke([*pre, "workspace", "evidence", *args, "--workspace-root", str(ws), *tail])


def _forms(secret: str) -> set[str]:
    """Every spelling under which a secret could be written: raw, percent- and form-encoded."""
    return {secret, quote(secret, safe=""), quote(secret), quote(secret).replace("%20", "+")}


def _leaks(ws: Path, outputs: list[CliResult], secrets: list[str]) -> list[str]:
    """Where any secret appears: files under the workspace (but workspace.yaml) and outputs."""
    hits = []
    channels: list[tuple[str, bytes]] = []
    for path in sorted(ws.rglob("*")):
        rel = path.relative_to(ws).as_posix()
        if path.is_file() and rel != "workspace.yaml":
            channels.append((rel, path.read_bytes()))
    for n, out in enumerate(outputs):
        channels += [(f"stdout#{n}", out.stdout.encode()), (f"stderr#{n}", out.stderr.encode())]
    for secret in secrets:
        for form in _forms(secret):
            hits += [f"{name}: {form}" for name, data in channels if form.encode() in data]
    return hits


# -- credential-shaped query parameters, userinfo, ${ENV} in the path ---------------------

# Names the old deny-list did not know, none of them the ones in the issue text.
QUERY_NAMES = [
    "bearer",
    "client-assertion",
    "oauth_verifier",
    "PHPSESSID",
    "Ocp-Apim-Subscription-Key",
    "hmac",
    "sharing_code",
    "k",
]


def test_attack_credential_shaped_params_userinfo_and_env_path_reach_no_channel(
    tmp_path: Path, server: _ProbeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _fresh_workspace(tmp_path / "ws")
    inst = _installation(tmp_path)
    secrets = {
        name: f"Qv{n}x{hashlib.sha256(name.encode()).hexdigest()[:14]}"
        for n, name in enumerate(QUERY_NAMES)
    }
    env_value = "EnvPathValue-93kd71"
    monkeypatch.setenv("PROBE_SHARE", env_value)
    sources = [
        {"kind": "http", "url": f"{server.base}/q/{n}.md?{name}={value}&v=7"}
        for n, (name, value) in enumerate(secrets.items())
    ]
    # ';' as a separator, userinfo with a literal password, an ${ENV} value in the path.
    sources.append({"kind": "http", "url": f"{server.base}/semi.md?part=2;sid=SemiSecret77a"})
    sources.append(
        {"kind": "http", "url": server.base.replace("//", "//ops:LiteralPw55z@") + "/ui.md"}
    )
    sources.append({"kind": "http", "url": f"{server.base}/vault/${{PROBE_SHARE}}/doc.md"})
    # A listed parameter keeps its value: the allow-list is per source.
    sources.append(
        {"kind": "http", "url": f"{server.base}/kept.md?edition=2027&sig2=NotKept31q",
         "safe_query_params": ["edition"]}
    )  # fmt: skip
    _use_sources(ws, sources)
    all_secrets = [*secrets.values(), "SemiSecret77a", "LiteralPw55z", env_value, "NotKept31q"]
    outputs = [_run(ws, inst, "refresh")]
    assert outputs[0].exit_code == 0, outputs[0].stdout + outputs[0].stderr
    # The secrets did reach the server: the requests were made with them.
    seen = "\n".join(server.seen)
    assert all(s in seen for s in all_secrets), [s for s in all_secrets if s not in seen]
    lines = outputs[0].json["result"]["sources"]
    assert len(lines) >= len(sources)
    locators = {line["locator"] for line in lines if line["kind"] == "http"}
    assert f"http:{server.base}/kept.md?edition=2027" in locators
    assert f"http:{server.base}/q/0.md" in locators
    assert f"http:{server.base}/vault/${{PROBE_SHARE}}/doc.md" in locators
    kept = next(x for x in lines if x["locator"].endswith("/kept.md?edition=2027"))
    decided = _decide(ws, inst, kept["source_id"])
    outputs.append(decided)
    assert decided.exit_code == 0, decided.stdout
    outputs += [
        _run(ws, inst, "refresh"),
        _run(ws, inst, "refresh", as_json=False),
        _run(ws, inst, "refresh", "--dry-run"),
        _run(ws, inst, "sources", "list"),
        _run(ws, inst, "sources", "list", as_json=False),
        _run(ws, inst, "sources", "show", kept["source_id"]),
        _run(ws, inst, "config", "show"),
        _run(ws, inst, "config", "show", as_json=False),
        _run(ws, inst, "report"),
        _run(ws, inst, "log"),
        _run(ws, inst, "export"),
        _run(ws, inst, "show", kept["proposed"][0]),
        _run(ws, inst, "show", kept["proposed"][0], as_json=False),
    ]
    assert all(o.exit_code == 0 for o in outputs), [o.stdout[:300] for o in outputs if o.exit_code]
    assert (ws / "evidence/.local/log.jsonl").is_file()
    assert (ws / ".evidence-cache/report.html").is_file()
    assert list((ws / "evidence/.local/acquisitions").rglob("*.json"))
    assert _leaks(ws, outputs, all_secrets) == []
    # The literal userinfo's user name is not a secret by itself, but it is never stored.
    assert _leaks(ws, outputs, ["ops:"]) == []


def _decide(ws: Path, inst: Path, sid: str) -> CliResult:
    registry = json.loads((ws / "evidence/.local/sources.json").read_text())
    revision = registry["sources"][sid]["comparison"]["revision"]
    return _run(
        ws, inst, "decide", "--source-id", sid, "--revision", revision, "--decision", "replace"
    )


def test_attack_redirect_to_a_signed_query_and_failing_hops_quote_no_secret(
    tmp_path: Path, server: _ProbeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _fresh_workspace(tmp_path / "ws")
    inst = _installation(tmp_path)
    hop_secret, env_secret = "HopSig-5571aa", "PathEnv-0c2b9e"
    monkeypatch.setenv("PROBE_PATH_KEY", env_secret)
    server.redirect_to = f"/landing/final.md?X-Signed-Grant={hop_secret}&part=3"
    _use_sources(ws, [{"kind": "http", "url": f"{server.base}/hop/${{PROBE_PATH_KEY}}/a.md"}])
    outputs = [_run(ws, inst, "refresh")]
    assert outputs[0].exit_code == 0, outputs[0].stdout
    meta = [
        json.loads(p.read_text()) for p in (ws / "evidence/.local/acquisitions").rglob("*.json")
    ]
    meta = [m for m in meta if m["locator"].startswith("http:")]
    # A redirect target is recorded as its origin only: its path may be a token too (G8).
    assert [m["final_url"] for m in meta] == [f"{server.base}/"]
    # A hop that fails names the redirect target without its query, and no ${ENV} value.
    server.redirect_to = f"/denied/{env_secret}/x.md?grant={hop_secret}"
    _use_sources(ws, [{"kind": "http", "url": f"{server.base}/hop/${{PROBE_PATH_KEY}}/b.md"}])
    failed = _run(ws, inst, "refresh")
    outputs += [failed, _run(ws, inst, "refresh", as_json=False)]
    assert failed.exit_code == 5 and failed.json["errors"][0]["code"] == "E501", failed.stdout
    assert "403" in failed.json["errors"][0]["message"]
    assert _leaks(ws, outputs, [hop_secret, env_secret]) == []


# -- the property: random names, values, userinfo; every channel ----------------------------

_NAME = st.text(string.ascii_letters + string.digits + "_-.", min_size=1, max_size=12)
_VALUE = st.text(string.ascii_letters + string.digits, min_size=10, max_size=18).map(
    lambda v: "Z" + v  # never only hex digits, so it cannot hide in a hash by chance
)
_PASSWORD = st.text(
    string.ascii_letters + string.digits + "-._~!$&'()*+,;=", min_size=8, max_size=16
).map(lambda p: "Pw" + p)  # a marker: a bare "availabl" is in the fixture's own text


@st.composite
def _secret_urls(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(_NAME, min_size=1, max_size=4, unique=True))
    values = draw(st.lists(_VALUE, min_size=len(names), max_size=len(names), unique=True))
    with_userinfo = draw(st.booleans())
    sep = draw(st.sampled_from(["&", ";"]))
    return {
        "params": list(zip(names, values, strict=True)),
        "user": draw(st.text(string.ascii_lowercase, min_size=3, max_size=8))
        if with_userinfo
        else None,
        "password": draw(_PASSWORD) if with_userinfo else None,
        "env": draw(_VALUE),
        "sep": sep,
        "path": draw(st.text(string.ascii_lowercase, min_size=1, max_size=8)),
    }


@pytest.fixture(scope="module")
def moto_bucket(moto_endpoint: str) -> str:
    """A bucket with one draft, for sources whose endpoint_url carries credentials."""
    import boto3

    s3 = boto3.client(
        "s3",
        endpoint_url=moto_endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDPROBE0042",
        aws_secret_access_key="probe-secret-key-Xq7",
    )
    s3.create_bucket(Bucket="probe-prop")
    s3.put_object(Bucket="probe-prop", Key="docs/p.md", Body=DRAFT.format(n=4242).encode())
    return moto_endpoint


@pytest.fixture(scope="module")
def probe_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("secret-property")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=_secret_urls())
def test_property_no_secret_value_reaches_any_output_channel(
    case: dict[str, Any],
    server: _ProbeServer,
    moto_bucket: str,
    probe_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = probe_home / hashlib.sha256(repr(case).encode()).hexdigest()[:12]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    ws = _fresh_workspace(folder / "ws")
    inst = _installation(folder)
    monkeypatch.setenv("PROBE_RANDOM_ENV", case["env"])
    netloc = server.base.split("//", 1)[1]
    if case["user"]:
        netloc = f"{case['user']}:{case['password']}@{netloc}"
    query = case["sep"].join(f"{quote(n)}={v}" for n, v in case["params"])
    url = f"http://{netloc}/{case['path']}/${{PROBE_RANDOM_ENV}}/doc.md?{query}"
    # The same credentials and parameters in an S3 endpoint_url (moto server mode).
    endpoint = moto_bucket.replace("//", f"//{case['user']}:{case['password']}@", 1)
    endpoint = (endpoint if case["user"] else moto_bucket) + f"/?{query}"
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "AKIDPROBE0042"),
        ("AWS_SECRET_ACCESS_KEY", "probe-secret-key-Xq7"),
    ):
        monkeypatch.setenv(name, value)
    for name in ("AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.setenv(name, "/nonexistent")
    s3 = {"kind": "s3", "bucket": "probe-prop", "prefix": "docs/", "endpoint_url": endpoint}
    _use_sources(ws, [{"kind": "http", "url": url}, {**s3, "region": "us-east-1"}])
    outputs = [_run(ws, inst, "refresh")]
    assert outputs[0].exit_code == 0, outputs[0].stdout + outputs[0].stderr
    (line,) = [x for x in outputs[0].json["result"]["sources"] if x["kind"] == "http"]
    assert [x["locator"] for x in outputs[0].json["result"]["sources"] if x["kind"] == "s3"] == [
        "s3:probe-prop/docs/p.md"
    ]
    assert line["locator"] == f"http:{server.base}/{case['path']}/${{PROBE_RANDOM_ENV}}/doc.md"
    outputs += [
        _run(ws, inst, "sources", "list"),
        _run(ws, inst, "sources", "list", as_json=False),
        _run(ws, inst, "config", "show"),
        _run(ws, inst, "report"),
        _run(ws, inst, "refresh", as_json=False),
    ]
    assert (ws / ".evidence-cache/report.html").is_file()
    secrets = [v for _, v in case["params"]] + [case["env"], "probe-secret-key-Xq7"]
    if case["password"]:
        secrets.append(case["password"])
    seen = "\n".join(server.seen[-20:])
    assert case["env"] in seen  # the request really carried the secret
    assert _leaks(ws, outputs, secrets) == [], url


# -- malformed URLs: coded, quoting nothing -----------------------------------------------

_BREAK = st.sampled_from(["#", "/", "?"])


@st.composite
def _malformed(draw: st.DrawFn) -> tuple[str, str]:
    """(a URL that cannot be what it says, the secret it holds)."""
    secret = draw(_PASSWORD.filter(lambda p: "%" not in p))
    kind = draw(st.sampled_from(["password", "digits", "port", "port-number"]))
    if kind == "digits":  # parses "fine": host 'reader', port 12, the rest in path/query/fragment
        password = draw(st.sampled_from(["12", "8443", "1"])) + draw(_BREAK) + "Jq" + secret
        return f"http://reader:{password}@127.0.0.1:8080/doc.md", password
    if kind == "password":  # a literal password with a reserved character in it
        cut = draw(st.integers(0, len(secret)))
        # Both halves carry a marker, so each can be searched for without false alarms.
        password = secret[:cut] + draw(_BREAK) + "Jq" + secret[cut:]
        return f"http://reader:{password}@127.0.0.1:8080/doc.md", password
    if kind == "port":
        port = draw(st.text(string.ascii_letters + string.digits, min_size=1, max_size=6).filter(
            lambda p: not p.isdigit()))  # fmt: skip
    else:
        port = str(draw(st.integers(65536, 10**7)))
    return f"http://reader:{secret}@127.0.0.1:{port}/doc.md?grant={secret}", secret


@pytest.fixture(scope="module")
def malformed_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _fresh_workspace(tmp_path_factory.mktemp("malformed") / "ws")


@settings(
    max_examples=EXAMPLES * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=_malformed())
def test_attack_malformed_url_is_a_coded_error_quoting_nothing(
    case: tuple[str, str], malformed_ws: Path
) -> None:
    url, secret = case
    _use_sources(malformed_ws, [{"kind": "http", "url": url}])
    inst = _installation(malformed_ws.parent)
    outputs = [
        _run(malformed_ws, inst, "refresh"),
        _run(malformed_ws, inst, "refresh", as_json=False),
    ]
    for out in outputs:
        assert out.exit_code == 5, out.stdout + out.stderr
        assert "Traceback" not in out.stderr
    assert re.fullmatch(r"E5\d\d", outputs[0].json["errors"][0]["code"])
    shown = _run(malformed_ws, inst, "config", "show")
    assert shown.exit_code == 0, shown.stdout
    outputs.append(shown)
    pieces = [p for p in re.split(r"[#/?]", secret) if len(p) >= 4 or p.startswith("Jq")]
    assert _leaks(malformed_ws, outputs, [secret, *pieces]) == []


def test_attack_url_with_whitespace_in_the_password_is_refused_without_quoting_it(
    workspace: Path, tmp_path: Path
) -> None:
    _use_sources(workspace, [{"kind": "http", "url": "http://ops:Spaced Out4491@127.0.0.1/doc.md"}])
    out = _run(workspace, _installation(tmp_path), "refresh")
    assert out.exit_code not in (0, 70), out.stdout
    assert "Out4491" not in out.stdout + out.stderr


def test_two_urls_differing_only_in_unlisted_params_are_refused(
    workspace: Path, tmp_path: Path, server: _ProbeServer
) -> None:
    _use_sources(
        workspace,
        [
            {"kind": "http", "url": f"{server.base}/same.md?volume=1"},
            {"kind": "http", "url": f"{server.base}/same.md?volume=2"},
        ],
    )
    out = _run(workspace, _installation(tmp_path), "refresh")
    assert out.exit_code == 5 and out.json["errors"][0]["code"] == "E501", out.stdout
    assert "safe_query_params" in out.json["errors"][0]["message"]
    assert not (workspace / "evidence/.local/sources.json").exists()


# -- identity stays stable where it can ---------------------------------------------------


_LEGACY_SECRET = re.compile(
    r"^(x-amz-.*|x-goog-.*|token|access_token|id_token|auth|authorization|api[-_]?key|key|"
    r"apikey|secret|password|passwd|pwd|signature|sig|credential|awsaccesskeyid|expires|"
    r"session[-_]?token|client_secret)$",
    re.IGNORECASE,
)


def _legacy_locator(url: str) -> str:
    """The locator as the deny-list version computed it (the oracle for existing workspaces)."""
    from urllib.parse import parse_qsl, urlencode, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not _LEGACY_SECRET.match(k) and "${" not in v
    ]
    return "http:" + urlunsplit(
        (parts.scheme.lower(), netloc.lower(), parts.path or "/", urlencode(query), "")
    )


@settings(max_examples=EXAMPLES * 5, deadline=None)
@given(
    host=st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5}){1,2}", fullmatch=True),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    path=st.from_regex(r"(/[A-Za-z0-9._~-]{1,8}){0,3}", fullmatch=True),
    params=st.lists(st.tuples(_NAME, st.text(string.ascii_letters + string.digits, max_size=6)), max_size=3, unique_by=lambda p: p[0]),
    secret_params=st.lists(st.sampled_from(["token", "X-Amz-Signature", "api_key", "sig"]), max_size=2, unique=True),
    scheme=st.sampled_from(["http", "https", "HTTPS"]),
)  # fmt: skip
def test_source_id_is_unchanged_when_every_kept_param_is_listed_safe(
    host: str,
    port: int | None,
    path: str,
    params: list[tuple[str, str]],
    secret_params: list[str],
    scheme: str,
) -> None:
    netloc = host + (f":{port}" if port else "")
    pairs = [*params, *[(s, "Secr3tValue") for s in secret_params]]
    query = "&".join(f"{quote(k)}={quote(v)}" for k, v in pairs)
    url = f"{scheme}://u:pw@{netloc}{path}" + (f"?{query}" if query else "")
    # What the deny-list kept is what the operator lists as safe to keep the same id.
    safe = [k for k, _ in params if not _LEGACY_SECRET.match(k) and k not in secret_params]
    assert http_locator(url, safe) == _legacy_locator(url)
    if not params:  # no query worth keeping: the id never depended on the safe list
        assert http_locator(url) == _legacy_locator(url)


def test_the_locator_of_the_documented_example_is_unchanged() -> None:
    url = "https://reader:${DOCS_TOKEN}@docs.example.org/psd/glossary.md?token=${DOCS_TOKEN}"
    assert http_locator(url) == "http:https://docs.example.org/psd/glossary.md"


# -- S3 endpoint_url credentials (moto server mode) -----------------------------------------


def test_attack_s3_endpoint_url_credentials_never_appear_in_e501(
    tmp_path: Path, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _fresh_workspace(tmp_path / "ws")
    inst = _installation(tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDPROBE0042")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "probe-secret-key-Xq7")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    user_secret, token = "EndpointPw-61c0", "SessTok-AAd81f"
    moto_host = moto_endpoint.split("//", 1)[1]
    port = moto_host.rsplit(":", 1)[1]
    endpoints = [
        # moto answers: the bucket does not exist.
        f"http://admin:{user_secret}@{moto_host}/?X-Amz-Security-Token={token}",
        # nobody listens: botocore's message names the endpoint URL it tried.
        f"http://admin:{user_secret}@127.0.0.1:1/?X-Amz-Security-Token={token}&p={port}",
    ]
    outputs = []
    for endpoint in endpoints:
        _use_sources(
            ws,
            [
                {
                    "kind": "s3",
                    "bucket": "no-such-probe",
                    "endpoint_url": endpoint,
                    "region": "us-east-1",
                }
            ],
        )
        for as_json in (True, False):
            out = _run(ws, inst, "refresh", as_json=as_json)
            assert out.exit_code == 5, out.stdout + out.stderr
            outputs.append(out)
        assert outputs[-2].json["errors"][0]["code"] == "E501"
        outputs.append(_run(ws, inst, "config", "show"))
    assert _leaks(ws, outputs, [user_secret, token, "probe-secret-key-Xq7"]) == []


def test_attack_malformed_s3_endpoint_url_is_coded(tmp_path: Path) -> None:
    ws = _fresh_workspace(tmp_path / "ws")
    endpoint = "http://admin:Pw/Slash9917@127.0.0.1:9/"
    _use_sources(ws, [{"kind": "s3", "bucket": "probe-docs", "endpoint_url": endpoint}])
    out = _run(ws, _installation(tmp_path), "refresh")
    assert out.exit_code == 5 and out.json["errors"][0]["code"] == "E501", out.stdout
    assert "Slash9917" not in out.stdout + out.stderr


def test_the_documented_safe_query_params_example_gives_the_documented_locators() -> None:
    from evidence_tool.workspace.descriptor import parse_descriptor

    doc = (REPO / "docs/sources.md").read_text()
    block = re.search(r"```yaml\n(# workspace.yaml\n.*?)```", doc, re.S)
    assert block is not None
    data = parse_descriptor(block.group(1).encode(), "workspace.schema.json", "docs/sources.md")
    http = [s for s in data["evidence"]["sources"] if s["kind"] == "http"]
    locators = [http_locator(s["url"], s.get("safe_query_params", ())) for s in http]
    assert locators == [
        "http:https://docs.example.org/psd/glossary.md",
        "http:https://docs.example.org/psd/handbook?edition=2027&format=md",
    ]
    assert all(f"`{loc}`" in doc for loc in locators)


def test_attack_an_internal_error_quoting_a_url_prints_no_credential(
    tmp_path: Path, server: _ProbeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 70 prints a traceback: a bug whose message quotes a URL must not carry its secrets."""
    from evidence_tool.sources import remote

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug while reading https://ops:Tb9SecretPw@h.example/x?grant=Tb9Grant")

    monkeypatch.setattr(remote, "fetch_url", broken)
    ws = _fresh_workspace(tmp_path / "ws")
    _use_sources(ws, [{"kind": "http", "url": f"{server.base}/any.md"}])
    outputs = [_run(ws, _installation(tmp_path), "refresh", as_json=j) for j in (True, False)]
    assert [o.exit_code for o in outputs] == [70, 70]
    assert "Traceback" in outputs[1].stderr and "h.example/x" in outputs[1].stderr
    assert _leaks(ws, outputs, ["Tb9SecretPw", "Tb9Grant"]) == []
