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

from evidence_tool.embedding.settings import EmbeddingSettings, embedding_settings
from evidence_tool.embedding.vectors import normalized
from evidence_tool.errors import DescriptorError, EmbeddingError
from evidence_tool.jsonvalue import JsonObject

# Loaded models by folder: one process (a test session, an eval after a consolidate)
# loads each model once.
_LOADED: dict[Path, Any] = {}


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
    def __init__(self, given: EmbeddingSettings | JsonObject) -> None:
        settings = embedding_settings(given, "local")
        if not settings.model:
            raise DescriptorError("evidence.embedding.model is required for kind 'local'")
        spec = settings.model
        self.folder = model_folder(spec)
        self.batch_size = settings.batch_size
        self._model: Any = None
        dim = settings.dimensions
        # The package attribute or the folder's name, not its path: moving a venv must
        # not re-embed everything.
        name = spec if ":" in spec and not Path(spec).exists() else self.folder.name
        self.model_id = f"local:{name}"
        self.dim = int(dim) if dim else self._dimension()
        self.model_id += f":{self.dim}"
        configured = settings.languages
        self.languages = (
            frozenset(x.lower() for x in configured) if configured else card_languages(self.folder)
        )

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
            threads = os.environ.get("THT_TORCH_THREADS")
            if threads:  # serve sets 1: its requests run side by side (serve/run.py)
                import torch

                torch.set_num_threads(int(threads))
            if self.folder not in _LOADED:
                _LOADED[self.folder] = SentenceTransformer(str(self.folder), device="cpu")
            self._model = _LOADED[self.folder]
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


def card_languages(folder: Path) -> frozenset[str] | None:
    """The ``language`` of the model card's front matter (README.md), as primary subtags;
    None when the card is absent, names none, or says ``multilingual``."""
    try:
        text = (folder / "README.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("---"):
        return None
    head = text[3:].split("\n---", 1)[0].splitlines()
    found: list[str] = []
    for n, line in enumerate(head):
        if not line.startswith("language:"):
            continue
        value = line.partition(":")[2].strip().strip("[]")
        found = [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
        for item in head[n + 1 :] if not found else ():
            if not item.lstrip().startswith("- "):
                break
            found.append(item.strip()[2:].strip().strip("'\""))
        break
    tags = {tag.split("-")[0].lower() for tag in found if tag}
    return frozenset(tags) if tags and "multilingual" not in tags else None
