"""Which tests the developers' fast loop leaves out (marked ``heavy`` in conftest.py)."""

from __future__ import annotations

# The developers' fast loop (CONTRIBUTING.md) is `pytest -m "not heavy"`: these modules
# sweep crash points, drive a browser, run many processes or fuzz, and run in full in
# README's command and in CI. Listed here, by path, so no test file has to remember it.
HEAVY_MODULES = frozenset(
    {
        "tests/reliability/test_crash_points.py",
        "tests/reliability/test_exception_points.py",
        # Every command at a terminal and piped, on 700 units and on 12 (minutes); the
        # scanning commands at a terminal on 1,000 units (the fast loop keeps the bar's
        # in-process tests, test_presentation_failures.py).
        "tests/cli_pty/test_every_command_at_a_terminal.py",
        "tests/cli_pty/test_progress_at_terminal.py",
        "tests/reliability/test_crash_regressions.py",
        "tests/reliability/test_archive_stateful.py",
        "tests/reliability/test_io_errors.py",
        "tests/reliability/test_power_loss.py",
        "tests/reliability/test_concurrency.py",
        "tests/reliability/test_fuzz.py",
        "tests/reliability/test_crash_parse_workers.py",
        "tests/reliability/test_lock_attacks.py",
        "tests/reliability/test_secret_leaks.py",
        "tests/reliability/test_catalog_hostile.py",
        "tests/reliability/test_attack_output_paths.py",
        "tests/report/test_report_scale.py",
        "tests/report/test_report_browser.py",
        "tests/gitflow/test_precommit_hooks.py",
        "tests/migrate/test_migrate_idempotence.py",
        "tests/sources/test_sources_scale.py",
        "tests/sources/test_sources_docs.py",
        "tests/unit/test_unit_properties.py",
        # Loads all-MiniLM-L6-v2 and embeds the fixture workspace several times (minutes).
        "tests/activation/test_eval_dense.py",
        # Loads all-MiniLM-L6-v2 (ONNX) and embeds a BIRD-shaped corpus.
        "tests/embedding/test_fusion_bird_shaped.py",
    }
)
# Docs examples that run shell commands are heavy too; the YAML/JSON checks stay fast.
HEAVY_TESTS = (
    "tests/test_docs.py::test_shell_example_runs",
    "tests/test_docs.py::test_quickstart_runs_from_nothing",
    # Two servers in turn, each opening Qdrant's local folder per search (about 10 s).
    "tests/serve/test_stateless.py::test_with_qdrant_a_restarted_server_answers_identically",
    # A cold mypy --strict over the package takes tens of seconds.
    "tests/test_typing.py::test_package_is_clean_under_mypy_strict",
)

# The modules that take longest in README's run (its --durations list), longest first:
# conftest.py starts them first so that the two workers of `-n 2` finish together.
LONGEST_MODULES = (
    "tests/cli_pty/test_every_command_at_a_terminal.py",
    "tests/test_typing.py",
    "tests/reliability/test_archive_stateful.py",
    "tests/gitflow/test_precommit_hooks.py",
    "tests/reliability/test_crash_points.py",
    "tests/reliability/test_exception_points.py",
    "tests/reliability/test_io_errors.py",
    "tests/reliability/test_power_loss.py",
    "tests/reliability/test_crash_parse_workers.py",
    "tests/cli_pty/test_progress_at_terminal.py",
    "tests/embedding/test_dense_search.py",
)
