"""The warehouse catalog: relations, columns and types read from DDL files, SQLite or a
live PostgreSQL, and the checks of units against it (SPEC.md 13).

No package face: each name is imported from its module (``catalog.settings``,
``catalog.workspace_check``, ``catalog.ddl``, ...), so that loading one loads only what
it needs (``tht --help`` and a no-op consolidate load none of them).
"""
