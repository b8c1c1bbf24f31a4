"""evidence-tool: curated evidence units (schema_version 4) kept safe, reviewable and traceable."""

__version__ = "0.1.0"
