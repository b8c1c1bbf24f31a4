"""Every format's importer reads a hostile project in time linear in its size (issue 27, G1).

Per format, one project whose files hold the shapes that made a parser super-linear
(long blank runs inside headings, table rows, bullets, code lists, ref() calls and join
conditions; many docs blocks; many sample values named in one description) is grown 4x
and read by the real importer; the work may grow ~4x (``linear.assert_linear``: a ratio
of CPU timings, never an absolute time).  Each project also yields units, so a case
that stopped reading its files would fail rather than pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt_helpers import MANIFEST
from linear import assert_linear
from wren_cortex_fixtures import WREN_PROJECT, source_input, write_tree

from evidence_tool.importers.base import ImportInput
from evidence_tool.importers.formats import importer_for


def _dbt(n: int) -> dict[str, str]:
    docs = "".join(
        f"{{% docs blk{i} %}}\nBlock {i} text.\n{{% enddocs %}}\n" for i in range(10 * n)
    )
    # rows with no closing bar: the old pattern tried every split of both blank runs
    rows = "\n".join(f"          | c{i}{' ' * n}| meaning {i}{' ' * n}" for i in range(4))
    return {
        "dbt_project.yml": "name: wide\nversion: '1.0'\nconfig-version: 2\n",
        "models/docs.md": docs + "{% docs open_tag" + " " * n + "%}x{% enddocs %}\n",
        "models/m.yml": (
            "version: 2\nmodels:\n  - name: orders\n    description: \"{{ doc('blk0') }}\"\n"
            "    columns:\n      - name: status\n        description: |\n"
            f"          Codes:\n{rows}\n"
            f"          - c4{' ' * n}x{' ' * n}\n"
            "        data_tests:\n          - accepted_values:\n"
            "              arguments:\n                values: ['c0', 'c1', 'c4']\n"
        ),
    }


def _bird(n: int) -> dict[str, str]:
    header = "original_column_name,column_name,column_description,data_format,value_description"
    rows = "".join(
        f'kind{i},kind {i},Kind {i},text,"A: one{" " * n}two; B: three"\n' for i in range(4)
    )
    questions = [
        {
            "question_id": i,
            "db_id": "shop",
            "question": f"How many kinds{' ' * (n // 4)}are there {i}?",
            "evidence": f"total{' ' * n}refers to COUNT(kind{i % 4})",
            "SQL": f"SELECT COUNT(kind{i % 4}) FROM items",
        }
        for i in range(8)
    ]
    return {
        "dev.json": json.dumps(questions, indent=2),
        "dev_databases/shop/database_description/items.csv": header + "\n" + rows,
    }


def _wrenai(n: int) -> dict[str, str]:
    files = dict(WREN_PROJECT)
    files["knowledge/rules/pricing.md"] = (
        "# Pricing rules\n\n## Currency"
        + " \t" * n
        + "z\n\nIn euro.\n"
        + "".join(f"## Rule {i} ##\n\nText {i}.\n" for i in range(n // 4))
    )
    files["relationships.yml"] = (
        "relationships:\n  - name: rental_start_station\n    models:\n      - rentals\n"
        "      - stations\n    join_type: MANY_TO_ONE\n"
        f"    condition: rentals.station_id{' ' * (10 * n)}= stations.id\n"
    )
    return files


def _vanna(n: int) -> dict[str, str]:
    rows = [
        {
            "id": f"r{i}-sql",
            "question": f"Question {i}{' ' * n}about wards?",
            "content": f"SELECT {i}{' ' * n}FROM wards",
            "training_data_type": "sql",
        }
        for i in range(4)
    ]
    rows.append(
        {
            "id": "d-doc",
            "question": None,
            "content": "# Stay" + " " * n + "x\n\nsee http://" + "h" * n + " ://",
            "training_data_type": "documentation",
        }
    )
    return {"export.json": json.dumps(rows)}


def _cortex(n: int) -> dict[str, str]:
    values = [f"V{i}" for i in range(n)]
    description = ", ".join(f"V{i} = kind {i}" for i in range(n)) + "; W =" + " " * n + "w"
    samples = "".join(f"          - {v}\n" for v in values)
    return {
        "model.yaml": (
            "name: shop\ntables:\n  - name: items\n    base_table:\n      database: D\n"
            "      schema: S\n      table: ITEMS\n    dimensions:\n      - name: kind\n"
            f'        description: "{description}"\n        expr: kind\n'
            f"        data_type: VARCHAR\n        is_enum: true\n        sample_values:\n{samples}"
        )
    }


def _manifest(n: int) -> dict[str, str]:
    """A dbt manifest.json with n copies of the fixture's models (columns, descriptions with
    blank runs), one entry per line as dbt writes it unindented."""
    data = json.loads(MANIFEST.read_text())
    models = {k: v for k, v in data["nodes"].items() if k.startswith("model.")}
    for i in range(n):
        for key, node in models.items():
            copy = json.loads(json.dumps(node))
            copy["name"] = f"{node['name']}_{i}"
            copy["alias"] = f"{node['name']}_{i}"
            copy["unique_id"] = f"{key}_{i}"
            copy["description"] = f"Copy {i}{' ' * 50}of the model."
            data["nodes"][f"{key}_{i}"] = copy
    return {"target/manifest.json": json.dumps(data, indent=1)}


# format -> (project of size n, n); vanna's parsers (json, csv) were linear already: its case
# guards them, with blank runs in questions, SQL and a documentation text with URLs.
PROJECTS = {
    "dbt": (_dbt, 200),
    "bird": (_bird, 1500),
    "wrenai": (_wrenai, 50),
    "vanna": (_vanna, 2000),
    "cortex": (_cortex, 150),
    "dbt-manifest": (_manifest, 10),  # the dbt format's other input
}


@pytest.mark.parametrize("fmt", sorted(PROJECTS))
def test_each_format_reads_a_hostile_project_in_linear_time(fmt: str, tmp_path: Path) -> None:
    build, n = PROJECTS[fmt]
    importer = importer_for(fmt.split("-")[0])

    def project(size: int) -> ImportInput:
        return source_input(write_tree(tmp_path / str(size), build(size)))

    first = importer.read(project(n))
    assert first.units, f"the {fmt} project gave no units"
    assert_linear(importer.read, project, n)


def test_every_format_has_a_case() -> None:
    from evidence_tool.importers.formats import FORMATS

    assert {f.split("-")[0] for f in PROJECTS} == set(FORMATS) and len(PROJECTS) == 6
