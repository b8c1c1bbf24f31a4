"""What an activation backend is (SPEC.md 8): a new backend is one module with one class.

The contract is the archive's port (``evidence_tool.archive.port``): a backend
activates a snapshot and names its optional capabilities (``capabilities``: an index
it can check, work ahead, init's baseline, its own warnings).  ``kind: none`` is no
backend at all (``backend_for`` returns None): the candidate stays pending.
``backend_for``'s return type makes mypy check every shipped backend against the port.

``Backend`` and ``IndexBackend`` are the earlier names, kept for hosts: any callable
taking a snapshot, and one that also has ``holds``.
"""

from __future__ import annotations

from evidence_tool.archive.port import Activation as Backend
from evidence_tool.archive.port import ActivationPort, Capabilities
from evidence_tool.archive.port import KeepsIndex as IndexBackend

__all__ = ["ActivationPort", "Backend", "Capabilities", "IndexBackend"]
