"""Without an embedding section nothing loads torch or sentence-transformers: the
default install stays light (they are extras)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys
from evidence_tool.cli.main import main
for args in (["consolidate"], ["search", "degenza"], ["search", "degenza", "--mode", "bm25"]):
    try:
        main([*sys.argv[2:3], "workspace", "evidence", *args, "--workspace-root", sys.argv[1]])
    except SystemExit as exc:
        assert exc.code == 0, (args, exc.code)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sentence_transformers"))
print(json.dumps(heavy))
"""


def test_kind_none_never_imports_torch(workspace: Path, tmp_path: Path) -> None:
    inst = tmp_path / "inst.yaml"
    inst.write_text(
        json.dumps({"installation_version": 1, "evidence": {"embedding": {"kind": "none"}}})
    )
    runs = 0
    for extra in ([], [f"--installation={inst}"]):
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(workspace), *extra],
            capture_output=True,
            text=True,
            timeout=300,
            env={"THT_ACTOR": "alice", "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.strip().splitlines()[-1]) == []
        runs += 1
    assert runs == 2
