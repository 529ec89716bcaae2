"""Browser helpers modelled on Streamlit's own e2e suite (e2e_playwright/shared/app_utils.py)."""

from __future__ import annotations

import math

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell.browser import READY

TIMEOUT_MS = 60_000
HEIGHT = 900  # the browser window of the screenshot tests
MAX_HEIGHT = 12_000  # full-page shots stop here
COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "world_size": 1, "num_train_epochs": 3}


# A new visitor's first run draws the sidebar and the page's title only, with a hidden button the page's script
# clicks once the sidebar is drawn (steplab_ui/shell/browser.py `sidebar_first`): the page is there after the next run.
PAGE_RUN = f"""() => !document.querySelector(".st-key-{READY}")
    && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']") !== null"""


def wait_for_app_run(page: Page, timeout: int = TIMEOUT_MS) -> None:
    """Idle the way Streamlit's suite waits: connected, script not running (and past a new visitor's sidebar-only
    first run), then a short settle."""
    page.wait_for_timeout(155)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout)
    page.wait_for_function(PAGE_RUN, timeout=timeout)
    page.wait_for_timeout(100)


def open_app(page: Page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=TIMEOUT_MS)
    wait_for_app_run(page)


def sidebar(page: Page) -> Locator:
    return page.get_by_test_id("stSidebar")


def title(page: Page) -> Locator:
    return page.get_by_test_id("stMain").locator("h1").first


def metric_value(page: Page, label: str) -> Locator:
    """The value of the metric card whose label is `label` (lazy-loaded: use `expect`, not a snapshot read)."""
    card = page.get_by_test_id("stMetric").filter(has=page.get_by_test_id("stMetricLabel").filter(has_text=label))
    return card.get_by_test_id("stMetricValue")


def exact_input(page: Page, label: str) -> Locator:
    """A sidebar number input by its accessible name (the help button's "Help for …" name is a button)."""
    return sidebar(page).get_by_role("spinbutton", name=label, exact=True)


def expected_total_steps(**values: float) -> int:
    """What the engine says the Trainer's max_steps is for the course setup changed by `values`."""
    setup, _ = setup_from_mapping({**COURSE, **values})
    return make_plan(setup).max_steps


def hand_total_steps(samples: int, batch: int, accumulation: int, epochs: float) -> int:
    """The chapter's hand arithmetic (newer Trainer: ceil at every step), as a cross-check of the engine."""
    micro = math.ceil(samples / batch)
    return math.ceil(epochs * math.ceil(micro / accumulation))


def expect_no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert "Traceback" not in page.locator("body").inner_text()


SIDEBAR_OPEN = """() => {
    const box = document.querySelector("[data-testid='stSidebar']").getBoundingClientRect();
    return box.width > 0 && box.left >= 0;
}"""


def sidebar_open(page: Page) -> bool:
    return bool(page.evaluate(SIDEBAR_OPEN))


def open_sidebar(page: Page) -> None:
    """Click the expand button until the sidebar stays open (a late resize handler may collapse it again)."""
    for _ in range(4):
        if not sidebar_open(page):
            page.get_by_test_id("stExpandSidebarButton").click()
        try:
            page.wait_for_function(SIDEBAR_OPEN, timeout=10_000)
        except PlaywrightTimeoutError:
            continue
        page.wait_for_timeout(1_000)  # the slide-in transition, and any late collapse
        if sidebar_open(page):
            return
    raise AssertionError("the sidebar did not stay open at 420 px")


def set_size(page: Page, width: int, height: int = HEIGHT) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(300)


def grow_to_full_height(page: Page, width: int) -> None:
    """Streamlit scrolls inside `stMain` (and the sidebar), not the document: make the viewport as tall as the
    content so that the full-page screenshot holds all of it."""
    height = page.evaluate(
        """(open) => {
            const main = document.querySelector("[data-testid='stMain']");
            const content = document.querySelector("[data-testid='stSidebarContent']");
            return Math.max(main ? main.scrollHeight : 0, open && content ? content.scrollHeight : 0);
        }""",
        sidebar_open(page),
    )
    set_size(page, width, max(HEIGHT, min(int(height), MAX_HEIGHT)))


LOWEST_CONTRAST = """() => {
    const luminance = (css) => {
        const channels = css.match(/\\d+/g).slice(0, 3).map((c) => c / 255)
            .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2];
    };
    const ground = luminance(getComputedStyle(document.querySelector("[data-testid='stApp']")).backgroundColor);
    const texts = [...document.querySelectorAll("[data-testid='stPlotlyChart'] text")]
        .filter((text) => text.textContent.trim());
    if (!texts.length) return null;
    let lowest = [99, ""];
    for (const text of texts) {
        if (getComputedStyle(text).fill === "rgb(0, 0, 0)") continue;  // the flash label, on the vermillion
        const ink = luminance(getComputedStyle(text).fill);
        const ratio = (Math.max(ink, ground) + 0.05) / (Math.min(ink, ground) + 0.05);
        if (ratio < lowest[0]) lowest = [ratio, text.textContent];
    }
    return lowest;
}"""


def lowest_figure_contrast(page: Page) -> tuple[float, str]:
    """(the lowest WCAG contrast of any word drawn in a figure against the app's ground, that word), once drawn.

    Black words are skipped: only the animation's optimizer flash uses black, on its vermillion box.
    """
    page.wait_for_function(f"({LOWEST_CONTRAST})() !== null", timeout=TIMEOUT_MS)
    ratio, text = page.evaluate(LOWEST_CONTRAST)
    return ratio, text
