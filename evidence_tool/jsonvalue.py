"""The JSON value, as a type: what crosses the boundary to files, envelopes and services.

Records inside the library are typed (frozen dataclasses, enums); they meet JSON only
in their ``to_json`` / ``from_json`` pair, in the readers and writers of files, and in
the CLI's envelope.  There a value is typed as what JSON can hold, not ``Any``: a
reader must narrow it (``isinstance``) before it trusts a field, which is exactly the
check a file written by hand needs.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"

__all__ = ["JsonObject", "JsonValue"]
