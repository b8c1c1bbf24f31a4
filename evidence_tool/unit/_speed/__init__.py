"""Shortcuts that exist only for speed, beside a plain path that gives the same result.

Each answers only where it can vouch for the plain path's answer and otherwise hands
over to it, so the plain path alone is the behaviour and reads on its own:

- ``yaml_fast``: a line reader for frontmatter as the renderer writes it; the plain
  path is ``yaml_strict``'s event loader.  ``tests/unit/test_yaml_fast.py`` compares
  the two documents on rendered and mutated frontmatter.
- ``roundtrip``: says a typed unit's rendering parses back to it without parsing it;
  the plain path is ``parse_unit(render(u))``.  ``tests/unit/test_roundtrip.py``
  parses whatever it vouches for, on generated units and every importer's output.
"""
