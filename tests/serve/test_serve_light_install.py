"""Every command but ``serve`` runs without the MCP SDK: ``tht --help``, a search and the
serve command's own --help load neither mcp nor its web stack (start-up time)."""

from __future__ import annotations

from pathlib import Path

from helpers import tht_modules

SDK = ("mcp", "mcp_types", "starlette", "uvicorn", "sse_starlette", "httpx2", "pydantic")


def _sdk(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in SDK)


def test_no_command_but_serve_imports_the_sdk(served: Path) -> None:
    runs = [
        ("--help",),
        ("workspace", "evidence", "serve", "--help"),
        ("workspace", "evidence", "search", "degenza", "--workspace-root", str(served)),
        ("workspace", "evidence", "status", "--workspace-root", str(served)),
    ]
    for args in runs:
        modules, _ = tht_modules(served, *args)
        # The command group is lazy: serve's module loads when serve is asked for, and then
        # it must not pull the SDK either.
        assert ("evidence_tool.cli.serve_cmds" in modules) == ("serve" in args), args
        assert _sdk(modules) == [], args
    assert len(runs) == 4


def test_serve_without_the_extra_says_how_to_install_it(served: Path) -> None:
    """Without the SDK the command is a usage error naming the extra, not a traceback."""
    import subprocess
    import sys

    from serve_helpers import child_env

    script = (
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the serve extra were not installed\n"
        "from evidence_tool.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )
    args = ["workspace", "evidence", "serve", "--workspace-root", str(served)]
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "evidence-tool[serve]" in done.stderr and "Traceback" not in done.stderr
