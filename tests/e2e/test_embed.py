"""`?embed=true` (how a course site puts StepLab in an iframe) on every page: drawn, setup from the link, no chrome."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from steplab.i18n import t
from steplab_ui.shell.navigation import PAGES

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import exact_input, expect_no_exception, open_app, title

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]

SLOW = 60_000
SETUP = "num_samples=3200&per_device_train_batch_size=2&gradient_accumulation_steps=16"


@pytest.fixture(scope="module")
def embed_page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1000, "height": 800})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize(("index", "path"), [(i, page[2]) for i, page in enumerate(PAGES)],
                         ids=[page[2] for page in PAGES])
def test_every_page_embeds_with_the_setup_of_its_link(embed_page: Page, app_server: StreamlitServer,
                                                      index: int, path: str) -> None:
    page = embed_page
    open_app(page, f"{app_server.url}/{'' if index == 0 else path}?embed=true&lang=en&{SETUP}")
    if path == "lessons":
        expect(title(page)).to_be_visible(timeout=SLOW)
    else:
        expect(title(page)).to_have_text(t("en", f"page.{path}.title"), timeout=SLOW)
    expect(page.get_by_test_id("stToolbar")).to_have_count(0)  # embedded: no Streamlit menu or deploy button
    expect(exact_input(page, t("en", "field.exact", name=t("en", "field.num_samples")))).to_have_value(
        "3200", timeout=SLOW)
    expect_no_exception(page)
