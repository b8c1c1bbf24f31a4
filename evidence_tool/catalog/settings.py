"""Which catalog to read: the ``evidence.catalog`` section of the installation
descriptor, overridden by command-line options."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evidence_tool.catalog.ddl import read_ddl
from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.sqlite_reader import read_sqlite
from evidence_tool.errors import Diagnostic, UsageError
from evidence_tool.workspace.descriptor import Installation

KINDS = ("ddl", "sqlite", "postgres")
DEFAULT_DSN_ENV = "THT_CATALOG_DSN"
# What an evidence.catalog section means for each key it leaves out.
CATALOG_DEFAULTS: dict[str, object] = {
    "paths": [],
    "search_path": ["public"],
    "block": False,
    "dsn_env": DEFAULT_DSN_ENV,
}


@dataclass(frozen=True)
class CatalogSettings:
    kind: str
    paths: tuple[str, ...] = ()
    search_path: tuple[str, ...] = ("public",)
    block: bool = False
    dsn_env: str = DEFAULT_DSN_ENV

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UsageError(f"unknown catalog kind {self.kind!r}; use one of {', '.join(KINDS)}")


def catalog_settings(
    installation: Installation,
    *,
    kind: str | None = None,
    ddl: tuple[str, ...] = (),
    sqlite: tuple[str, ...] = (),
) -> CatalogSettings:
    """The descriptor's section, with --catalog / --ddl / --sqlite taking precedence.
    Relative descriptor paths are relative to the descriptor's folder."""
    section = installation.section("catalog")
    chosen = kind or section.get("kind")
    if chosen is None:
        raise UsageError(
            "no catalog to check against: pass --catalog ddl|sqlite|postgres (with --ddl PATH, "
            "--sqlite PATH, or the DSN in THT_CATALOG_DSN), or set evidence.catalog.kind in the "
            "installation descriptor"
        )
    for option, values, kind_of in (("--ddl", ddl, "ddl"), ("--sqlite", sqlite, "sqlite")):
        if values and chosen != kind_of:
            raise UsageError(f"{option} names a {kind_of} catalog, but the catalog is {chosen}")
    given = ddl if chosen == "ddl" else sqlite if chosen == "sqlite" else ()
    chosen = str(chosen)  # the schema allows only the KINDS here
    paths = tuple(given) or _descriptor_paths(installation, _strs(section.get("paths")), chosen)
    merged = {**CATALOG_DEFAULTS, **section}
    return CatalogSettings(
        chosen,
        paths,
        _strs(merged["search_path"]),
        bool(merged["block"]),
        str(merged["dsn_env"]),
    )


def _strs(value: object) -> tuple[str, ...]:
    """A list of strings from the descriptor (the schema checked it; absent is empty)."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _descriptor_paths(
    installation: Installation, paths: tuple[str, ...], kind: str
) -> tuple[str, ...]:
    base = Path(installation.path).parent if installation.path else Path.cwd()
    out = []
    for p in paths:
        if kind == "sqlite" and "=" in p and not Path(p).exists():
            schema, rest = p.split("=", 1)
            out.append(f"{schema}={base / rest}")
        else:
            out.append(str(base / p))
    return tuple(out)


def open_catalog(settings: CatalogSettings) -> tuple[Catalog, list[Diagnostic]]:
    """Read the catalog; findings about the catalog's own files (E185) come back too."""
    if settings.kind == "postgres":
        from evidence_tool.catalog.postgres import open_live

        with open_live(settings.dsn_env, settings.search_path) as live:
            return live.catalog(), []
    if settings.kind == "sqlite":
        return read_sqlite(list(settings.paths), settings.search_path), []
    return read_ddl(list(settings.paths), settings.search_path)
