"""Issue 27 G3/G4, attacked as an outsider: an import file swapped, between its hash and
its reads, for a same-size symbolic link to a file outside the workspace (or its folder
for a link to an outside folder), and a link loop inside an import folder.

The outside files hold a marker word; after every run no file of the workspace (the
registry, the acquisition records, the proposal cache, the curated units) and no output
may hold it, and no run may end in exit 70.  The swaps happen at each read (the
importer's, the span check's, the change check's) through importers registered for the
test, and at random moments through a real process racing real refreshes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import CliResult, tht

from evidence_tool.importers import formats

MARKER = b"quillwort"  # only the outside files hold it
INSIDE = b"Inside rule one is plain.\n"
OUTSIDE = b"quillwort secret rule 42.\n"
assert len(INSIDE) == len(OUTSIDE)

PLUGIN = '''
import os
from evidence_tool.importers.base import Imported, ImportResult, Span, element_id, make_unit
from evidence_tool.unit.model import DomainPayload


def _same_times(f):
    # The attacker copies the inside file's times: size and mtime alone cannot tell them apart.
    st = os.stat(f.abs_path)
    os.utime(os.environ["THT_TEST_OUTSIDE"], ns=(st.st_atime_ns, st.st_mtime_ns))


def _swap_file(f):
    _same_times(f)
    link = f.abs_path.with_name(".swap")
    os.symlink(os.environ["THT_TEST_OUTSIDE"], link)
    os.replace(link, f.abs_path)


def _swap_folder(f):
    _same_times(f)
    folder = f.abs_path.parent
    os.rename(folder, folder.with_name("parked"))
    os.symlink(os.path.dirname(os.environ["THT_TEST_OUTSIDE"]), folder)


def _units(source, f, raw):
    text = raw.split(b"\\n")[0].decode()
    unit = make_unit(id=element_id("swap", "rule"), language=source.language, title="Rule",
                     payload=DomainPayload(rule=text), purposes=("disambiguation",))
    result = ImportResult()
    result.units.append(Imported(unit, [Span(f.path, 0, len(text), text)]))
    return result


class SwapBeforeRead:
    format = "swap-before-read"
    options = {}

    def read(self, source):
        f = source.files[0]
        _swap_file(f)
        return _units(source, f, f.read_bytes(source.max_bytes))


class SwapFolderBeforeRead(SwapBeforeRead):
    format = "swap-folder-before-read"

    def read(self, source):
        f = source.files[0]
        _swap_folder(f)
        with f.open() as handle:
            return _units(source, f, handle.read())


class SwapAfterRead(SwapBeforeRead):
    """Reads honestly, then swaps: the span check and the change check read next."""

    format = "swap-after-read"

    def read(self, source):
        f = source.files[0]
        result = _units(source, f, f.read_bytes(source.max_bytes))
        _swap_file(f)
        return result
'''
PLUGINS = {
    "swap-before-read": "SwapBeforeRead",
    "swap-folder-before-read": "SwapFolderBeforeRead",
    "swap-after-read": "SwapAfterRead",
}


@pytest.fixture
def outside_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "rules.txt").write_bytes(OUTSIDE)
    monkeypatch.setenv("THT_TEST_OUTSIDE", str(folder / "rules.txt"))
    return folder / "rules.txt"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    package = tmp_path / "plugins" / "tht_swap_importers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "swap.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    for name, cls in PLUGINS.items():
        monkeypatch.setitem(formats.FORMATS, name, f"tht_swap_importers.swap:{cls}")
    yield
    sys.modules.pop("tht_swap_importers.swap", None)
    sys.modules.pop("tht_swap_importers", None)


def leaks(ws: Path, *results: CliResult) -> list[str]:
    """Every file of the workspace (the import folder aside) and output holding the marker."""
    found = [r.stdout + r.stderr for r in results if MARKER.decode() in r.stdout + r.stderr]
    for path in ws.rglob("*"):
        rel = path.relative_to(ws).as_posix()
        if rel.startswith(("imports/", ".git/")) or path.is_symlink() or not path.is_file():
            continue
        if MARKER in path.read_bytes():
            found.append(rel)
    return found


@pytest.mark.parametrize("fmt", sorted(PLUGINS))
def test_attack_an_import_file_swapped_for_an_outside_link_is_refused(
    workspace: Path, outside_file: Path, plugin: None, fmt: str
) -> None:
    (workspace / "imports/rules").mkdir(parents=True)
    (workspace / "imports/rules/rules.txt").write_bytes(INSIDE)
    added = tht(workspace, "sources", "add", "--format", fmt, str(workspace / "imports/rules"))
    assert added.exit_code == 0, added.stdout + added.stderr
    result = tht(workspace, "refresh")
    assert result.exit_code == 5, result.stdout + result.stderr
    error = result.json["errors"][0]
    assert error["code"] == "E501" and error["path"] == "imports/rules/rules.txt", error
    assert leaks(workspace, result) == []


def test_attack_a_link_loop_in_an_import_folder_is_a_coded_error(workspace: Path) -> None:
    folder = workspace / "imports/loop"
    folder.mkdir(parents=True)
    (folder / "export.json").write_text("[]")
    os.symlink("b", folder / "a")
    os.symlink("a", folder / "b")
    os.symlink("self", folder / "self")
    added = tht(workspace, "sources", "add", "--format", "vanna", str(folder))
    assert added.exit_code == 5, added.stdout + added.stderr
    error = added.json["errors"][0]
    assert error["code"] == "E501" and "loop" in error["message"], error
    # Entered in workspace.yaml by hand instead: refresh says the same.
    descriptor = workspace / "workspace.yaml"
    value = {
        "descriptor_version": 4,
        "id": "loop-test",
        "name": "Loop test",
        "default_language": "en",
        "evidence": {
            "descriptor_version": 2,
            "sources": [{"kind": "import", "format": "vanna", "path": "imports/loop"}],
        },
    }
    descriptor.write_text(json.dumps(value))
    again = tht(workspace, "refresh")
    assert again.exit_code == 5, again.stdout + again.stderr
    assert again.json["errors"][0]["code"] == "E501"
    assert "loop" in again.json["errors"][0]["message"]


FLIPPER = """
import os, sys, time
target, outside, inside, pause, paused = sys.argv[1:6]
folder, name = os.path.split(target)  # hidden temp names: the walk skips them
link, plain = os.path.join(folder, "." + name + ".l"), os.path.join(folder, "." + name + ".p")
while True:
    if os.path.exists(pause):  # the plain file stays in place until the test resumes
        open(paused, "w").close()
        time.sleep(0.005)
        continue
    try:
        os.unlink(paused)
    except FileNotFoundError:
        pass
    try:
        os.symlink(outside, link)
        os.replace(link, target)
        time.sleep(0.0002)  # a link now and then; the plain file most of the time
        with open(plain, "wb") as f:
            f.write(open(inside, "rb").read())
        os.replace(plain, target)
        time.sleep(0.002)
    except OSError:
        pass
