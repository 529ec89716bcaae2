"""The app's pages, grouped, with short stable URL paths (course pages link to them for years)."""

from __future__ import annotations

import streamlit as st

from steplab.i18n import t

# (section, file, url path, icon); the first page is the home page at "/".
PAGES = (
    ("learn", "pages/home.py", "home", ":material/school:"),
    ("learn", "pages/lessons.py", "lessons", ":material/menu_book:"),
    ("learn", "pages/selfcheck.py", "selfcheck", ":material/quiz:"),
    ("explore", "pages/calculator.py", "calculator", ":material/calculate:"),
    ("explore", "pages/schedule.py", "schedule", ":material/show_chart:"),
    ("explore", "pages/compare.py", "compare", ":material/compare_arrows:"),
    ("explore", "pages/config.py", "config", ":material/description:"),
    ("explore", "pages/labs.py", "labs", ":material/science:"),
    ("instructor", "pages/animation.py", "animation", ":material/animation:"),
)


def navigation(lang: str) -> dict[str, list[st.Page]]:
    sections: dict[str, list[st.Page]] = {}
    for index, (section, path, url, icon) in enumerate(PAGES):
        page = st.Page(path, title=t(lang, f"page.{url}.title"), url_path=url, icon=icon, default=index == 0)
        sections.setdefault(t(lang, f"nav.{section}"), []).append(page)
    return sections
