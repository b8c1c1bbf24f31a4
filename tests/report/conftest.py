"""Browser fixtures for the review page: Debian's Chromium driven by Playwright.

Without /usr/bin/chromium the browser tests skip, unless CI is set: there
they must run (.ci/run installs chromium).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from report_helpers import CHROMIUM, CHROMIUM_ARGS, chromium_available


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THT_ACTOR", "reviewer")
    monkeypatch.delenv("THT_INSTALLATION", raising=False)
    monkeypatch.delenv("THT_NOW", raising=False)


# One browser per test module, closed when it is done: Playwright's sync API keeps an
# asyncio loop running in the main thread while it is open, and a later test that runs its
# own loop there (the MCP clients of tests/serve) would be refused.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not chromium_available():
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {CHROMIUM} is missing: install Debian's chromium")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium); CI runs these tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class Probe:
    """A page plus everything it tried: requests, dialogs, console errors, script errors."""

    page: Any
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


@pytest.fixture
def probe(browser: Any) -> Iterator[Probe]:
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    found = Probe(page)
    page.on("request", lambda r: found.requests.append(r.url))
    page.on("console", lambda m: found.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: found.page_errors.append(str(e)))

    def on_dialog(dialog: Any) -> None:
        found.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield found
    context.close()
