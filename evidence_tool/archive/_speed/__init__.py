"""Shortcuts that exist only for speed, beside a plain path that gives the same result.

- ``splice``: builds a new manifest by copying the previous one's bytes for the
  entries that did not change; the plain path encodes every entry.
  ``tests/perf/test_splice.py`` compares the two byte for byte, whatever changed.
- ``unitrecords``: the units ``init`` parsed, kept for the first activation; the plain
  path parses every blob again.  ``tests/perf/test_one_parse.py`` (the first
  activation after init) builds the same index from the records, from damaged
  records and from a workspace consolidated afresh.
"""
