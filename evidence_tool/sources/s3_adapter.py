"""S3 sources through boto3 (extra ``s3``): list the objects under a prefix, get each.

Credentials come only from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``): no shared config files, no
instance metadata lookups.  Without them requests are unsigned (public
buckets).  The endpoint's host must be allowed by the network policy; only its
public form (scheme, host, port, path) is used, so userinfo or a token in it is
never sent, and botocore's messages are scrubbed of URLs' credentials.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from evidence_tool.archive.clock import now
from evidence_tool.errors import SourceError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources.identity import Acquired, Candidate, acquired, s3_locator, source_id
from evidence_tool.sources.policy import NetworkPolicy, SourceSpec
from evidence_tool.workspace.redact import MalformedUrl, public_url, scrub

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


def discover(sources: list[SourceSpec], policy: NetworkPolicy) -> list[Candidate]:
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
