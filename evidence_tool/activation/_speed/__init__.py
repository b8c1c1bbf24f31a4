"""Shortcuts that exist only for speed, beside a plain path that gives the same result.

- ``postings``: a served revision's BM25 ranking from postings held in memory; the
  plain path is FTS5's ``bm25()`` over the index file (``sqlite_search``), which ranks
  whatever the postings cannot vouch for.  ``tests/activation/test_postings.py``
  compares the two hit by hit (scores bit for bit, ties, filters, dense and hybrid).
- ``prebuild``: the first activation's index built from the unit records ``init``
  recorded, without parsing the units again; the plain path parses them.
  ``tests/reliability/test_attack_index_prebuild.py`` and ``tests/perf/test_one_parse.py``
  hold it to the plain path's index.
"""
