"""Arbitrary input to the dbt importer: a coded SourceError or units whose spans are exact.

Hypothesis writes property files, docs files and manifests made of the characters and
words the importer cares about (YAML indicators, Jinja delimiters, dbt keys, JSON
structure) and of arbitrary bytes; anything but a coded error escaping is a bug (a
traceback is exit 70).
"""

from __future__ import annotations

import json
from pathlib import Path

from dbt_helpers import assert_spans_exact, read, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.errors import SourceError

_WORDS = [
    "models:",
    "columns:",
    "- name: ",
    "description: ",
    "data_tests:",
    "tests:",
    "accepted_values:",
    "values: ",
    "arguments:",
    "semantic_models:",
    "measures:",
    "metrics:",
    "entities:",
    "agg: ",
    "expr: ",
    "type: ",
    "ratio",
    "derived",
    "simple",
    "numerator: ",
    "denominator: ",
    "input_metrics:",
    "filter: ",
    "semantic_model:",
    "entity:",
    "{{ doc('a') }}",
    "{% docs a %}",
    "{% enddocs %}",
    "{{",
    "}}",
    "'",
    '"',
    "\n",
    "\n  ",
    "\n    ",
    "\n      ",
    "- ",
    ": ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "!!str ",
    "|\n",
    ">\n",
    "#",
    "ref('m')",
    "sum",
    "count",
    "x",
    "y",
    "é",
    "\r\n",
    "\t",
]
_TEXT = st.lists(st.sampled_from(_WORDS), max_size=60).map("".join)
_RAW = st.one_of(_TEXT.map(lambda t: t.encode("utf-8")), st.binary(max_size=300))
_DOCS = st.sampled_from([b"{% docs a %}\n- a: yes\n{% enddocs %}\n", b""]) | _RAW
_KEYS = st.sampled_from(
    [
        "model.p.a",
        "model.p.b",
        "test.p.t",
        "seed.p.s",
        "metric.p.m",
        "name",
        "columns",
        "description",
        "test_metadata",
        "kwargs",
        "values",
        "column_name",
        "attached_node",
        "measures",
        "entities",
        "type",
        "type_params",
        "numerator",
        "denominator",
        "measure",
        "metrics",
        "expr",
        "agg",
        "filter",
        "schema",
        "alias",
        "node_relation",
        "model",
    ]
) | st.text(max_size=6)
_LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(
        ["model.p.a", "accepted_values", "simple", "ratio", "derived", "sum", "x", "{{ x }}"]
    )
    | st.text(max_size=20)
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)
# Structured shapes (JSON is YAML): dbt's keys with values of the right and wrong types.
_NAME = st.sampled_from(["a", "b", "x y", "Ward", "{{ n }}", "", 1, None, ["a"]])
_DESC = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["{{ doc('a') }}", "- a: yes\n- b: no", "| a | x |", "a = 1", "{{ var('v') }}"]
    ),
    st.integers(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
_VALUES = st.lists(_LEAF, max_size=4) | _LEAF
_TEST = st.one_of(
    st.sampled_from(["not_null", "unique", 3, None]),
    st.fixed_dictionaries({"accepted_values": st.fixed_dictionaries({"values": _VALUES})}),
    st.fixed_dictionaries(
        {
            "accepted_values": st.fixed_dictionaries(
                {"arguments": st.fixed_dictionaries({"values": _VALUES})}
            )
        }
    ),
    st.fixed_dictionaries(
        {"name": _NAME, "test_name": st.just("accepted_values"), "values": _VALUES}
    ),
)
_COLUMN = st.fixed_dictionaries(
    {"name": _NAME},
    optional={
        "description": _DESC,
        "data_tests": st.lists(_TEST, max_size=2),
        "entity": st.sampled_from([{"type": "primary"}, {"name": "e"}, "primary", None, False]),
    },
)
_METRIC = st.fixed_dictionaries(
    {"name": _NAME, "type": st.sampled_from(["simple", "ratio", "derived", "cumulative", None, 3])},
    optional={
        "agg": st.sampled_from(["sum", "count", "percentile", "median", "bogus", None]),
        "expr": st.sampled_from(["x", "a + b", "select 1", "", "x; drop", 1, None]),
        "percentile": st.sampled_from([0.5, 95, 250, "x", True]),
        "numerator": _NAME,
        "denominator": st.sampled_from(["a", "b", {"name": "a", "filter": "x"}, None]),
        "input_metrics": st.lists(
            st.sampled_from(["a", "b", {"name": "a", "alias": "z"}, 1]), max_size=3
        ),
        "type_params": st.fixed_dictionaries(
            {}, optional={"measure": _NAME, "expr": _NAME, "metrics": st.lists(_NAME, max_size=2)}
        ),
        "filter": st.sampled_from(["{{ Dimension('x') }}", "", None]),
        "label": _DESC,
    },
)
_MODEL = st.fixed_dictionaries(
    {"name": _NAME},
    optional={
        "description": _DESC,
        "columns": st.lists(_COLUMN, max_size=3),
        "data_tests": st.lists(_TEST, max_size=2),
        "config": st.fixed_dictionaries({}, optional={"alias": _NAME, "tags": st.just(["t"])}),
        "semantic_model": st.sampled_from([True, False, {"enabled": False}, {"enabled": True}]),
        "metrics": st.lists(_METRIC, max_size=3),
    },
)
_SEMANTIC = st.fixed_dictionaries(
    {"name": _NAME},
    optional={
        "model": st.sampled_from(["ref('a')", "ref('zz')", "{{ ref('a') }}", None]),
        "measures": st.lists(
            st.fixed_dictionaries(
                {"name": _NAME},
                optional={"agg": st.sampled_from(["sum", "count_distinct", "x"]), "expr": _NAME},
            ),
            max_size=3,
        ),
        "entities": st.lists(
            st.fixed_dictionaries({"name": _NAME}, optional={"expr": _NAME}), max_size=2
        ),
    },
)
_PROPERTIES = st.fixed_dictionaries(
    {},
    optional={
        "models": st.lists(_MODEL, max_size=3),
        "semantic_models": st.lists(_SEMANTIC, max_size=2),
        "metrics": st.lists(_METRIC, max_size=3),
        "sources": st.just([{"name": "s"}]),
    },
)


_COUNT = {"ok": 0, "coded": 0, "units": 0}


def _check(root: Path, path: Path | None = None) -> None:
    try:
        result = read(path or root)
    except SourceError as exc:
        assert exc.code in ("E503", "E504") and exc.path, exc.message
        _COUNT["coded"] += 1
        return
    assert_spans_exact(path or root, result)
    _COUNT["ok"] += 1
    _COUNT["units"] += len(result.units)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(yml=_RAW, md=_DOCS)
def test_any_property_and_docs_file_is_a_coded_error_or_exact_units(
    tmp_path: Path, yml: bytes, md: bytes
) -> None:
    write(tmp_path, "dbt_project.yml", "name: fuzz\n")
    write(tmp_path, "models/a.yml", yml)
    write(tmp_path, "models/docs.md", md)
    _check(tmp_path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(nodes=_JSON, tail=st.binary(max_size=40))
def test_any_manifest_is_a_coded_error_or_exact_units(
    tmp_path: Path, nodes: object, tail: bytes
) -> None:
    doc = {
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": nodes,
        "metrics": nodes,
        "semantic_models": nodes,
    }
    path = write(tmp_path, "manifest.json", json.dumps(doc).encode() + tail)
    _check(tmp_path, path)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(props=_PROPERTIES, md=_DOCS)
def test_any_shape_of_dbt_properties_is_a_coded_error_or_exact_units(
    tmp_path: Path, props: dict[str, object], md: bytes
) -> None:
    write(tmp_path, "dbt_project.yml", "name: fuzz\n")
    write(tmp_path, "models/a.yml", json.dumps(props, indent=1))
    write(tmp_path, "models/docs.md", md)
    _check(tmp_path)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    models=st.lists(_MODEL, max_size=3),
    metrics=st.lists(_METRIC, max_size=3),
    sem=st.lists(_SEMANTIC, max_size=2),
)
def test_any_shape_of_manifest_nodes_is_a_coded_error_or_exact_units(
    tmp_path: Path,
    models: list[dict[str, object]],
    metrics: list[dict[str, object]],
    sem: list[dict[str, object]],
) -> None:
    nodes: dict[str, object] = {}
    for n, model in enumerate(models):
        nodes[f"model.p.m{n}"] = {
            **model,
            "columns": {str(i): c for i, c in enumerate(model.get("columns") or [])},
        }
        nodes[f"test.p.t{n}"] = {
            "test_metadata": {"name": "accepted_values", "kwargs": {"values": ["a", "b"]}},
            "attached_node": f"model.p.m{n}",
            "column_name": "0",
        }
    doc = {
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
        "nodes": nodes,
        "metrics": {f"metric.p.{i}": m for i, m in enumerate(metrics)},
        "semantic_models": {f"semantic_model.p.{i}": m for i, m in enumerate(sem)},
    }
    path = write(tmp_path, "manifest.json", json.dumps(doc, indent=1))
    _check(tmp_path, path)


def test_both_outcomes_were_reached() -> None:
    # Runs after the two sweeps (file order): a sweep that only ever failed, or only
    # ever passed, would not have tested the other path.
    assert _COUNT["ok"] > 0 and _COUNT["coded"] > 0 and _COUNT["units"] > 0, _COUNT
