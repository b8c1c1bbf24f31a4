"""Shortcuts that exist only for speed, beside a plain path that gives the same result.

- ``statcache``: recognizes unchanged curated files by their stat and skips reading
  them; the plain path reads and parses every file.  ``tests/perf/test_stat_cache.py``
  and ``tests/perf/test_racy_scan.py`` prove every edit is still seen (same size and
  mtime, replaced inode, racily clean, damaged or foreign caches).
- ``gcpause``: pauses the cyclic garbage collector over bulk work; nothing a command
  returns depends on it.  ``tests/perf/test_gc_resume.py`` proves cycles made in a
  resumed callback are still collected and a host's frozen objects stay frozen.

The scan's forked parse workers (``scan._parse_many``) belong here too; they stay in
``scan.py`` until they are split out of it (CONTRIBUTING.md, issue 32).
"""
