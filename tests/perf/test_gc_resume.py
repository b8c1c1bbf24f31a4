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
    host = [[] for _ in range(2_000)]  # lists are always tracked: frozen with the heap
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0
        with gcpause.paused():
            ours = [[] for _ in range(5_000)]
            with gcpause.resumed():
                _kept(host, ours)
        _kept(host, ours)
    finally:
        gc.unfreeze()


def _kept(host: list[list[int]], ours: list[list[int]]) -> None:
    """The host's objects are still frozen and none of ours joined them, looked at object
    by object (a frozen object is in no generation gc.get_objects lists): a count of the
    frozen ones also moved when another thread of the process (xdist's channel, a daemon
    thread an earlier test left) freed objects the freeze had taken (357 once, under load)."""
    listed = {id(o) for o in gc.get_objects()}
    assert not any(id(o) in listed for o in host), "the host's objects were unfrozen"
    assert all(id(o) in listed for o in ours), "ours were frozen with the host's"
