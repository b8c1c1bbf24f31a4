"""``evidence.embedding`` read once into a typed record (the installation's YAML is the
JSON boundary; the embedders read typed fields)."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record


class EmbeddingKind(StrEnum):
    NONE = "none"
    HTTP = "http"
    LOCAL = "local"


HTTP_DEFAULTS: JsonObject = {"batch_size": 64, "timeout_s": 30, "retries": 3, "backoff_s": 0.5}
LOCAL_DEFAULTS: JsonObject = {"batch_size": 64}
_DEFAULTS: dict[str, JsonObject] = {"http": HTTP_DEFAULTS, "local": LOCAL_DEFAULTS}


def effective_embedding(section: JsonObject) -> JsonObject:
    """``evidence.embedding`` with the defaults of its kind filled in (``config show``:
    a JSON boundary, unknown keys are shown as the operator wrote them)."""
    kind = section.get("kind", "none")
    defaults = _DEFAULTS.get(kind, {}) if isinstance(kind, str) else {}
    return {"kind": kind, **defaults, **section}


class EmbeddingSettings(Record, frozen=True, omit_defaults=True):
    """The embedding service an installation names; ``kind`` may be one this build lacks
    (``embedder_for`` says so), so it stays the operator's string until then.  Its JSON
    leaves out what is unset or at its default."""

    kind: str = EmbeddingKind.NONE
    url: str | None = None
    model: str | None = None
    dimensions: int | None = None
    api_key_env: str | None = None
    runtime: str | None = None  # local: "onnx" or "sentence-transformers"; None: by the model
    tokenizer: str | None = None  # local onnx: tokenizer.json (default: beside the model)
    batch_size: int = 64
    timeout_s: float = 30.0
    retries: int = 3
    backoff_s: float = 0.5
    languages: tuple[str, ...] = ()  # empty: any language (or, for local, the model card's)


def embedding_settings(
    given: EmbeddingSettings | JsonObject, kind: str | None = None
) -> EmbeddingSettings:
    """Typed settings from either form: the section as written (JSON boundary: the
    installation's YAML), of ``kind`` where an embedder names its own.  A missing required
    key is reported by the embedder that needs it (the message names the kind); a number
    may be written as text ("2.5"); a value of the wrong type is E902 naming its key."""
    if isinstance(given, EmbeddingSettings):
        return given
    section = {"kind": kind, **given} if kind else given
    try:
        return msgspec.convert(section, EmbeddingSettings, strict=False)
    except msgspec.ValidationError as exc:
        raise DescriptorError(
            f"evidence.embedding: {exc}: write a value of that type in the installation file"
        ) from None
