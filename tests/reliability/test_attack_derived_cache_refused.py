"""Issue 27: a derived cache the file system refuses to write does not fail the command.
The stat cache (``.evidence-cache/stat-cache.bin``) only saves the next run some reads: when
its write is refused (here a real EISDIR: a folder stands at its name; a full disk gives
ENOSPC at the same call), the command completes, warns, and the next run reads every unit
again.  Before, the command ended in E604 naming the cache."""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_runner import invoke


def test_attack_a_refused_stat_cache_write_warns_and_the_command_completes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    made = invoke(["workspace", "new", str(root), "--id", "t", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stdout
    blocker = root / ".evidence-cache" / "stat-cache.bin"
    blocker.mkdir(parents=True)
    (blocker / "keep").write_text("a folder where the cache file goes")
    runs, warned = 0, 0
    for args in (["consolidate"], ["validate"], ["consolidate"]):
        result = invoke(["workspace", "evidence", *args, "--workspace-root", str(root), "--json"])
        assert result.exit_code == 0, result.stdout + result.stderr
        warned += any(
            w["path"] == ".evidence-cache/stat-cache.bin" and "free disk space" in w["message"]
            for w in result.json["warnings"]
        )
        runs += 1
    assert warned >= 1  # the first consolidate at least says why the cache is missing
    first = invoke(["workspace", "evidence", "status", "--workspace-root", str(root), "--json"])
    assert first.exit_code == 0 and first.json["ok"], first.stdout
    # The cache is written again as soon as it can be.
    shutil.rmtree(blocker)
    again = invoke(
        ["workspace", "evidence", "consolidate", "--workspace-root", str(root), "--json"]
    )
    assert again.exit_code == 0, again.stdout
    assert blocker.is_file()
    assert runs == 3
