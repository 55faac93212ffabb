"""The inspector page in a real headless Chromium (Debian's): load /ui, ask a question as a
key, and check what the page shows; a screenshot is kept in build/test-artefacts/."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from tests.server.conftest import KEYS, Service
from trilha.server import create_app
from trilha.testing.loopback import free_port

CHROMIUM = shutil.which("chromium")
ARTEFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artefacts"
#: Flags for a closed network (no background connections to refuse) and a root user.
FLAGS = "--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
FLAGS += " --disable-component-update --disable-sync"

#: Asked by no other test, so the first answer is searched, not served from the result cache.
QUESTION = "What does the confidential Q3 2025 budget memo ask the board?"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def live_url(service: Service) -> Iterator[str]:
    """The service's app on a real loopback socket (the browser needs one)."""
    port = free_port()
    config = uvicorn.Config(create_app(service.projects), port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(timeout=10)


def _ask(url: str, key: str, question: str, shot: str | None = None) -> dict[str, object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS.split())
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(f"{url}/ui")
            page.fill("#question", question)
            page.fill("#key", key)
            page.click("button[type=submit]")
            for section in ("results", "trace", "bundle", "graph"):  # each marks itself done
                page.wait_for_selector(f"#{section}[data-done]", timeout=60_000)
            seen = {
                "titles": page.locator("#results .hit-title").all_inner_texts(),
                "bars": page.locator("#results .bars .bar").count(),
                "stages": page.locator("#trace .timeline .row").all_inner_texts(),
                "citations": page.locator("#citations .citation").all_inner_texts(),
                "bundle": page.locator("#bundle").inner_text(),
                "graph_nodes": page.locator("#graph svg .node").count(),
                "error": page.locator("#error").is_visible(),
            }
            if shot:
                ARTEFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTEFACTS / shot), full_page=True)
        finally:
            browser.close()
    return seen


def test_the_page_is_served_with_a_strict_content_policy(live_url: str) -> None:
    r = httpx.get(f"{live_url}/ui")
    assert r.status_code == 200 and "retrieval inspector" in r.text
    assert "default-src 'none'" in r.headers["content-security-policy"]


def test_the_inspector_shows_results_trace_bundle_and_subgraph(live_url: str) -> None:
    seen = _ask(live_url, KEYS["maria"], QUESTION, shot="ui-inspector.png")
    titles = seen["titles"]
    assert isinstance(titles, list) and "budget" in titles[0].lower()
    assert isinstance(seen["bars"], int) and seen["bars"] >= 3 * len(titles)
    stages = " ".join(seen["stages"])  # type: ignore[arg-type]
    assert "bm25" in stages and "merge" in stages and " ms" in stages
    assert seen["citations"] and "finance/budget-memo-q3-2025" in " ".join(seen["citations"])  # type: ignore[arg-type]
    assert "semantic" in str(seen["bundle"]).lower() or "working set" in str(seen["bundle"]).lower()
    assert isinstance(seen["graph_nodes"], int) and seen["graph_nodes"] > 1
    assert seen["error"] is False
    assert (ARTEFACTS / "ui-inspector.png").stat().st_size > 10_000


def test_the_inspector_shows_only_what_the_key_may_see(live_url: str) -> None:
    seen = _ask(live_url, KEYS["bruno"], QUESTION)
    assert "finance/budget-memo-q3-2025" not in " ".join(seen["citations"])  # type: ignore[arg-type]
