"""Load a published YAML file with the project's strict loader (duplicate keys, anchors,
tags refused), as a reviewer's tool and the targets would read it."""

from __future__ import annotations

from typing import Any

from evidence_tool.unit.yaml_strict import load


def load_exactly(data: bytes) -> Any:
    doc = load(data.decode("utf-8"))
    assert not doc.duplicates, doc.duplicates
    return doc.value
