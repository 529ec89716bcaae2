"""StepLab: the entry point only routes. Page config, language, navigation, the shared setup, then the page."""

from pathlib import Path

import streamlit as st

from steplab.i18n import normalise_language
from steplab_ui import navigation, state

# the icon is a file of the app: a `:material/…:` page icon is fetched from fonts.gstatic.com (a class may be offline)
ICON = str(Path(__file__).with_name("steplab_ui") / "assets" / "favicon.png")
st.set_page_config(page_title="StepLab", page_icon=ICON, layout="wide")
page = navigation.register(normalise_language(st.session_state.get("lang") or st.query_params.get("lang")))
st.session_state[state.SHELL_SETUP] = state.start()
try:
    page.run()
finally:
    st.session_state.pop(state.SHELL_SETUP, None)
