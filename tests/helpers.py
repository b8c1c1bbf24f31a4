"""Helpers every test folder shares, importable by name (``from helpers import codes``).

One copy each: the folders' own helper modules (archive_helpers, unit_helpers...)
hold only what their folder needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def codes(found: Any) -> list[str]:
    """The error codes, in report order, of any of the shapes a test holds:

    a CLI result (its ``.json`` envelope), a JSON envelope (``{"errors": [...]}``), a
    ParseResult or ValidationReport (``.errors`` of Diagnostic), an EvidenceError
    (``.diagnostics``), or a list of Diagnostic or JSON error objects.
    """
    if not isinstance(found, Mapping | list) and hasattr(found, "json"):
        found = found.json
    if isinstance(found, Mapping):
        found = found["errors"]
    elif hasattr(found, "diagnostics"):
        found = found.diagnostics
    elif hasattr(found, "errors"):
        found = found.errors
    return [e["code"] if isinstance(e, Mapping) else e.code for e in found]