"""

RACES = 24


def hold(pause: Path, paused: Path, still: bool) -> None:
    """Ask the flipper to hold the plain file still (and wait until it does), or to flip."""
    if not still:
        pause.unlink(missing_ok=True)
        return
    pause.touch()
    for _ in range(12_000):  # bounded: 60 s at most, only when the flipper is stuck
        if paused.exists():
            return
        time.sleep(0.005)
    raise AssertionError("the flipper never paused")


def test_attack_refreshes_racing_a_link_flipper_never_import_outside_text(
    workspace: Path, outside_file: Path, tmp_path: Path
) -> None:
    folder = workspace / "imports/v"
    folder.mkdir(parents=True)
    row = {"id": "r1-doc", "question": None, "training_data_type": "documentation"}
    inside_json = json.dumps([{**row, "content": INSIDE.decode().strip()}]).encode()
    outside_json = json.dumps([{**row, "content": OUTSIDE.decode().strip()}]).encode()
    assert len(inside_json) == len(outside_json)
    outside_file.write_bytes(outside_json)
    (tmp_path / "inside.json").write_bytes(inside_json)
    target = folder / "export.json"
    target.write_bytes(inside_json)
    assert tht(workspace, "sources", "add", "--format", "vanna", str(folder)).exit_code == 0
    pause, paused = tmp_path / "pause", tmp_path / "paused"
    flipper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            FLIPPER,
            str(target),
            str(outside_file),
            str(tmp_path / "inside.json"),
            str(pause),
            str(paused),
        ]
    )
    outcomes: dict[str, int] = {}
    results = []
    try:
        for i in range(RACES):
            # Every third refresh runs while the flipper holds the plain file still: under
            # load a refresh rarely fits between two flips, and the race must run both ways
            # (completed refreshes too) however busy the machine is.
            hold(pause, paused, i % 3 == 2)
            result = tht(workspace, "refresh")
            results.append(result)
            assert result.exit_code in (0, 5), result.stdout + result.stderr
            code = "ok" if result.exit_code == 0 else result.json["errors"][0]["code"]
            outcomes[code] = outcomes.get(code, 0) + 1
            # A refresh that saw a new version proposes it; decide nothing, refresh again.
    finally:
        flipper.kill()
        flipper.wait()
    assert sum(outcomes.values()) == RACES
    assert set(outcomes) <= {"ok", "E501"}, outcomes
    assert outcomes.get("ok", 0) >= 1, outcomes  # the race ran both ways
    assert leaks(workspace, *results) == []
    print(f"{RACES} racing refreshes: {outcomes}, 0 leaks")
