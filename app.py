"""StepLab: the entry point only routes. Page config, language, navigation, the shared setup, then the page."""

import streamlit as st

from steplab.i18n import normalise_language
from steplab_ui.shell import browser, heap, layout, navigation, state

st.set_page_config(page_title="StepLab", page_icon=layout.FAVICON, layout="wide")
page = navigation.register(normalise_language(st.session_state.get("lang") or st.query_params.get("lang")))
st.session_state[state.SHELL_SETUP] = shell = state.start()
try:
    if browser.sidebar_first(page.url_path in navigation.FIGURE_PAGES):  # a new visitor's sidebar before the figures
        st.title(page.title)
        st.session_state[state.CARRIED_NOTICES] = shell.notices
    else:
        page.run()
finally:
    st.session_state.pop(state.SHELL_SETUP, None)
    heap.freeze_once()
