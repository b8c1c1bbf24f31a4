"""Nine paired edits on a generated workspace: a no-op consolidate, then one edited unit.

python bench/edit_pairs.py TREE   # TREE: a checkout with bench/out/ws-10000 generated

Prints the medians (wall and CPU) and the one-edit / no-op ratio, in process; run it
for two trees in turn, twice, to compare them (docs/performance.md, issue 18).
"""

from __future__ import annotations

import shutil
import statistics
import sys
import time
from pathlib import Path


def main(tree: Path) -> None:
    sys.path.insert(0, str(tree))
    from evidence_tool.archive.local import LocalEvidenceArchive

    dst = Path(f"/tmp/edit-pairs-{tree.name}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(tree / "bench" / "out" / "ws-10000", dst)
    LocalEvidenceArchive(dst).consolidate("bench")
    noop_w, noop_c, edit_w, edit_c = [], [], [], []
    path = sorted((dst / "evidence" / "curated" / "domain").glob("*.md"))[0]
    for i in range(9):
        t, c = time.perf_counter(), time.process_time()
        LocalEvidenceArchive(dst).consolidate("bench")
        noop_w.append(time.perf_counter() - t)
        noop_c.append(time.process_time() - c)
        path.write_text(path.read_text().rstrip("\n") + f" Edit {i}.\n")
        t, c = time.perf_counter(), time.process_time()
        LocalEvidenceArchive(dst).consolidate("bench")
        edit_w.append(time.perf_counter() - t)
        edit_c.append(time.process_time() - c)
    m = statistics.median
    print(
        f"{tree.name}: no-op {m(noop_w):.3f} s wall {m(noop_c):.3f} s CPU | "
        f"edit {m(edit_w):.3f} s wall {m(edit_c):.3f} s CPU | "
        f"ratio {m(edit_w) / m(noop_w):.2f} wall {m(edit_c) / m(noop_c):.2f} CPU"
    )
    shutil.rmtree(dst, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
