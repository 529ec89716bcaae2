"""Full-page screenshots of every page × language × width × theme into artifacts/screenshots/ (git-ignored).

One page load per page × language keeps the suite fast on a small machine: the page is drawn at 1280 × 900,
then switched to dark by emulating `prefers-color-scheme` (Streamlit follows the system theme live), then
resized to 420 × 900 (Streamlit collapses the sidebar when the window becomes narrow, as on a phone).
Every state asserts the page drew completely and shows no Streamlit exception and no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from steplab.i18n import t
from steplab_ui.shell.layout import CONSOLE_CLASS

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import (
    HEIGHT,
    expect_no_exception,
    grow_to_full_height,
    lowest_figure_contrast,
    open_app,
    open_sidebar,
    set_size,
    sidebar,
    sidebar_open,
    title,
    wait_for_app_run,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 60_000
WIDTHS = (1280, 420)
THEMES = ("light", "dark")
PAGES = {"home": "/", "calculator": "/calculator", "compare": "/compare", "config": "/config", "lessons": "/lessons",
         "labs": "/labs"}


# Every page once, the languages taking turns, and the calculator (the page the course opens on) in both: each
# shot covers both widths and both themes. (All twelve took two minutes of every CI run; the axe audit and the
# presenter tests open every page in the other language too.)
SHOTS = [("calculator", "en"), ("compare", "en"), ("labs", "zh")]  # the pages with figures (home, config,
# lessons and the Chinese calculator: the presenter, accessibility, config and journey tests)


def page_url(server: StreamlitServer, name: str, lang: str) -> str:
    return server.url + PAGES[name] + ("?lang=en" if lang == "en" else "")


def wait_until_drawn(page: Page, name: str, lang: str) -> None:
    """The page's own content is on screen, lazy-loaded widgets and plotly charts included."""
    if name == "lessons":  # titled by the lesson it opens on
        expect(title(page)).to_be_visible(timeout=SLOW)
    else:
        expect(title(page)).to_have_text(t(lang, f"page.{name}.title"), timeout=SLOW)
    expect(sidebar(page).get_by_role("spinbutton")).to_have_count(5, timeout=SLOW)
    expect(sidebar(page).get_by_role("slider")).to_have_count(5, timeout=SLOW)
    main = page.get_by_test_id("stMain")
    if name == "home":
        links = main.get_by_test_id("stPageLink")
        for target in ("calculator", "compare", "config"):
            expect(links.filter(has_text=t(lang, f"page.{target}.title")).first).to_be_visible(timeout=SLOW)
    elif name == "calculator":
        expect(main.get_by_test_id("stMetric")).to_have_count(6, timeout=SLOW)
        expect(main.get_by_test_id("stPlotlyChart")).to_have_count(1, timeout=SLOW)
        expect(main.locator(f"pre.{CONSOLE_CLASS}")).to_have_count(1, timeout=SLOW)  # the log block
    elif name == "compare":
        expect(main.get_by_test_id("stTable").first).to_be_visible(timeout=SLOW)
    elif name == "config":
        expect(main.get_by_test_id("stCode")).to_have_count(1, timeout=SLOW)
    elif name == "labs":  # lab A's real torch run has finished and drawn its table
        expect(main.get_by_test_id("stTabs")).to_be_visible(timeout=SLOW)
        expect(main.get_by_test_id("stTable").or_(main.get_by_test_id("stDataFrame")).first).to_be_visible(
            timeout=SLOW)
        return  # the charts of tabs B–D are drawn hidden until their tab is opened
    for chart in main.get_by_test_id("stPlotlyChart").all():
        expect(chart.locator(".main-svg").first).to_be_visible(timeout=SLOW)


def expect_theme(page: Page, theme: str) -> None:
    """The app follows `prefers-color-scheme`: a dark background for dark, a light one for light."""
    luminance = "[r, g, b].reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0)"
    script = f"""(dark) => {{
        const app = document.querySelector("[data-testid='stApp']");
        const [r, g, b] = getComputedStyle(app).backgroundColor.match(/\\d+/g).map(Number);
        const y = {luminance};
        return dark ? y < 80 : y > 200;
    }}"""
    page.wait_for_function(script, arg=theme == "dark", timeout=SLOW)


def shoot(page: Page, directory: Path, name: str, lang: str, width: int, theme: str) -> None:
    page.emulate_media(color_scheme=theme)
    expect_theme(page, theme)
    set_size(page, width)
    wait_for_app_run(page)
    wait_until_drawn(page, name, lang)
    if width < 640:
        assert not sidebar_open(page), "at phone width the sidebar should start collapsed"
    if page.get_by_test_id("stPlotlyChart").count():  # every word in a figure reads on this theme's ground
        ratio, text = lowest_figure_contrast(page)
        assert ratio >= 4.5, f"{text!r} at {ratio:.2f}:1 ({theme})"
    grow_to_full_height(page, width)
    wait_until_drawn(page, name, lang)
    page.screenshot(path=directory / f"{name}-{lang}-{width}-{theme}.png", full_page=True, animations="disabled")
    expect_no_exception(page)



@pytest.mark.parametrize("name, lang", SHOTS, ids=[f"{name}-{lang}" for name, lang in SHOTS])
def test_page_screenshots(context: BrowserContext, app_server: StreamlitServer, screenshot_dir: Path,
                          name: str, lang: str) -> None:
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    open_app(page, page_url(app_server, name, lang))
    wait_until_drawn(page, name, lang)
    expect_no_exception(page)
    for width, theme in zip(WIDTHS, THEMES, strict=True):  # 1280 light, 420 dark: both themes' contrast, both
        shoot(page, screenshot_dir, name, lang, width, theme)  # widths' layout (all four: 25 s more of the suite)
    # a class may have no internet: the page, its icon, fonts and figures all come from the app itself
    outside = [url for url in requested if not url.startswith((app_server.url, "data:", "blob:"))]
    assert not outside, outside

    if name == "calculator":
        # At 420 px, opened, the sidebar must be usable; this shot shows how it sits over the page.
        page.emulate_media(color_scheme="light")
        set_size(page, 420)
        open_sidebar(page)
        page.screenshot(path=screenshot_dir / f"calculator-{lang}-420-light-sidebar.png", animations="disabled")
        # Reachable by scrolling the sidebar (`to_be_in_viewport` reports ratio 0 for this range input: check its box).
        slider = sidebar(page).get_by_role("slider", name=t(lang, "field.gradient_accumulation_steps"))
        slider.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        box = slider.bounding_box()
        assert box is not None and box["width"] > 0
        assert 0 <= box["x"] and box["x"] + box["width"] <= 420 and 0 <= box["y"] <= HEIGHT - box["height"]
        expect_no_exception(page)
