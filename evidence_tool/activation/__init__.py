"""Activation backends and the runtime reader (SPEC.md 8).

``open_active_corpus`` is what retrieval may see; ``backend_for`` builds the
configured backend, a ``Backend`` (``protocol.py`` says what a new one needs).
"""

from evidence_tool.activation.backends import backend_for
from evidence_tool.activation.protocol import Backend, IndexBackend
from evidence_tool.activation.reader import Corpus, open_active_corpus

__all__ = ["Backend", "Corpus", "IndexBackend", "backend_for", "open_active_corpus"]
