"""The floors for page-load figures (benchmarks/bench_pages.py): a Streamlit page with one line of text, and with
`?figure=1` the same page with one small plotly figure (what the first figure on a page costs a new browser:
Streamlit loads and runs its plotly bundle only when a page draws a figure)."""

import streamlit as st

st.title("Empty page")
st.write("The smallest Streamlit page: what every new session costs before StepLab draws anything.")
if st.query_params.get("figure"):
    import plotly.graph_objects as go

    st.plotly_chart(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), config={"displaylogo": False})
