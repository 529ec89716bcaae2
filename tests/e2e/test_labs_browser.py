"""The labs page computes only the lab on screen: choosing another tab reruns the page for that lab, and the URL
names it (`?lab=c`), so the link reopens the same tab."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from steplab.i18n import t

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import expect_no_exception, open_app, wait_for_app_run

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]
SLOW = 90_000


def metric_labels(page: Page) -> list[str]:
    return page.get_by_test_id("stMain").get_by_test_id("stMetricLabel").all_inner_texts()


def test_a_tab_computes_its_lab_when_chosen_and_the_url_follows(page: Page, app_server: StreamlitServer) -> None:
    open_app(page, f"{app_server.url}/labs?lang=en")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stMetricLabel").filter(has_text=t("en", "labs.a.grad_diff"))).to_be_visible(
        timeout=SLOW)
    assert t("en", "labs.c.best") not in metric_labels(page)  # lab C is not computed while its tab is closed
    page.get_by_role("tab", name=t("en", "labs.c.tab")).click()
    wait_for_app_run(page, timeout=SLOW)
    expect(main.get_by_test_id("stMetricLabel").filter(has_text=t("en", "labs.c.best"))).to_be_visible(timeout=SLOW)
    assert t("en", "labs.a.grad_diff") not in metric_labels(page)
    expect(page).to_have_url(re.compile(r"[?&]lab=c(&|$)"))
    page.reload()
    wait_for_app_run(page, timeout=SLOW)
    expect(page.get_by_role("tab", name=t("en", "labs.c.tab"))).to_have_attribute("aria-selected", "true")
    expect_no_exception(page)
