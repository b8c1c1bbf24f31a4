"""``evidence.embedding`` read once into a typed record (the installation's YAML is the
JSON boundary; the embedders read typed fields)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject, JsonValue


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


def _number(section: JsonObject, key: str) -> float | None:
    value = section.get(key)
    if value is None or isinstance(value, int | float):  # bool is an int, as int() reads it
        return value
    try:
        return float(str(value))
    except ValueError:
        raise DescriptorError(
            f"evidence.embedding.{key} must be a number, not {value!r}: write a number there in the installation file"
        ) from None


def _text(value: JsonValue) -> str | None:
    return str(value) if value else None  # unset and empty alike: "required" says so


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """The embedding service an installation names; ``kind`` may be one this build lacks
    (``embedder_for`` says so), so it stays the operator's string until then."""

    kind: str = EmbeddingKind.NONE
    url: str | None = None
    model: str | None = None
    dimensions: int | None = None
    batch_size: int = 64
    timeout_s: float = 30.0
    retries: int = 3
    backoff_s: float = 0.5
    api_key_env: str | None = None
    languages: tuple[str, ...] = ()  # empty: any language (or, for local, the model card's)
    runtime: str | None = None  # local: "onnx" or "sentence-transformers"; None: by the model
    tokenizer: str | None = None  # local onnx: tokenizer.json (default: beside the model)

    @classmethod
    def from_json(cls, section: JsonObject) -> EmbeddingSettings:
        """The section with its kind's defaults; a missing required key is reported by
        the embedder that needs it (the message names the kind)."""
        merged = effective_embedding(section)
        num = {k: _number(merged, k) for k in ("dimensions", "batch_size", "timeout_s")}
        more = {k: _number(merged, k) for k in ("retries", "backoff_s")}
        langs = merged.get("languages") or []
        return cls(
            kind=str(merged["kind"]),
            url=_text(merged.get("url")),
            model=_text(merged.get("model")),
            dimensions=int(num["dimensions"]) if num["dimensions"] else None,
            batch_size=int(num["batch_size"] or 64),
            timeout_s=float(num["timeout_s"] if num["timeout_s"] is not None else 30),
            retries=int(more["retries"] if more["retries"] is not None else 3),
            backoff_s=float(more["backoff_s"] if more["backoff_s"] is not None else 0.5),
            api_key_env=_text(merged.get("api_key_env")),
            languages=tuple(str(x) for x in langs) if isinstance(langs, list) else (),
            runtime=_text(merged.get("runtime")),
            tokenizer=_text(merged.get("tokenizer")),
        )

    def to_json(self) -> JsonObject:
        """The effective section (every default written out); from_json reads it back."""
        out: JsonObject = {"kind": str(self.kind)}
        optional: JsonObject = {
            "url": self.url,
            "model": self.model,
            "dimensions": self.dimensions,
            "api_key_env": self.api_key_env,
            "runtime": self.runtime,
            "tokenizer": self.tokenizer,
        }
        out |= {k: v for k, v in optional.items() if v is not None}
        out |= {
            "batch_size": self.batch_size,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "backoff_s": self.backoff_s,
        }
        if self.languages:
            out["languages"] = list[JsonValue](self.languages)
        return out

    @classmethod
    def of(cls, given: EmbeddingSettings | JsonObject, kind: str) -> EmbeddingSettings:
        """Typed settings from either form (callers that still hold the parsed section)."""
        if isinstance(given, EmbeddingSettings):
            return given
        return cls.from_json({"kind": kind, **given})
