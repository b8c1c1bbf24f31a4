"""Growth of a parser's work with its input: a ratio of two CPU timings in one test.

A linear parser does about 4x the work on an input 4x as long; a quadratic one 16x,
a cubic one 64x.  The check takes the least CPU time of several runs per size (the
least is the run the machine disturbed least) and allows up to ``limit`` (8x by
default): wide enough for a loaded machine, narrow enough that a quadratic parser
fails.  No absolute time is asserted anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def _least_cpu(fn: Callable[[Any], object], arg: Any, rounds: int = 5) -> float:
    # Repeat a fast call until one round lasts long enough for the clock to be exact.
    start = time.process_time()
    fn(arg)
    once = max(time.process_time() - start, 1e-6)
    per_round = max(1, int(0.02 / once))
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(per_round):
            fn(arg)
        best = min(best, (time.process_time() - start) / per_round)
    return best


def growth(fn: Callable[[Any], object], make: Callable[[int], Any], n: int) -> float:
    """CPU time of ``fn(make(4n))`` over that of ``fn(make(n))``."""
    small, large = make(n), make(4 * n)
    fn(small)  # warm caches (compiled patterns, imports)
    return _least_cpu(fn, large) / _least_cpu(fn, small)


def assert_linear(
    fn: Callable[[Any], object], make: Callable[[int], Any], n: int, limit: float = 8.0
) -> float:
    ratio = growth(fn, make, n)
    for _ in range(2):  # retries: a burst of load on the large runs alone
        if ratio <= limit:
            break
        ratio = min(ratio, growth(fn, make, n))
    assert ratio <= limit, f"4x the input took {ratio:.1f}x the work (linear is ~4x)"
    return ratio
