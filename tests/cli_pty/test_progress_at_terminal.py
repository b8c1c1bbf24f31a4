"""The commands with a progress bar, run at a terminal on workspaces past its threshold.

Issue 27: at a terminal, validate, consolidate and decide on 400 units or more ended
with exit 70 (a bar closed at done >= total was updated again under the same label);
decide had written its files and recorded nothing.  Sizes other than the issue's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pty_workspaces import Templates, copy
from ptyrun import Ran, at_terminal, piped, progress_drawn, without_progress


def same_but_progress(tty: Ran, pipe: Ran) -> None:
    assert "Traceback" not in tty.stderr + tty.stdout, tty.where()
    assert tty.exit == pipe.exit, f"{tty.where()}\n---\n{pipe.where()}"
    assert tty.stdout == pipe.stdout, f"{tty.where()}\n---\n{pipe.where()}"
    assert without_progress(tty.stderr) == pipe.stderr, f"{tty.where()}\n---\n{pipe.where()}"


def result(argv: list[str], ws: Path) -> dict[str, Any]:
    ran = piped(argv, ws)
    assert ran.exit == 0, ran.where()
    return json.loads(ran.stdout)["result"]  # type: ignore[no-any-return]


def both(argv: list[str], template: Path, run: Path) -> tuple[Ran, Ran]:
    """``tht ARGV`` piped on one copy of ``template``, then at a terminal on a fresh one
    at the same path (so every path printed is the same)."""
    pipe = piped(argv, copy(template, run))
    tty = at_terminal(argv, copy(template, run))
    return tty, pipe


@pytest.mark.parametrize("units", [1000])
def test_validate_consolidate_decide_at_a_terminal(
    units: int, templates: Callable[[int], Templates], tmp_path: Path
) -> None:
    t = templates(units)
    run = tmp_path / "ws"
    tty, pipe = both(["workspace", "evidence", "validate"], t.fresh, run)
    same_but_progress(tty, pipe)
    assert tty.exit == 0 and progress_drawn(tty.stderr), tty.where()

    tty, pipe = both(["workspace", "evidence", "consolidate"], t.fresh, run)
    same_but_progress(tty, pipe)
    assert tty.exit == 0 and progress_drawn(tty.stderr), tty.where()
    state = result(["workspace", "evidence", "status", "--json"], run)["state"]
    assert state["active"] is not None and state["pending"] is None, state

    source, revision = t.pending()
    decide = ["workspace", "evidence", "decide", "--source-id", source, "--revision", revision]
    tty, pipe = both([*decide, "--decision", "replace"], t.ready, run)
    same_but_progress(tty, pipe)
    assert tty.exit == 0, tty.where()
    # The decision is recorded, not only its files written: nothing is left pending.
    (listed,) = result(["workspace", "evidence", "sources", "list", "--json"], run)["sources"]
    assert listed["pending_comparison"] is None and listed["decision"] is not None, listed
    state = result(["workspace", "evidence", "status", "--json"], run)["state"]
    assert state["active"] is not None and state["pending"] is None, state


_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def frames(stderr: str) -> list[str]:
    """Every line the bar drew (each redraw after a carriage return), escapes taken out."""
    return [_ESCAPE.sub("", f) for f in re.split(r"[\r\n]", stderr) if f.strip()]


@pytest.mark.parametrize("columns", [24, 30, 46])
def test_the_bar_fits_a_narrow_terminal(
    columns: int, templates: Callable[[int], Templates], tmp_path: Path
) -> None:
    """A bar wider than the terminal wraps, and each redraw then leaves a stale line behind
    (at 40 columns, validate of 1,500 units scrolled some 35 lines of bar).  Every frame
    stays narrower than the terminal; where a bar of a few cells fits, it is drawn."""
    ws = copy(templates(1000).fresh, tmp_path / "ws")
    tty = at_terminal(["workspace", "evidence", "validate"], ws, columns=columns)
    pipe = piped(["workspace", "evidence", "validate"], ws)
    same_but_progress(tty, pipe)
    drawn = [f for f in frames(tty.stderr) if f.startswith("validating")]
    assert all(len(f) < columns for f in drawn), (columns, max(drawn, key=len), tty.where())
    if columns >= 30:  # 30: a bar without its ETA; 46: with it
        assert drawn and "[" in drawn[-1] and drawn[-1].endswith("100%"), tty.where()
