"""Activation backends and the runtime reader (SPEC.md 8)."""

from evidence_tool.activation.backends import backend_for

__all__ = ["backend_for"]
