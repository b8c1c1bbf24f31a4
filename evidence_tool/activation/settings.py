"""``evidence.activation``: the installation's settings for the activation backend,
with the defaults each backend applies (one place: building the backend, ``config show``)."""

from __future__ import annotations

from msgspec.structs import replace

from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record, field_of
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


class ActivationSettings(Record, frozen=True, omit_defaults=True):
    """``evidence.activation``, read once from the installation (defaults applied); its
    JSON leaves out the keys still at their defaults."""

    kind: str  # none, sqlite, command, qdrant; another is refused by backend_for
    collection: str = "evidence"  # qdrant
    command: tuple[str, ...] = ()  # kind command: the program and its arguments
    timeout_s: float | None = None  # command, qdrant server: None is the backend's default
    url: str | None = None  # qdrant server; None: local mode in ``path``
    path: str | None = None  # qdrant local mode
    api_key_env: str | None = None  # qdrant server: the variable holding the API key
    embedder: str | None = None  # qdrant: module:factory of the sparse/dense embedder

    def local_copy(self, path: str) -> ActivationSettings:
        """These settings for a throw-away local collection at ``path`` (eval --compare)."""
        return replace(self, url=None, path=path, collection="evidence")


def activation_settings(
    settings: ActivationSettings | JsonObject, layout: Layout
) -> ActivationSettings:
    """Typed settings from either form (a caller may still hand the section as written:
    JSON boundary, the YAML file, whose schema the installation's reader checked)."""
    if isinstance(settings, ActivationSettings):
        return settings
    key = "evidence.activation"  # a wrong type is E902 naming its path
    return field_of(
        ActivationSettings, {key: effective_activation(settings, layout)}, key, DescriptorError
    )
