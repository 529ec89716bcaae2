"""The floor for page-load figures: a Streamlit page with one line of text (benchmarks/bench_pages.py)."""

import streamlit as st

st.title("Empty page")
st.write("The smallest Streamlit page: what every new session costs before StepLab draws anything.")
