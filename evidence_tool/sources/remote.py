"""Remote sources: HTTP through httpx (a read-only GET), S3 through boto3 (extra ``s3``:
the objects under a prefix, each got), both under the installation's network policy.

Redirects are followed by hand so that each hop is checked (allowed host, no
https -> http downgrade, at most five).  The body is decoded here, not by
httpx, so ``max_bytes`` counts decoded bytes while streaming and a gzip bomb
stops at the limit instead of expanding in memory.  What is printed or
recorded is the public URL (``workspace.redact.public_url``) of the template,
never of the expanded URL; secrets from ``${ENV}`` references, userinfo and
query values are also scrubbed from every library message.

S3 credentials come only from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``): no shared config files, no instance
metadata lookups; without them requests are unsigned (public buckets).  The endpoint's
host must be allowed by the network policy; only its public form (scheme, host, port,
path) is used, so userinfo or a token in it is never sent, and botocore's messages are
scrubbed of URLs' credentials.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Collection
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from evidence_tool.archive.clock import now
from evidence_tool.errors import SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.identity import (
    Acquired,
    Candidate,
    acquired,
    expand_env,
    http_locator,
    s3_locator,
    source_id,
)
from evidence_tool.sources.policy import MAX_REDIRECTS, NetworkPolicy, SourceSpec
from evidence_tool.workspace.redact import (
    MalformedUrl,
    public_url,
    query_pairs,
    scrub,
)

_REDIRECTS = (301, 302, 303, 307, 308)


def _secrets(url: str, env_values: list[str], safe_params: Collection[str]) -> list[str | None]:
    """Every secret value of the expanded URL: scrubbed from a message before it is printed."""
    parts = urlsplit(url)
    query = [v for k, v in query_pairs(parts.query) if k not in safe_params]
    return [parts.username, parts.password, *env_values, *query]


def _shown(url: str, first: str, hop: int) -> str:
    """The printable form of a hop: the descriptor's own public URL, then redirect targets.

    A redirect target is shown and stored as its origin only (``https://host:port/``):
    its path and query were written by the server, not the operator, and often carry a
    signed token (``/download/<token>/file.csv``), which must not reach
    ``acquisitions/*.json``, the log or a message."""
    if hop == 0:
        return first
    try:
        public = urlsplit(public_url(url))
    except MalformedUrl as exc:
        raise SourceError(f"{first}: a redirect points to a malformed URL ({exc})") from None
    return urlunsplit((public.scheme, public.netloc, "/", "", ""))


def _decoder(encoding: str, shown: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if enc == "deflate":
        return zlib.decompressobj()
    raise SourceError(f"{shown}: unsupported Content-Encoding {enc!r}")


def _too_big(shown: str, limit: int) -> SourceError:
    return SourceError(
        f"{shown}: the document is larger than max_bytes ({limit} bytes, counted decoded); "
        "raise evidence.network.max_bytes if it is expected",
        code="E503",
    )


def _read_body(resp: Any, limit: int, deadline: float, shown: str) -> bytes:
    """Decoded body, refused past ``limit`` decoded bytes or past the total deadline."""
    length = resp.headers.get("content-length")
    encoded = resp.headers.get("content-encoding", "")
    if length and length.isdigit() and not encoded and int(length) > limit:
        raise _too_big(shown, limit)
    dec = _decoder(encoded, shown)
    out = bytearray()
    try:
        for chunk in resp.iter_raw():  # no chunk_size: re-chunking would wait for 64 KiB
            if time.monotonic() > deadline:
                raise SourceError(f"{shown}: the download took longer than the timeout")
            data = chunk
            while data:
                if dec is None:
                    out += data
                    break
                out += dec.decompress(data, limit + 1 - len(out))
                if len(out) > limit:
                    raise _too_big(shown, limit)
                data = dec.unconsumed_tail
            if len(out) > limit:
                raise _too_big(shown, limit)
        if dec is not None:
            out += dec.flush()
    except zlib.error:
        raise SourceError(f"{shown}: the compressed body is corrupt") from None
    if len(out) > limit:
        raise _too_big(shown, limit)
    return bytes(out)


if TYPE_CHECKING:
    import ssl


def _tls_context() -> ssl.SSLContext:
    import ssl  # on the first https fetch: every command that starts imports this module

    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or None)


def _check_hop(url: str, previous: str | None, policy: NetworkPolicy, shown: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise SourceError(f"{shown}: only http and https URLs are fetched")
    if previous and urlsplit(previous).scheme == "https" and parts.scheme == "http":
        raise SourceError(f"{shown}: a redirect from https to http is refused")
    if not policy.allows(parts.hostname, parts.port):
        raise SourceError(
            f"{shown}: host {parts.hostname!r} is not in the installation's "
            "evidence.network.allowed_hosts"
        )


def fetch_url(
    template: str, policy: NetworkPolicy, safe_params: Collection[str] = ()
) -> tuple[bytes, JsonObject]:
    """(decoded bytes, credential-free provenance) of one read-only GET.

    What is printed or recorded comes from the template (``${NAME}`` stays a name),
    never from the expanded URL, and every message is scrubbed of the values used.
    """
    import httpx

    first_shown = public_url(template, safe_params)
    url, env_values = expand_env(template)
    secrets = _secrets(url, env_values, safe_params)
    deadline = time.monotonic() + policy.timeout_s
    previous: str | None = None
    headers = {"Accept-Encoding": "gzip, deflate", "User-Agent": "evidence-tool refresh"}
    try:
        # trust_env=False: no proxy or .netrc credentials picked up behind the operator's back;
        # a private CA bundle named by SSL_CERT_FILE is still honoured.
        with httpx.Client(
            follow_redirects=False,
            timeout=policy.timeout_s,
            trust_env=False,
            headers=headers,
            verify=_tls_context(),
        ) as client:
            for hop in range(MAX_REDIRECTS + 1):
                shown = _shown(url, first_shown, hop)
                _check_hop(url, previous, policy, shown)
                with client.stream("GET", url) as resp:
                    if resp.status_code in _REDIRECTS:
                        target = resp.headers.get("location")
                        if not target:
                            raise SourceError(f"{shown}: redirect without a Location")
                        previous, url = url, urljoin(url, target)
                        continue
                    if resp.status_code != 200:
                        raise SourceError(f"{shown}: HTTP {resp.status_code}; nothing recorded")
                    raw = _read_body(resp, policy.max_bytes, deadline, shown)
                    meta = {
                        "url": first_shown,
                        "final_url": shown,
                        "status": resp.status_code,
                        "etag": resp.headers.get("etag"),
                        "content_type": resp.headers.get("content-type"),
                        "size": len(raw),
                        "fetched_at": now(),
                    }
                    return raw, meta
            raise SourceError(f"{first_shown}: more than {MAX_REDIRECTS} redirects")
    except SourceError as exc:
        raise SourceError(scrub(exc.message, secrets), code=exc.code) from None
    except httpx.TimeoutException:
        raise SourceError(f"{first_shown}: timed out after {policy.timeout_s:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise SourceError(scrub(f"{first_shown}: {type(exc).__name__}: {exc}", secrets)) from None


def _where(index: int) -> str:
    return f"evidence.sources[{index}].url in workspace.yaml"


def _locators(sources: list[SourceSpec]) -> dict[int, str]:
    """The locator of each ``kind: http`` entry by its index; two entries that would share
    one (their URLs differ only in parameters that are not kept) are refused."""
    out: dict[int, str] = {}
    first: dict[str, int] = {}
    for index, spec in enumerate(sources):
        if spec.kind != "http":
            continue
        try:
            locator = http_locator(spec.url, spec.safe_query_params)
        except MalformedUrl as exc:
            raise SourceError(f"{_where(index)} is malformed: {exc}") from None
        other = first.setdefault(locator, index)
        if other != index and sources[other].url != spec.url:
            raise SourceError(
                f"{_where(other)} and {_where(index)} both become {locator}: their URLs "
                "differ only in query parameters that are not stored; list the one that "
                "tells them apart under safe_query_params (only if its value is no secret)"
            )
        out[index] = locator
    return out


def discover_http(sources: list[SourceSpec], policy: NetworkPolicy) -> list[Candidate]:
    """One candidate per ``kind: http`` entry of the Evidence descriptor (no request yet)."""
    found = []
    for index, locator in _locators(sources).items():
        spec = sources[index]
        template = spec.url
        sid = source_id(locator)

        def fetch(
            template: str = template, locator: str = locator, spec: SourceSpec = spec
        ) -> Acquired:
            raw, meta = fetch_url(template, policy, spec.safe_query_params)
            return acquired(locator, "http", raw, meta, str(meta["url"]), spec.language, spec.title)

        found.append(Candidate(sid, locator, "http", fetch))
    return found


_CREDENTIAL_VARS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID")


def _endpoint(spec: SourceSpec, index: int) -> str | None:
    """The public form of ``endpoint_url``: S3 credentials come from the environment only,
    so userinfo or a token in the endpoint's query is never sent, stored or printed."""
    endpoint = spec.endpoint_url
    if endpoint is None:
        return None
    try:
        return public_url(endpoint)
    except MalformedUrl as exc:
        raise SourceError(
            f"evidence.sources[{index}].endpoint_url in workspace.yaml is malformed: {exc}"
        ) from None


def _client(spec: SourceSpec, policy: NetworkPolicy, endpoint: str | None) -> Any:
    try:
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config
    except ImportError:
        raise SourceError("S3 sources need boto3: install evidence-tool[s3]") from None
    key_id = os.environ.get("AWS_ACCESS_KEY_ID")
    secret = os.environ.get("AWS_SECRET_ACCESS_KEY")
    config = Config(
        connect_timeout=policy.timeout_s,
        read_timeout=policy.timeout_s,
        retries={"max_attempts": 1, "mode": "standard"},
        signature_version=None if (key_id and secret) else UNSIGNED,
    )
    # An explicit botocore session with no profile files keeps credentials to the environment.
    session = boto3.session.Session(
        aws_access_key_id=key_id or None,
        aws_secret_access_key=secret or None,
        aws_session_token=os.environ.get("AWS_SESSION_TOKEN") or None,
        region_name=spec.region or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
    )
    client = session.client("s3", endpoint_url=endpoint, config=config)
    host = urlsplit(client.meta.endpoint_url)
    if not policy.allows(host.hostname, host.port):
        raise SourceError(
            f"S3 endpoint host {host.hostname!r} is not in the installation's "
            "evidence.network.allowed_hosts"
        )
    return client


def _error(bucket: str, key: str | None, exc: Exception) -> SourceError:
    # botocore messages may quote the endpoint URL it tried, with its signed query.
    where = f"s3:{bucket}/{key}" if key else f"s3:{bucket}"
    message = f"{where}: {type(exc).__name__}: {exc}"
    return SourceError(scrub(message, [os.environ.get(name) for name in _CREDENTIAL_VARS]))


def _get(client: Any, bucket: str, key: str, policy: NetworkPolicy) -> tuple[bytes, JsonObject]:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        obj = client.get_object(Bucket=bucket, Key=key)
        body = obj["Body"]
        chunks, size = [], 0
        while chunk := body.read(65536):
            size += len(chunk)
            if size > policy.max_bytes:
                body.close()
                raise SourceError(
                    f"s3:{bucket}/{key} is larger than max_bytes ({policy.max_bytes} bytes)",
                    code="E503",
                )
            chunks.append(chunk)
    except (BotoCoreError, ClientError) as exc:
        raise _error(bucket, key, exc) from None
    meta = {
        "bucket": bucket,
        "key": key,
        "status": obj.get("ResponseMetadata", {}).get("HTTPStatusCode"),
        "etag": obj.get("ETag"),
        "version_id": obj.get("VersionId"),
        "size": size,
        "fetched_at": now(),
    }
    return b"".join(chunks), meta


def discover_s3(sources: list[SourceSpec], policy: NetworkPolicy) -> list[Candidate]:
    """One candidate per ``*.md`` object under each configured bucket/prefix (lists now)."""
    found = []
    for index, spec in enumerate(sources):
        if spec.kind != "s3":
            continue
        bucket, prefix = spec.bucket, spec.prefix
        client = _client(spec, policy, _endpoint(spec, index))
        keys = _list(client, bucket, prefix, policy)
        for key in keys:
            locator = s3_locator(bucket, key)

            def fetch(
                key: str = key,
                locator: str = locator,
                client: Any = client,
                bucket: str = bucket,
                spec: SourceSpec = spec,
            ) -> Acquired:
                raw, meta = _get(client, bucket, key, policy)
                return acquired(locator, "s3", raw, meta, locator, spec.language)

            found.append(Candidate(source_id(locator), locator, "s3", fetch))
    return found


def _list(client: Any, bucket: str, prefix: str, policy: NetworkPolicy) -> list[str]:
    from botocore.exceptions import BotoCoreError, ClientError

    keys: list[str] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                if item["Key"].endswith(".md"):
                    keys.append(item["Key"])
            if len(keys) > policy.max_listed:
                raise SourceError(
                    f"s3:{bucket}/{prefix} lists more than {policy.max_listed} *.md objects; "
                    "narrow the prefix in workspace.yaml",
                    code="E503",
                )
    except (BotoCoreError, ClientError) as exc:
        raise _error(bucket, None, exc) from None
    return sorted(keys)
