"""Issue 27: a new visitor's sidebar is drawn before the main column's heavy work starts in the browser.

The frontend draws an element only once the code for its kind has loaded; the main column's figures bring
plotly (4.7 MB), and the sidebar's controls stood grey until the figures were drawn (14 s after the page said it
was idle, on a busy machine). Now a new visitor's first run draws the sidebar (and the title), and the page comes
with the next run, which the page's script asks for once the sidebar is drawn (`steplab_ui.shell.browser.sidebar_first`).
The test checks the order of two events in the page's own clock, not a duration: the sidebar drawn, and the
browser's request for plotly's code."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from steplab.i18n import t
from steplab_ui.shell.browser import READY, RECORD_SIDEBAR_DRAWN

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import open_app, title
from .watch import Watch

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

# When the browser first asked for plotly's code, in the page's clock (the sidebar's: RECORD_SIDEBAR_DRAWN)
PLOTLY_ASKED = """(() => {
    window.__steplabPlotly = null;
    new PerformanceObserver((list) => {
        for (const entry of list.getEntries())
            if (window.__steplabPlotly === null && entry.name.includes("/PlotlyChart")) window.__steplabPlotly = entry.startTime;
    }).observe({type: "resource", buffered: true});
})();"""


@pytest.mark.parametrize(("path", "lang"), [("schedule", "zh"), ("calculator", "en")])
def test_a_new_visitor_sees_the_sidebar_before_the_figures_load(browser: Browser, app_server: StreamlitServer,
                                                                path: str, lang: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # a new visitor: nothing cached
    context.add_init_script(RECORD_SIDEBAR_DRAWN)
    context.add_init_script(PLOTLY_ASKED)
    page = context.new_page()
    watch = Watch(page)
    open_app(page, f"{app_server.url}/{path}" + ("?lang=en" if lang == "en" else ""))
    expect(title(page)).to_have_text(t(lang, f"page.{path}.title"))
    expect(page.get_by_test_id("stPlotlyChart").locator(".main-svg").first).to_be_visible()
    order = page.evaluate("({sidebar: window.__steplabSidebar, plotly: window.__steplabPlotly})")
    assert order["sidebar"] is not None and order["plotly"] is not None, order
    assert order["sidebar"] < order["plotly"], order
    watch.check("after the first load")
    context.close()


# Whether the sidebar-only first run's button was ever on the page
BUTTON_SEEN = f"""(() => {{
    window.__steplabButton = false;
    new MutationObserver(() => {{
        if (document.querySelector(".st-key-{READY}")) window.__steplabButton = true;
    }}).observe(document, {{subtree: true, childList: true}});
}})();"""


def test_a_page_without_figures_is_drawn_in_one_run(browser: Browser, app_server: StreamlitServer) -> None:
    """/compare draws no figure: a new visitor gets it in one run (an extra run would only delay its main column),
    and the next page with figures is not held back either (the sidebar's code is loaded by then)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(BUTTON_SEEN)
    page = context.new_page()
    open_app(page, f"{app_server.url}/compare")
    expect(title(page)).to_have_text(t("zh", "page.compare.title"))
    page.get_by_test_id("stSidebar").locator("a[href='schedule']").click()
    expect(page.get_by_test_id("stPlotlyChart").locator(".main-svg").first).to_be_visible()
    assert page.evaluate("window.__steplabButton") is False
    context.close()
