"""What initialize and consolidate report (SPEC.md 5): their status and result."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, NamedTuple

from evidence_tool.archive.derive import Changes
from evidence_tool.archive.records import ClosedItem
from evidence_tool.errors import EvidenceWarning
from evidence_tool.jsonvalue import JsonObject, View


class CatalogRecord(NamedTuple):
    """What the catalog step checked against, as a consolidation records it."""

    entry: JsonObject  # the manifest's "catalog" entry: names the fingerprint by its sha256
    data: bytes  # the fingerprint object's bytes
    checked: dict[str, str]  # the units it checked (id -> content hash): those recorded


class ConsolidateStatus(StrEnum):
    """What initialize or consolidate did (for a dry run: what it would do)."""

    INITIALIZED = "initialized"
    ALREADY_INITIALIZED = "already_initialized"
    UNCHANGED = "unchanged"
    REINDEXED = "reindexed"  # active revision kept, its missing index rebuilt
    ACTIVATED = "activated"
    PENDING_ACTIVATION = "pending_activation"
    WOULD_ACTIVATE = "would_activate"
    WOULD_STAY_PENDING = "would_stay_pending"
    WOULD_MIGRATE = "would_migrate"  # a legacy workspace's dry run: conversion comes first


@dataclass
class ConsolidateResult(View):
    status: ConsolidateStatus
    revision: str
    previous: str | None
    changes: Changes
    wrote: bool
    dry_run: bool = False
    activation_error: str | None = None
    closed_review_items: list[ClosedItem] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)
    catalog: JsonObject | None = None  # the catalog step's summary, when it ran
    # the warnings travel in the envelope, beside the result
    _keys: ClassVar[tuple[str, ...]] = (
        "status",
        "revision",
        "previous",
        "changes",
        "wrote",
        "dry_run",
        "activation_error",
        "closed_review_items",
        "catalog?",
    )
