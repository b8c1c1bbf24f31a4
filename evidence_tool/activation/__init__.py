"""Activation backends and the runtime reader (SPEC.md 8).

``open_active_corpus`` is what retrieval may see; ``backend_for`` builds the
configured backend, a ``Backend`` (``protocol.py`` says what a new one needs).
Names are loaded on first use, so that a command that only activates does not
load the reader (start-up time, docs/performance.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.activation.backends import backend_for
    from evidence_tool.activation.protocol import ActivationPort, Backend, IndexBackend
    from evidence_tool.activation.reader import Corpus, open_active_corpus

__all__ = [
    "ActivationPort",
    "Backend",
    "Corpus",
    "IndexBackend",
    "backend_for",
    "open_active_corpus",
]

lazy_face(
    __name__,
    {
        "ActivationPort": "protocol",
        "Backend": "protocol",
        "Corpus": "reader",
        "IndexBackend": "protocol",
        "backend_for": "backends",
        "open_active_corpus": "reader",
    },
)
