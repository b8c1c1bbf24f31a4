"""The source formats by name; each importer module is imported only when its format is used."""

from __future__ import annotations

import importlib

from evidence_tool.errors import SourceError
from evidence_tool.importers.base import Importer

# format name -> "module:class" (one module per format, in this package; a dotted module
# is imported as it is named)
FORMATS: dict[str, str] = {
    "dbt": "dbt:DbtImporter",  # a dbt project folder or a manifest.json (v12)
    "bird": "bird:BirdImporter",  # dev.json + database_description/*.csv (also ThothAI)
    "wrenai": "wrenai:WrenImporter",  # a WrenAI v5 project folder
    "vanna": "vanna:VannaImporter",  # get_training_data() export, JSON or CSV
    "cortex": "cortex:CortexImporter",  # Snowflake Cortex Analyst semantic model YAML
}


def importer_for(name: str) -> Importer:
    """The importer of a format (E501 naming the known formats for an unknown one)."""
    target = FORMATS.get(name)
    if target is None:
        known = ", ".join(sorted(FORMATS))
        raise SourceError(f"unknown source format {name!r}; the formats are: {known}")
    module, cls = target.split(":")
    # A dotted module is absolute (an importer registered by a plugin or a test).
    qualified = module if "." in module else f"evidence_tool.importers.{module}"
    try:
        imported = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name != qualified:
            raise  # a dependency of the importer is missing: a broken installation
        raise SourceError(
            f"format {name!r} is not available in this version of evidence-tool "
            f"(no module {qualified}); upgrade, or remove the entry"
        ) from None
    importer: Importer = getattr(imported, cls)()
    return importer
