"""``state.yaml``: the baseline, active and pending revisions (the only mutable pointer file)."""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.archive.objects import HEX64
from evidence_tool.errors import IntegrityError
from evidence_tool.unit.conflicts import conflict_line
from evidence_tool.unit.yaml_strict import YamlProblem, dump, load_unique

FORMAT = 1


@dataclass(frozen=True)
class State:
    baseline: str | None = None
    active: str | None = None
    pending: str | None = None

    @property
    def newest(self) -> str | None:
        """The snapshot later work derives from: pending, else active, else baseline."""
        return self.pending or self.active or self.baseline

    @property
    def initialized(self) -> bool:
        return self.baseline is not None


def render_state(state: State) -> bytes:
    return dump({"format": FORMAT, **asdict(state)}).encode("utf-8")


def read_state(path: Path) -> State:
    """The state, or an empty one before initialization; malformed state is an integrity error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return State()
    if conflict_line(data.decode("utf-8", "replace")) is not None:
        raise IntegrityError(_merge_message(path), path=str(path))
    try:
        # A key given twice: which of two values would be the pointer is anyone's guess.
        value = load_unique(data.decode("utf-8")).value
    except (UnicodeDecodeError, YamlProblem) as exc:
        raise IntegrityError(
            f"state.yaml cannot be read ({exc}); restore it from Git", path=str(path)
        ) from None
    if (
        not isinstance(value, dict)
        or value.get("format") != FORMAT
        or set(value) != {"format", "baseline", "active", "pending"}
    ):
        raise IntegrityError(
            "state.yaml is not a format-1 state file; restore it from Git", path=str(path)
        )
    for key in ("baseline", "active", "pending"):
        v = value[key]
        if v is not None and not (isinstance(v, str) and HEX64.fullmatch(v)):
            raise IntegrityError(f"state.yaml: {key} is not a revision", path=str(path))
    return State(value["baseline"], value["active"], value["pending"])


# A Git merge or rebase that met two consolidations (two clones each consolidated, then
# one pulled) left conflict markers in these pointer files, which every consolidation
# rewrites; the objects and snapshots of both sides merge as additions, and the curated
# units as Git merges any text.
_REWRITTEN = (
    "evidence/.local/state.yaml",
    "evidence/local-manifest.yaml",
    "evidence/.local/log.jsonl",
)


def _merge_message(path: Path) -> str:
    root = path.parent.parent.parent  # <root>/evidence/.local/state.yaml
    take = shlex.join(["git", "-C", str(root), "checkout", "--ours", "--", *_REWRITTEN])
    return (
        "state.yaml holds Git conflict markers: a merge or rebase met two consolidations "
        "(each clone consolidated, then one pulled). Take one side's pointer files with the "
        "command at the end, resolve any conflicting curated file, then run 'tht workspace "
        "evidence consolidate': it records the merged units as a new revision (the other "
        "side's revision stays in the archive, its log lines in Git history). The command: "
        f"{take}"
    )


def write_state(path: Path, state: State) -> None:
    # The commit point of a consolidation: what it wrote before is referenced from here on.
    fsio.write_atomic(path, render_state(state), commit=True)
