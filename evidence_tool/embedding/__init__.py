"""Dense embeddings from the installation's embedding service (``evidence.embedding``).

``kind: http`` calls an OpenAI-compatible ``/v1/embeddings`` endpoint, ``kind: local``
runs a sentence-transformers model already installed on the machine, ``kind: none``
(the default) embeds nothing: search stays lexical.  Vectors are cached by
(model id, content hash) under ``.evidence-cache/embeddings/`` (``cache``).
Nothing here imports torch or sentence-transformers until a ``local`` model embeds.
"""

from __future__ import annotations

from typing import Protocol

from evidence_tool.embedding.settings import (
    HTTP_DEFAULTS,
    LOCAL_DEFAULTS,
    EmbeddingKind,
    EmbeddingSettings,
    effective_embedding,
)
from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject

__all__ = [
    "HTTP_DEFAULTS",
    "LOCAL_DEFAULTS",
    "DenseEmbedder",
    "EmbeddingSettings",
    "effective_embedding",
    "embedder_for",
    "serves",
]


class DenseEmbedder(Protocol):
    """Turns texts into unit-length dense vectors of ``dim`` floats.

    ``model_id`` names the model (and its settings that change vectors): the cache
    key and the index stamp, so a model change re-embeds everything once."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def serves(embedder: DenseEmbedder, language: str | None) -> bool:
    """Does ``embedder``'s model serve ``language`` (a primary subtag; None: not known)?

    An embedder may name its ``languages`` (a frozenset; absent or None: any language).
    Hybrid search leaves the dense ranking out of a query in a language the model was
    not trained on: an English model ranks Italian questions worse than their words do."""
    languages = getattr(embedder, "languages", None)
    return language is None or not languages or language in languages


def embedder_for(given: EmbeddingSettings | JsonObject) -> DenseEmbedder | None:
    """The embedder for the installation's ``evidence.embedding`` (None for ``none``);
    the parsed section is accepted too (read here once)."""
    settings = given if isinstance(given, EmbeddingSettings) else EmbeddingSettings.from_json(given)
    kind = settings.kind
    if kind == EmbeddingKind.NONE:
        return None
    if kind == EmbeddingKind.HTTP:
        from evidence_tool.embedding.http import HttpEmbedder

        return HttpEmbedder(settings)
    if kind == EmbeddingKind.LOCAL:
        from evidence_tool.embedding.local import LocalEmbedder

        return LocalEmbedder(settings)
    raise DescriptorError(f"evidence.embedding.kind '{kind}' is not available in this build")
