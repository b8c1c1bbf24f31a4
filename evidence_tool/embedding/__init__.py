"""Dense embeddings from the installation's embedding service (``evidence.embedding``).

``kind: http`` calls an OpenAI-compatible ``/v1/embeddings`` endpoint, ``kind: local``
runs a model already installed on the machine, on ONNX Runtime (``runtime: onnx``, the
light ``embeddings`` extra; chosen by itself for a ``.onnx`` model) or on
sentence-transformers (``runtime: sentence-transformers``, the ``embeddings-torch``
extra), ``kind: none`` (the default) embeds nothing: search stays lexical.  Vectors are cached by
(model id, content hash) under ``.evidence-cache/embeddings/`` (``cache``).
Nothing here imports torch, sentence-transformers or onnxruntime until a ``local`` model
embeds; only this package may import them (import-linter).
"""

from __future__ import annotations

from typing import Protocol

from evidence_tool.embedding.settings import (
    EmbeddingKind,
    EmbeddingSettings,
    effective_embedding,
    embedding_settings,
)
from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject

__all__ = [
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
    settings = embedding_settings(given)
    kind = settings.kind
    if kind == EmbeddingKind.NONE:
        return None
    if kind == EmbeddingKind.HTTP:
        from evidence_tool.embedding.http import HttpEmbedder

        return HttpEmbedder(settings)
    if kind == EmbeddingKind.LOCAL:
        if _runtime(settings) == "onnx":
            from evidence_tool.embedding.onnx import OnnxEmbedder

            return OnnxEmbedder(settings)
        from evidence_tool.embedding.local import LocalEmbedder

        return LocalEmbedder(settings)
    raise DescriptorError(f"evidence.embedding.kind '{kind}' is not available in this build")


RUNTIMES = ("onnx", "sentence-transformers")


def _runtime(settings: EmbeddingSettings) -> str:
    """``runtime`` as set, else ``onnx`` for a model that is (or holds) an ONNX file."""
    if settings.runtime:
        if settings.runtime not in RUNTIMES:
            raise DescriptorError(
                f"evidence.embedding.runtime '{settings.runtime}' is not one of "
                f"{', '.join(RUNTIMES)}"
            )
        return settings.runtime
    if settings.tokenizer:
        return "onnx"  # only the ONNX runtime takes a separate tokenizer
    import importlib.util
    from pathlib import Path

    spec = Path(settings.model or "").expanduser()
    if spec.suffix == ".onnx" or (spec / "model.onnx").is_file():
        return "onnx"
    # A Hugging Face folder may hold both forms: the ONNX one when torch's is not installed.
    exported = (spec / "onnx" / "model.onnx").is_file()
    if exported and importlib.util.find_spec("sentence_transformers") is None:
        return "onnx"
    return "sentence-transformers"
