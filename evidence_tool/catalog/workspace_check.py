"""``check`` over a whole workspace: read the catalog, check every valid unit."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from evidence_tool.catalog.check import check_unit
from evidence_tool.catalog.model import Catalog
from evidence_tool.catalog.settings import CatalogSettings, open_catalog
from evidence_tool.errors import Diagnostic, EvidenceWarning
from evidence_tool.workspace import validate_workspace
from evidence_tool.workspace.scan import Progress


@dataclass
class CatalogCheck:
    catalog: Catalog
    units: int = 0
    names: int = 0  # names resolved: a clean run over nothing would say 0
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        codes: dict[str, int] = {}
        for d in self.errors:
            codes[d.code] = codes.get(d.code, 0) + 1
        return {
            "units_checked": self.units,
            "names_checked": self.names,
            "findings": codes,
            "catalog": self.catalog.summary(),
        }


def check_workspace(
    root: str | os.PathLike[str], settings: CatalogSettings, progress: Progress | None = None
) -> CatalogCheck:
    """Validate the units, then check every valid one against the catalog."""
    catalog, catalog_findings = open_catalog(settings)
    scanned = validate_workspace(root, progress)
    result = CatalogCheck(catalog, errors=list(scanned.errors) + catalog_findings)
    result.warnings.extend(scanned.warnings)
    bad = {d.path for d in scanned.errors}
    for f in scanned.files:
        unit = f.unit
        if unit is None or f.rel in bad:
            continue
        result.units += 1
        text = f.data.decode("utf-8")
        checked = check_unit(catalog, unit, text, f.rel)
        result.names += checked.names
        result.errors.extend(checked.findings)
    result.errors.sort(key=Diagnostic.sort_key)
    return result
