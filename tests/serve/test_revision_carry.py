"""A switch carries the old view's parsed records and texts into the new one while the
old view's request threads and its background text reader still add to them."""

from __future__ import annotations

import sys
import threading

from evidence_tool.serve.revisions import carried


def test_carrying_while_other_threads_add_never_raises_and_keeps_only_what_is_held() -> None:
    before = {f"h{n}": f"text {n}" for n in range(5000)}
    held = {f"h{n}" for n in range(0, 20000, 2)}
    stop = threading.Event()
    added = 0

    def add() -> None:  # the old view's warm_texts, still reading
        nonlocal added
        n = 5000
        while not stop.is_set() and n < 200_000:
            before[f"h{n}"] = f"text {n}"
            n += 1
            added += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    writer = threading.Thread(target=add)
    writer.start()
    try:
        carries = [carried(before, held) for _ in range(200)]
    finally:
        stop.set()
        writer.join()
        sys.setswitchinterval(interval)
    assert added > 0  # the writer really ran beside the carries
    for got in carries:
        assert set(got) <= held and all(got[h] == before[h] for h in got)
        assert {f"h{n}" for n in range(0, 5000, 2)} <= set(got)
