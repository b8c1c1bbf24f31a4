"""The warehouse catalog: relations, columns and types read from DDL files or SQLite
(live PostgreSQL comes later), and the checks of units against it (SPEC.md 13).
Names are loaded on first use (``evidence_tool.lazy``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidence_tool.lazy import lazy_face

if TYPE_CHECKING:
    from evidence_tool.catalog.check import UnitCheck, check_unit
    from evidence_tool.catalog.ddl import read_ddl
    from evidence_tool.catalog.model import Catalog, Column, Relation
    from evidence_tool.catalog.settings import CatalogSettings, catalog_settings, open_catalog
    from evidence_tool.catalog.sqlite_reader import read_sqlite
    from evidence_tool.catalog.workspace_check import CatalogCheck, check_workspace

__all__ = [
    "Catalog",
    "CatalogCheck",
    "CatalogSettings",
    "Column",
    "Relation",
    "UnitCheck",
    "catalog_settings",
    "check_unit",
    "check_workspace",
    "open_catalog",
    "read_ddl",
    "read_sqlite",
]

lazy_face(
    __name__,
    {
        "Catalog": "model",
        "CatalogCheck": "workspace_check",
        "CatalogSettings": "settings",
        "Column": "model",
        "Relation": "model",
        "UnitCheck": "check",
        "catalog_settings": "settings",
        "check_unit": "check",
        "check_workspace": "workspace_check",
        "open_catalog": "settings",
        "read_ddl": "ddl",
        "read_sqlite": "sqlite_reader",
    },
)
