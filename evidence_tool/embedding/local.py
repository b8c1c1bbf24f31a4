"""``kind: local``: a sentence-transformers model already installed on this machine.

``model`` is a folder holding the model, or ``module:attribute`` naming a Python
package attribute that holds that folder's path (a model shipped on PyPI).  The
hub is never contacted (``HF_HUB_OFFLINE=1``): a model that is not on disk is a
descriptor error, not a download.  torch and sentence-transformers are imported
on the first ``embed`` only, so ``kind: none`` never loads them.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from evidence_tool.embedding.vectors import normalized
from evidence_tool.errors import DescriptorError, EmbeddingError


def model_folder(spec: str) -> Path:
    """The folder of the model ``spec`` names (a path, or ``module:attribute``)."""
    if ":" in spec and not Path(spec).exists():
        module, _, name = spec.partition(":")
        try:
            spec = str(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError) as exc:
            raise DescriptorError(
                f"evidence.embedding.model {module}:{name} cannot be loaded ({exc}); "
                "install the package that ships the model"
            ) from None
    folder = Path(spec).expanduser()
    if not folder.is_dir():
        raise DescriptorError(
            f"evidence.embedding.model: no model folder at {folder}; give the folder of an "
            "installed sentence-transformers model (models are never downloaded)"
        )
    return folder


class LocalEmbedder:
    def __init__(self, settings: dict[str, Any]) -> None:
        if not settings.get("model"):
            raise DescriptorError("evidence.embedding.model is required for kind 'local'")
        spec = str(settings["model"])
        self.folder = model_folder(spec)
        self.batch_size = int(settings.get("batch_size", 64))
        self._model: Any = None
        dim = settings.get("dimensions")
        # The package attribute or the folder's name, not its path: moving a venv must
        # not re-embed everything.
        name = spec if ":" in spec and not Path(spec).exists() else self.folder.name
        self.model_id = f"local:{name}"
        self.dim = int(dim) if dim else self._dimension()
        self.model_id += f":{self.dim}"

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise DescriptorError(
                    "evidence.embedding kind 'local' needs the 'embeddings' extra: "
                    "pip install 'evidence-tool[embeddings]'"
                ) from None
            self._model = SentenceTransformer(str(self.folder), device="cpu")
        return self._model

    def _dimension(self) -> int:
        model = self._load()
        # sentence-transformers 5.x renamed it (the old name warns, then goes).
        size = getattr(model, "get_embedding_dimension", None)
        return int(size() if size else model.get_sentence_embedding_dimension())

    def embed(self, texts: list[str]) -> list[list[float]]:
        try:
            vectors = self._load().encode(
                texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        except DescriptorError:
            raise
        except Exception as exc:  # torch and tokenizers raise many types
            raise EmbeddingError(f"the local model {self.folder.name} failed: {exc}") from None
        return [normalized([float(x) for x in v]) for v in vectors]
