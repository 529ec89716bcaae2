"""Issue 27, pages a person moves between (each test fails on the bug it names): /compare on a second visit,
/labs' tabs clicked in any order, a new page's scroll position, the menu on a phone, where /compare's and
/llamaboard's numbers come from after an imported YAML.

Pages are reached as a person reaches them, through the sidebar's menu, not by typing URLs."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from steplab.i18n import fmt_int, t
from steplab.trainer.plan import make_plan

from .conftest import CHROMIUM, SKIP_REASON, StreamlitServer
from .streamlit_page import SIDEBAR_OPEN, open_app, open_sidebar, set_size, sidebar, title, wait_for_app_run
from .watch import Watch

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)]


def through_menu(page: Page, url: str, lang: str) -> None:
    """Click the menu's link to page `url` (its path, "" for home) and wait until that page has run."""
    sidebar(page).locator(f"a[data-testid='stPageLink-NavLink'][href='{url}']").click()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(t(lang, f"page.{url or 'home'}.title"))


@pytest.mark.parametrize("lang", ["zh"])
def test_compare_keeps_its_columns_over_a_second_visit(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """Open /compare, change a column, go to the calculator, come back through the menu: the page draws (it raised
    KeyError "cmp_0_num_samples") and the changed column is as it was left."""
    watch = Watch(page)
    open_app(page, f"{app_server.url}/compare")
    changed = page.get_by_test_id("stMain").get_by_role("spinbutton", name=t(lang, "field.gradient_accumulation_steps"))
    changed.nth(1).fill("32")
    changed.nth(1).press("Enter")
    wait_for_app_run(page)
    header = t(lang, "compare.short.gradient_accumulation_steps", value="32")  # in column 2's name
    expect(page.get_by_test_id("stTable")).to_contain_text(header)
    for _ in range(2):
        through_menu(page, "calculator", lang)
        through_menu(page, "compare", lang)
        watch.check("back on /compare")
        expect(page.get_by_test_id("stTable")).to_contain_text(header)
        expect(changed.nth(1)).to_have_value("32")


@pytest.mark.parametrize("lang", ["zh"])
def test_every_labs_tab_click_opens_that_tab(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """Clicking B, D, A, C, B opens B, D, A, C, B (every second click was ignored: B, B, A, A, B), the URL naming the
    open lab; a language switch keeps the open lab."""
    watch = Watch(page)
    open_app(page, f"{app_server.url}/labs")
    labs = "abcd"
    FIRST_CONTROL = {"a": "labs_a_batch", "b": "labs_b_lengths", "c": "labs_c_epochs", "d": "labs_d_batch"}
    for key in "bdacb":
        label = t(lang, f"labs.{key}.tab")
        page.get_by_role("tab", name=label).click()
        wait_for_app_run(page)
        expect(page.get_by_role("tab", selected=True)).to_have_text(label)
        expect(page.locator(f".st-key-{FIRST_CONTROL[key]}")).to_be_visible()  # the open lab's own first control
        assert page.url.endswith("/labs" if key == labs[0] else f"/labs?lab={key}"), page.url
    sidebar(page).get_by_role("radio", name="English", exact=True).click()  # the language switch
    wait_for_app_run(page)
    expect(page.get_by_role("tab", selected=True)).to_have_text(t("en", "labs.b.tab"))
    watch.check("after the tab clicks and a language switch")


MAIN_SCROLL = "document.querySelector(\"[data-testid='stMain']\").scrollTop"


def read_down(page: Page) -> None:
    """Scroll the main column well down, with the wheel over its right edge (no figure there to take the wheel;
    a fresh move first: a wheel without one went nowhere after a page change)."""
    for x in (1_250, 1_260):
        page.mouse.move(x, 450)
    page.mouse.wheel(0, 5_000)
    page.wait_for_function(f"{MAIN_SCROLL} > 500")


@pytest.mark.parametrize("lang", ["zh"])
def test_a_page_chosen_from_the_menu_opens_at_its_top(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """/schedule read down to its end, then the calculator from the menu: the calculator starts at its top (it opened
    about 900 px down, where the schedule had been left), and so does the page that Back returns to."""
    watch = Watch(page)
    open_app(page, f"{app_server.url}/schedule")
    read_down(page)
    through_menu(page, "calculator", lang)
    assert page.evaluate(MAIN_SCROLL) == 0
    read_down(page)
    page.go_back()
    wait_for_app_run(page)
    expect(title(page)).to_have_text(t(lang, "page.schedule.title"))
    assert page.evaluate(MAIN_SCROLL) == 0
    watch.check("after the page changes")


@pytest.mark.parametrize("lang", ["en"])
def test_on_a_phone_the_menu_closes_once_a_page_is_chosen(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """At 420 px the menu, opened, covers most of the screen; choosing a page closes it (it stayed open over 300 of
    the 420 px), and it opens again from its button."""
    watch = Watch(page)
    set_size(page, 420)
    open_app(page, f"{app_server.url}/calculator?lang={lang}")
    open_sidebar(page)
    through_menu(page, "schedule", lang)
    page.wait_for_function(f"!({SIDEBAR_OPEN})()")
    open_sidebar(page)
    watch.check("after choosing a page on a phone")


IMPORTED = "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nnum_train_epochs: 3\nnum_samples: 1090\n"


def import_yaml(page: Page, text: str, lang: str) -> None:
    """Paste `text` on /config (open) and press Fill: the sidebar's setup becomes it."""
    page.get_by_test_id("stTextArea").locator("textarea").fill(text)
    page.keyboard.press("Control+Enter")
    wait_for_app_run(page)
    page.get_by_role("button", name=t(lang, "config.apply")).click()
    wait_for_app_run(page)
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text(t(lang, "config.applied"))


@pytest.mark.parametrize("lang", ["zh"])  # English: AppTest of both sentences
def test_compare_and_llamaboard_say_where_their_numbers_come_from(page: Page, app_server: StreamlitServer,
                                                                 lang: str) -> None:
    """After a YAML is imported, /compare names the sidebar's setup and its total steps beside the chapter's columns,
    and one click puts it into the first column (which then says it is the sidebar's); /llamaboard says its
    numbers are the form's, not the sidebar's. Before, both showed other numbers than the sidebar without a word."""
    from steplab.io.config_read import read_config
    from steplab.trainer.setup import setup_from_mapping

    watch = Watch(page)
    imported = setup_from_mapping(read_config(IMPORTED).values)[0]
    steps = make_plan(imported).max_steps
    open_app(page, f"{app_server.url}/config" + ("?lang=en" if lang == "en" else ""))
    import_yaml(page, IMPORTED, lang)
    through_menu(page, "compare", lang)
    main = page.get_by_test_id("stMain")
    elsewhere = t(lang, "compare.sidebar_elsewhere", samples=imported.num_samples, batch=2, ga=4, gpus=1, count=1,
                  epochs=3, steps=steps)
    expect(main.get_by_test_id("stAlertContentInfo")).to_contain_text(elsewhere)
    main.get_by_role("button", name=t(lang, "compare.sidebar_put", n=1)).click()
    wait_for_app_run(page)
    expect(main.get_by_test_id("stAlertContentInfo")).to_have_count(0)
    expect(main.get_by_text(t(lang, "compare.sidebar_column", n=1))).to_be_visible()
    total = main.get_by_test_id("stTable").get_by_role("row").filter(has_text=t(lang, "comparing.row.total_steps"))
    expect(total.get_by_role("cell").first).to_have_text(fmt_int(steps))
    through_menu(page, "llamaboard", lang)
    said = t(lang, "llamaboard.not_sidebar", samples=imported.num_samples, steps=steps,
             apply=t(lang, "llamaboard.apply"))
    expect(page.get_by_test_id("stAlertContentInfo").filter(has_text=said)).to_be_visible()
    watch.check("after /compare and /llamaboard")


ADVANCED = ("learning_rate=0.0001&lr_scheduler_type=cosine&eval_strategy=no&save_steps=500&logging_steps=10"
            "&num_samples=1090&per_device_train_batch_size=1")  # what LLaMA-Factory's qwen3_lora_sft.yaml puts there


@pytest.mark.parametrize("lang", ["zh"])
def test_back_and_forward_go_from_page_to_page(page: Page, app_server: StreamlitServer, lang: str) -> None:
    """With a setup of advanced fields in the URL (an imported YAML's), Back after two pages from the menu goes to
    the page before, twice, and Forward again (it stayed on the same page: every field put back into the URL had
    pushed a history entry of its own), the setup kept all the way."""
    watch = Watch(page)
    open_app(page, f"{app_server.url}/calculator?{ADVANCED}")
    through_menu(page, "compare", lang)
    through_menu(page, "schedule", lang)
    for url, move in (("compare", page.go_back), ("calculator", page.go_back), ("compare", page.go_forward)):
        move()
        wait_for_app_run(page)
        expect(title(page)).to_have_text(t(lang, f"page.{url}.title"))
        assert "lr_scheduler_type=cosine" in page.url and "num_samples=1090" in page.url, page.url
    watch.check("after Back and Forward")
