"""The installation's network policy and the per-refresh bounds (SPEC 6.1).

Without an installation descriptor no host is allowed: remote sources fail
with E501 until an operator names their hosts.  The descriptor's ``evidence.sources``
entries (schema-checked when it is loaded) each meet JSON once here and become a
``SourceSpec``, so an adapter reads typed fields, not keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonValue
from evidence_tool.record import AnyObject, Record, field, field_of

KEY = "evidence.sources"


class SourceSpec(Record, frozen=True):
    """One entry; fields a kind does not use keep their defaults."""

    index: int  # its place in evidence.sources: messages name it
    kind: str = ""  # http | s3 | import (filesystem sources need no entry)
    url: str = ""
    safe_query_params: tuple[str, ...] = ()
    bucket: str = ""
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    format: str = ""
    path: str = ""
    # An importer's options as written (a JSON boundary: each importer checks its own).
    options: AnyObject = field(default_factory=dict)
    language: str | None = None
    title: str | None = None

    @property
    def key(self) -> str:
        return f"{KEY}[{self.index}]"


def specs_of(entries: Iterable[Mapping[str, JsonValue]]) -> list[SourceSpec]:
    """Every entry of ``evidence.sources``, in order (the descriptor's schema checked
    their shapes)."""
    return [
        field_of(SourceSpec, {f"{KEY}[{n}]": {**e, "index": n}}, f"{KEY}[{n}]", DescriptorError)
        for n, e in enumerate(entries)
    ]


MAX_DOCUMENTS = 200
# Objects one S3 prefix may list: --source-id must find any of them, so the listing is
# never cut at MAX_DOCUMENTS (a truncated listing would mark present sources missing).
MAX_LISTED = 10_000
MAX_TOTAL_BYTES = 100 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class NetworkPolicy:
    allowed_hosts: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_bytes: int = DEFAULT_MAX_BYTES
    max_documents: int = MAX_DOCUMENTS
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_listed: int = MAX_LISTED

    @classmethod
    def from_settings(cls, settings: Mapping[str, JsonValue]) -> NetworkPolicy:
        """From the installation's ``evidence.network`` section (already schema-checked)."""
        hosts = settings.get("allowed_hosts")
        timeout = settings.get("timeout_s", DEFAULT_TIMEOUT_S)
        max_bytes = settings.get("max_bytes", DEFAULT_MAX_BYTES)
        return cls(
            tuple(str(h).lower() for h in hosts) if isinstance(hosts, list) else (),
            float(timeout) if isinstance(timeout, int | float) else DEFAULT_TIMEOUT_S,
            int(max_bytes) if isinstance(max_bytes, int | float) else DEFAULT_MAX_BYTES,
        )

    def allows(self, host: str | None, port: int | None = None) -> bool:
        """Exact host, ``host:port``, or a ``*.suffix`` entry; everything else is refused."""
        if not host:
            return False
        host = host.lower()
        for entry in self.allowed_hosts:
            if entry.startswith("*.") and host.endswith(entry[1:]):
                return True
            if entry == host or (port is not None and entry == f"{host}:{port}"):
                return True
        return False
