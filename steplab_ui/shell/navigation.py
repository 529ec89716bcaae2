"""The app's pages, grouped, with short stable URL paths (course pages link to them for years)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from steplab.i18n import t

# (section, file, url path, icon); the first page is the home page at "/".
PAGES = (
    ("learn", "app_pages/home.py", "home", ":material/school:"),
    ("learn", "app_pages/playground.py", "playground", ":material/toys:"),
    ("learn", "app_pages/grpo.py", "grpo", ":material/auto_awesome:"),
    ("learn", "app_pages/lessons.py", "lessons", ":material/menu_book:"),
    ("learn", "app_pages/selfcheck.py", "selfcheck", ":material/quiz:"),
    ("learn", "app_pages/join.py", "join", ":material/login:"),
    ("explore", "app_pages/calculator.py", "calculator", ":material/calculate:"),
    ("explore", "app_pages/schedule.py", "schedule", ":material/show_chart:"),
    ("explore", "app_pages/compare.py", "compare", ":material/compare_arrows:"),
    ("explore", "app_pages/config.py", "config", ":material/description:"),
    ("explore", "app_pages/run.py", "run", ":material/fact_check:"),
    ("explore", "app_pages/llamaboard.py", "llamaboard", ":material/dashboard:"),
    ("explore", "app_pages/labs.py", "labs", ":material/science:"),
    ("instructor", "app_pages/animation.py", "animation", ":material/animation:"),
    ("instructor", "app_pages/classroom.py", "class", ":material/co_present:"),
)


# Pages whose first view draws plotly figures: there a new visitor's first run draws the sidebar only, and the page
# comes once the sidebar is drawn (`browser.sidebar_first`); plotly's code kept the sidebar grey. A page without a
# figure is drawn in one run (tests/test_app.py checks that the others draw none).
FIGURE_PAGES = frozenset({"playground", "grpo", "calculator", "schedule", "labs", "animation"})

ROOT = Path(__file__).resolve().parents[2]
_BUILT = "_steplab_nav_pages"


def navigation(lang: str) -> dict[str, list[st.Page]]:
    """The pages for `st.navigation`, by section (absolute paths: a page run alone can register them too)."""
    sections: dict[str, list[st.Page]] = {}
    for index, (section, path, url, icon) in enumerate(PAGES):
        page = st.Page(ROOT / path, title=t(lang, f"page.{url}.title"), url_path=url, icon=icon, default=index == 0)
        sections.setdefault(t(lang, f"nav.{section}"), []).append(page)
    return sections


def _sections(lang: str) -> dict[str, list[st.Page]]:
    """This session's pages in `lang`, built once per session and language (building them resolves 14 paths),
    for `st.navigation` and the menu alike."""
    built = st.session_state.get(_BUILT)
    if not built or built[0] != lang:
        built = (lang, navigation(lang))
        st.session_state[_BUILT] = built
    return built[1]


def register(lang: str) -> st.Page:
    """`st.navigation` with the menu hidden (StepLab draws its own, see `menu`), returning the current page.

    The page scripts live in `app_pages/`, not `pages/`: a folder named `pages` beside `app.py` would put a
    fresh server into Streamlit's legacy multipage mode, in which a cold deep link runs the page script
    without `app.py` and the next run (through `st.navigation`) drops what the user had typed. A page that
    runs alone (AppTest of one file) calls this too, so its menu links resolve.
    """
    return st.navigation(_sections(lang), position="hidden")


def menu(lang: str) -> None:
    """The page menu at the top of the sidebar, by section, drawn with `st.page_link` (keyboard reachable).

    `st.navigation(position="hidden")` and `client.showSidebarNavigation = false` hide Streamlit's own
    menu, so this is the only one. Streamlit's menu would be cheaper (one message per rerun instead of 16
    elements, 12 % of a calculator rerun's script CPU), but with sections its markup is not a valid list
    (`<ul>` holding `<div>`s, `<li>` outside any list: axe's serious `list` / `listitem` violations), which
    a screen reader announces wrongly; these links are plain, valid links.
    """
    with st.sidebar:
        for section, pages in _sections(lang).items():
            st.caption(section)
            for page in pages:
                st.page_link(page, label=page.title, icon=page.icon)
