"""A callback run with the collector back on (``gcpause.resumed``: the activation inside a
paused consolidation) must not make the collector walk every object the paused block
built: its first young collection walked all of them (30 ms of a one-edit consolidate at
10,000 units, issue 20).  Counted by the objects the collector is told to skip, not timed."""

from __future__ import annotations

import gc

from evidence_tool.workspace._speed import gcpause


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_objects_made_while_paused_are_not_walked_by_the_resumed_callback() -> None:
    with gcpause.paused():
        kept = [{"n": i, "t": (i, str(i))} for i in range(23_456)]
        with gcpause.resumed():
            assert gc.isenabled()
            assert gc.get_freeze_count() >= 2 * len(kept)  # set aside, not walked
            gc.collect(0)
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0  # all handed back to the collector
    assert len(kept) == 23_456


def test_a_cycle_made_inside_the_callback_is_still_collected() -> None:
    with gcpause.paused(), gcpause.resumed():
        node = _Node()
        marker = gc.get_referrers  # keep a name alive across the collection
        del node
        assert gc.collect() >= 1
        assert marker is gc.get_referrers


def test_a_host_that_froze_its_own_objects_keeps_them_frozen() -> None:
    """A server that froze its heap before forking workers: the tool neither freezes on
    top of it nor unfreezes the host's objects."""
    gc.freeze()
    try:
        theirs = gc.get_freeze_count()
        assert theirs > 0
        with gcpause.paused():
            _ = [{"n": i} for i in range(5_000)]
            with gcpause.resumed():
                assert _kept(theirs), (gc.get_freeze_count(), theirs)
        assert _kept(theirs), (gc.get_freeze_count(), theirs)
    finally:
        gc.unfreeze()


def _kept(theirs: int) -> bool:
    """The host's frozen objects are still frozen and none of ours joined them.  Another
    thread of the process (pytest-xdist's channel) may free a few frozen objects meanwhile,
    so a handful fewer is allowed; an unfreeze would leave none, a freeze add thousands."""
    return theirs - 100 <= gc.get_freeze_count() <= theirs
