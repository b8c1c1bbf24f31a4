"""Shortcuts that exist only for speed, beside a plain path that gives the same result.

- ``statcache``: recognizes unchanged curated files by their stat and skips reading
  them; the plain path reads and parses every file.  ``tests/perf/test_stat_cache.py``
  and ``tests/perf/test_racy_scan.py`` prove every edit is still seen (same size and
  mtime, replaced inode, racily clean, damaged or foreign caches).
- ``gcpause``: pauses the cyclic garbage collector over bulk work; nothing a command
  returns depends on it.  ``tests/perf/test_gc_resume.py`` proves cycles made in a
  resumed callback are still collected and a host's frozen objects stay frozen.
- ``parallel``: the scan's parse on every core (forked workers send flat results back);
  the plain path is ``curated.parse_file`` for each file in turn.
  ``tests/perf/test_parallel_scan.py`` and ``tests/perf/test_flat_worker_results.py``
  compare the two reports, hashes and units.
"""
