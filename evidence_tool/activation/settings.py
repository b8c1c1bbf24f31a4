"""``evidence.activation``: the installation's settings for the activation backend,
with the defaults each backend applies (one place: building the backend, ``config show``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.workspace.layout import Layout

COMMAND_TIMEOUT_S = 300
QDRANT_TIMEOUT_S = 30


def effective_activation(settings: JsonObject, layout: Layout) -> JsonObject:
    """``evidence.activation`` with the defaults each backend applies filled in.

    One place for the defaults, used to build the backend and by ``config show``.
    JSON boundary: the installation's section as written, every key kept for ``config show``.
    """
    out: JsonObject = {"kind": settings.get("kind", "sqlite"), **settings}
    if out["kind"] == "command":
        out.setdefault("timeout_s", COMMAND_TIMEOUT_S)
    elif out["kind"] == "qdrant":
        out.setdefault("collection", "evidence")
        if out.get("url"):
            out.setdefault("timeout_s", QDRANT_TIMEOUT_S)
        else:
            out.setdefault("path", str(layout.cache / "qdrant"))
    return out


def _opt_str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) and value else None


def _opt_num(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ActivationSettings:
    """``evidence.activation``, read once from the installation (defaults applied)."""

    kind: str = "sqlite"  # none, sqlite, command, qdrant; another is refused by backend_for
    command: tuple[str, ...] = ()  # kind command: the program and its arguments
    timeout_s: float | None = None  # command, qdrant server: None is the backend's default
    collection: str = "evidence"  # qdrant
    url: str | None = None  # qdrant server; None: local mode in ``path``
    path: str | None = None  # qdrant local mode
    api_key_env: str | None = None  # qdrant server: the variable holding the API key
    embedder: str | None = None  # qdrant: module:factory of the sparse/dense embedder

    @classmethod
    def from_section(cls, section: JsonObject, layout: Layout) -> ActivationSettings:
        """The installation's section as written (JSON boundary: the YAML file)."""
        return cls.from_json(effective_activation(section, layout))

    @classmethod
    def from_json(cls, raw: JsonObject) -> ActivationSettings:
        command = raw.get("command")
        collection = raw.get("collection")
        return cls(
            str(raw.get("kind", "sqlite")),
            tuple(str(c) for c in command) if isinstance(command, list) else (),
            _opt_num(raw.get("timeout_s")),
            collection if isinstance(collection, str) and collection else "evidence",
            _opt_str(raw.get("url")),
            _opt_str(raw.get("path")),
            _opt_str(raw.get("api_key_env")),
            _opt_str(raw.get("embedder")),
        )

    def to_json(self) -> JsonObject:  # JSON boundary: the section's keys, unset ones left out
        out: JsonObject = {"kind": self.kind, "collection": self.collection}
        if self.command:
            out["command"] = list(self.command)
        optional: dict[str, str | float | None] = {
            "timeout_s": self.timeout_s,
            "url": self.url,
            "path": self.path,
            "api_key_env": self.api_key_env,
            "embedder": self.embedder,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def local_copy(self, path: str) -> ActivationSettings:
        """These settings for a throw-away local collection at ``path`` (eval --compare)."""
        return replace(self, url=None, path=path, collection="evidence")


def activation_settings(
    settings: ActivationSettings | JsonObject, layout: Layout
) -> ActivationSettings:
    """Typed settings from either form (a caller may still hand the section as written)."""
    if isinstance(settings, ActivationSettings):
        return settings
    return ActivationSettings.from_section(settings, layout)
