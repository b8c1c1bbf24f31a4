"""The compiled descriptor check agrees with jsonschema on good and damaged descriptors."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.workspace import descriptor
from evidence_tool.workspace.descriptor import _compiled, conforms

WORKSPACE = "workspace.schema.json"
INSTALLATION = "installation.schema.json"

GOOD_WORKSPACES: list[dict[str, Any]] = [
    {
        "descriptor_version": 4,
        "id": "ward-7",
        "name": "Ward seven",
        "default_language": "it",
        "evidence": {"descriptor_version": 1, "sources": []},
    },
    {
        "descriptor_version": 4,
        "id": "w",
        "name": "x",
        "default_language": "en-GB",
        "evidence": {
            "descriptor_version": 2,
            "sources": [
                {"kind": "http", "url": "https://docs.example.org/a?b=1", "title": "A"},
                {"kind": "http", "url": "http://x", "safe_query_params": ["v", "lang"]},
                {"kind": "s3", "bucket": "my.bucket-1", "prefix": "p/", "region": "eu"},
                {"kind": "s3", "bucket": "b2", "endpoint_url": "http://127.0.0.1:9000"},
            ],
        },
    },
]
GOOD_INSTALLATIONS: list[dict[str, Any]] = [
    {"installation_version": 1},
    {
        "installation_version": 1,
        "workspace_registry_root": "/srv/reg",
        "actor": "anna",
        "evidence": {
            "refiner": {"kind": "command", "command": ["refine", "-q"], "timeout_s": 2.5},
            "activation": {"kind": "qdrant", "url": "http://q:6333", "collection": "ev_1"},
            "catalog": {"kind": "ddl", "paths": ["a.sql"], "search_path": ["public"]},
            "network": {"allowed_hosts": ["a.org"], "timeout_s": 1, "max_bytes": 4.0},
        },
    },
]


def _jsonschema_valid(data: Any, name: str) -> bool:
    return not list(descriptor._validator(name).iter_errors(data))


def _agree(data: Any, name: str) -> bool:
    fast = conforms(data, name)
    assert fast == _jsonschema_valid(data, name), data
    return fast


def test_the_shipped_schemas_compile() -> None:
    """Every keyword the schemas use is covered: none falls back to jsonschema wholesale."""
    assert _compiled(WORKSPACE) is not None and _compiled(INSTALLATION) is not None


BAD_WORKSPACES = [
    {"descriptor_version": 4.5},
    {**GOOD_WORKSPACES[0], "descriptor_version": True},
    {**GOOD_WORKSPACES[0], "id": "Ward"},
    {**GOOD_WORKSPACES[0], "name": ""},
    {**GOOD_WORKSPACES[0], "default_language": "english"},
    {**GOOD_WORKSPACES[0], "extra": 1},
    {**GOOD_WORKSPACES[0], "evidence": {"descriptor_version": 1, "sources": [{"kind": "http"}]}},
    {**GOOD_WORKSPACES[0], "evidence": {"descriptor_version": 3}},
    {**GOOD_WORKSPACES[0], "evidence": {"descriptor_version": 2, "sources": [{"kind": "ftp"}]}},
    {
        **GOOD_WORKSPACES[0],
        "evidence": {"descriptor_version": 2, "sources": [{"kind": "http", "url": "ftp://x"}]},
    },
    {
        **GOOD_WORKSPACES[0],
        "evidence": {
            "descriptor_version": 2,
            "sources": [{"kind": "http", "url": "http://x", "safe_query_params": ["a", "a"]}],
        },
    },
    {
        **GOOD_WORKSPACES[0],
        "evidence": {"descriptor_version": 2, "sources": [{"kind": "s3", "bucket": "B"}]},
    },
    [],
    None,
    "workspace",
]
BAD_INSTALLATIONS = [
    {},
    {"installation_version": 1, "actor": ""},
    {"installation_version": 1, "workspace_registry_root": "relative"},
    {"installation_version": 1, "evidence": {"refiner": {"kind": "units", "timeout_s": 0}}},
    {"installation_version": 1, "evidence": {"activation": {"kind": "sqlite", "command": []}}},
    {"installation_version": 1, "evidence": {"network": {"max_bytes": 0}}},
    {"installation_version": 1, "evidence": {"network": {"max_bytes": 2.5}}},
    {"installation_version": 1, "evidence": {"network": {"timeout_s": True}}},
    {"installation_version": 1, "evidence": {"catalog": {"kind": "ddl", "block": 1}}},
]


def test_good_and_bad_corpus_agree() -> None:
    cases = [(d, WORKSPACE) for d in GOOD_WORKSPACES + BAD_WORKSPACES]
    cases += [(d, INSTALLATION) for d in GOOD_INSTALLATIONS + BAD_INSTALLATIONS]
    answers = [_agree(data, name) for data, name in cases]
    assert len(answers) == 28
    assert answers.count(True) == len(GOOD_WORKSPACES) + len(GOOD_INSTALLATIONS)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.floats(-2, 5, allow_nan=False),
    st.sampled_from(
        ["", "x", "ward-7", "Ward", "it", "en-GB", "http", "s3", "https://a.b/c", "ftp://x"]
    ),
    st.sampled_from(["sqlite", "qdrant", "command", "none", "units", "ddl", "/abs", "a b"]),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["kind", "x", "1"]), inner)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def _damaged(draw: st.DrawFn) -> tuple[Any, str]:
    """A good descriptor with one value replaced, one key added or one key removed."""
    name = draw(st.sampled_from([WORKSPACE, INSTALLATION]))
    base = copy.deepcopy(
        draw(st.sampled_from(GOOD_WORKSPACES if name == WORKSPACE else GOOD_INSTALLATIONS))
    )
    path = draw(st.sampled_from(_paths(base)))
    if not path:
        return base, name
    parent = base
    for step in path[:-1]:
        parent = parent[step]
    action = draw(st.sampled_from(["replace", "add", "remove"]))
    if action == "replace":
        parent[path[-1]] = draw(_VALUES)
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["kind", "url", "extra", "sources", "title"]))] = draw(_VALUES)
    elif action == "remove":
        del parent[path[-1]]
    return base, name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged())
def test_damaged_descriptors_agree(case: tuple[Any, str]) -> None:
    _agree(*case)


@settings(max_examples=150, deadline=None)
@given(_VALUES, st.sampled_from([WORKSPACE, INSTALLATION]))
def test_arbitrary_values_agree(value: Any, name: str) -> None:
    _agree(value, name)
