"""The Git flow's typed results survive their JSON form, and their warnings are envelope warnings."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.errors import EvidenceWarning
from evidence_tool.gitflow.records import GitCommands, GitFile, GitState, PartialStage
from evidence_tool.gitflow.roles import Role

_ENVELOPE = json.loads(
    (Path(__file__).parents[2] / "evidence_tool/schemas/cli/envelope.schema.json").read_text()
)
_WARNING = jsonschema.Draft202012Validator(_ENVELOPE["$defs"]["warning"])

texts = st.text(max_size=12)
maybe = st.none() | texts
paths = st.lists(texts, max_size=3).map(tuple)
warnings = st.builds(
    EvidenceWarning,
    texts,
    maybe,
    st.none() | st.integers(1, 10**6),
    st.none() | st.sampled_from(["W801", "W802", "W804"]),
    st.none() | st.integers(1, 500),
)
files = st.builds(GitFile, texts, st.sampled_from(list(Role)), maybe)
partials = st.builds(PartialStage, paths, paths)
states = st.builds(
    GitState,
    st.booleans(),
    maybe,
    maybe,
    maybe,
    maybe,
    maybe,
    st.lists(files, max_size=3).map(tuple),
    st.lists(files, max_size=3).map(tuple),
    st.lists(files, max_size=3).map(tuple),
    paths,
    paths,
    st.none() | partials,
    st.none() | st.booleans(),
    st.lists(warnings, max_size=3).map(tuple),
)
commands = st.builds(
    GitCommands,
    texts,
    paths,
    maybe,
    maybe,
    texts,
    paths,
    paths,
    st.lists(warnings, max_size=3).map(tuple),
)


@settings(max_examples=60)
@given(states)
def test_git_state_round_trips_through_json(state: GitState) -> None:
    data = state.to_json()
    assert GitState.from_json(json.loads(json.dumps(data))) == state
    for w in data["warnings"]:  # type: ignore[union-attr]
        _WARNING.validate(w)


@settings(max_examples=60)
@given(commands)
def test_git_commands_round_trip_through_json(cmds: GitCommands) -> None:
    data = cmds.to_json()
    assert GitCommands.from_json(json.loads(json.dumps(data))) == cmds
    for w in data["warnings"]:  # type: ignore[union-attr]
        _WARNING.validate(w)


def test_an_unavailable_state_keeps_the_keys_status_printed_before() -> None:
    assert list(GitState.unavailable("not a Git worktree").to_json()) == [
        "available", "note", "repository", "workspace_path", "branch", "head", "staged",
        "modified", "untracked", "conflicted", "ignored", "partial_stage", "clean", "warnings",
    ]  # fmt: skip
    assert GitFile("evidence/curated/a.md", Role.CURATED).to_json() == {
        "path": "evidence/curated/a.md",
        "role": "curated",
    }
