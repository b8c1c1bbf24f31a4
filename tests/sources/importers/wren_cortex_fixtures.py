"""Fixtures in the published shapes of a WrenAI v5 project and a Cortex Analyst semantic model.

Written for these tests (a bike-rental project, a pharmacy sales model); the shapes
follow WrenAI's docs/core/reference/mdl.md and Snowflake's semantic model spec.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evidence_tool.importers.base import ImportInput, ImportResult, SourceFile
from evidence_tool.importers.formats import importer_for

WREN_PROJECT: dict[str, str] = {
    "wren_project.yml": (
        "schema_version: 5\nname: velo_rentals\ncatalog: wren\nschema: public\n"
        "data_source: postgres\n"
    ),
    "models/rentals/metadata.yml": """\
name: rentals
table_reference:
  catalog: velo
  schema: ops
  table: bike_rentals
properties:
  description: One row per bike rental, from unlock to return.
columns:
  - name: rental_id
    type: BIGINT
    is_primary_key: true
    properties: {}
  - name: station_id
    type: INTEGER
    properties:
      description: Station where the bike was unlocked.
      display_name: Start station
  - name: minutes
    type: INTEGER
    properties:
      description: "Ride length in whole minutes, rounded up."
  - name: fare_eur
    type: DOUBLE
    is_calculated: true
    expression: minutes * 0.25 + 1
    properties:
      description: Fare charged, in euro.
primary_key: rental_id
cached: false
""",
    "models/stations/metadata.yml": """\
name: stations
ref_sql: SELECT id, label FROM raw.stations
columns:
  - name: id
    type: INTEGER
  - name: label
    type: VARCHAR
    properties:
      description: Name painted on the docking station.
""",
    "models/stations/ref_sql.sql": "SELECT id, label FROM raw.stations\n",
    "cubes/ride_stats/metadata.yml": """\
name: ride_stats
base_object: rentals
measures:
  - name: ride_count
    expression: COUNT(*)
    type: BIGINT
  - name: avg_minutes
    expression: AVG(minutes)
    type: DOUBLE
dimensions:
  - name: station_id
    expression: station_id
    type: INTEGER
time_dimensions:
  - name: started_at
    expression: started_at
    type: TIMESTAMP
properties:
  description: Ride counts and durations per station.
""",
    "relationships.yml": """\
relationships:
  - name: rental_start_station
    models:
      - rentals
      - stations
    join_type: MANY_TO_ONE
    condition: rentals.station_id = stations.id
""",
    "views/busy_stations/metadata.yml": """\
name: busy_stations
statement: SELECT station_id, COUNT(*) AS n FROM rentals GROUP BY 1
properties:
  description: Stations by number of rentals.
""",
    "knowledge/knowledge.yml": "schema_version: 1\n",
    "knowledge/sql/rides-per-station.md": """\
---
nl: How many rides started at each station?
sql: |
  SELECT station_id, COUNT(*) AS rides
  FROM rentals
  GROUP BY station_id
source: user
tags:
  - stations
---

Counts every rental, returned or not.
""",
    "knowledge/rules/pricing.md": """\
# Pricing rules

## Currency

`fare_eur` is in euro with two decimals; never convert it to cents.

## Free rides

Rides under 2 minutes are free and have `fare_eur = 0`.

```sql
# not a heading: inside a fence
SELECT 1
```
""",
    "knowledge/glossary/dock.md": "# Dock\n\nThe bay a bike locks into at a station.\n",
    "knowledge/caveats/.gitkeep": "",
    "target/mdl.json": "{}\n",
}

CORTEX_MODEL = """\
name: pharmacy_sales
description: Sales of the pharmacy chain, one model for the finance team.
tables:
  - name: sales
    description: One row per receipt line.
    synonyms:
      - receipt lines
    base_table:
      database: PHARMA
      schema: RETAIL
      table: SALES_LINES
    primary_key:
      columns:
        - line_id
    dimensions:
      - name: channel
        synonyms:
          - sales channel
        description: "Where the sale happened: S = in store, W = web shop, A = app."
        expr: channel_code
        data_type: VARCHAR
        sample_values:
          - S
          - W
          - A
        is_enum: true
      - name: product_name
        description: Commercial name of the product.
        expr: product_name
        data_type: VARCHAR
        sample_values:
          - Aspirin 500
          - Vitamin D3
        cortex_search_service:
          service: product_search
          literal_column: product_name
    time_dimensions:
      - name: sold_on
        description: Calendar day of the sale, store time zone.
        expr: sold_on
        data_type: DATE
        sample_values:
          - '2024-03-01'
    facts:
      - name: net_amount
        synonyms:
          - net sales
        description: Line amount after discounts, before tax.
        expr: gross_amount - discount
        data_type: NUMBER
        access_modifier: public_access
    metrics:
      - name: total_net
        description: Sum of net amounts.
        expr: SUM(net_amount)
    filters:
      - name: web_only
        description: Only web shop sales.
        expr: channel_code = 'W'
  - name: stores
    description: One row per store.
    base_table:
      database: PHARMA
      schema: RETAIL
      table: STORES
    dimensions:
      - name: store_id
        expr: store_id
        data_type: NUMBER
        unique: true
relationships:
  - name: sales_store
    left_table: sales
    right_table: stores
    relationship_columns:
      - left_column: store_id
        right_column: store_id
    join_type: left_outer
    relationship_type: many_to_one
metrics:
  - name: net_per_store
    description: Net sales divided by the number of stores.
    expr: sales.total_net / COUNT(DISTINCT stores.store_id)
verified_queries:
  - name: web share
    question: What share of net sales came from the web shop last month?
    sql: "SELECT SUM(CASE WHEN channel = 'W' THEN net_amount END) / SUM(net_amount) FROM __sales"
    verified_by: finance
    verified_at: 1714000000
    use_as_onboarding_question: true
custom_instructions: Amounts are in euro; never mix gross and net amounts in one sum.
"""


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def source_input(
    root: Path, *, options: dict[str, Any] | None = None, language: str = "en"
) -> ImportInput:
    """The importer's input for a folder (every regular file) or one file."""
    if root.is_file():
        paths = [(root.name, root)]
    else:
        paths = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())
    files = tuple(SourceFile(rel, p, p.stat().st_size) for rel, p in paths)
    return ImportInput(files, options or {}, language, 10 * 1024 * 1024)


def run(fmt: str, root: Path, **kwargs: Any) -> ImportResult:
    return importer_for(fmt).read(source_input(root, **kwargs))


def by_id(result: ImportResult) -> dict[str, Any]:
    return {item.unit.id: item for item in result.units}


def check_spans(root: Path, result: ImportResult) -> int:
    """Every span holds exactly its text in the file's bytes; returns how many were checked."""
    count = 0
    for item in result.units:
        for span in item.spans:
            path = root if root.is_file() else root / span.path
            raw = path.read_bytes()
            assert raw[span.start : span.end].decode("utf-8") == span.text, span
            count += 1
    return count
