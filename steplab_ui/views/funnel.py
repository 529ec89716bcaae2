"""The dataset funnel on a page: a bar per stage (the engine's numbers) and its sentences as the text alternative."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from steplab.dataset.funnel import Funnel
from steplab.i18n import fmt_int, t
from steplab.trainer.setup import TrainingSetup
from steplab_ui.shell import layout, state
from steplab_ui.shell import presenter as presenter_view
from steplab_ui.shell.layout import COLOURS, FIGURE_TEXT


def data_files(uploads: list[tuple[str, bytes]], cap: int) -> dict[str, bytes]:
    """The uploaded files by base name, a zip's members among them (a model folder zipped: `tokenizer.json` and
    `tokenizer_config.json` together), each read up to one byte past `cap` so that the dataset stage refuses it."""
    from pathlib import PurePosixPath

    from steplab.runfiles.gather import upload_entries

    entries = upload_entries(uploads, [])
    return {PurePosixPath(entry.path).name: entry.open().read(cap + 1) for entry in entries}


def stage_label(code: str, dataset: str | None, lang: str) -> str:
    """A bar's short name: the stage, and the dataset it belongs to."""
    label = t(lang, f"config.data.stage.{code}")
    return f"{label} · {dataset}" if dataset else label


def funnel_figure(funnel: Funnel, lang: str, presenter: bool = False) -> go.Figure:
    """Rows after each stage, top to bottom; the last bar, the Trainer's N, in the micro-batch colour.

    An estimated stage (no tokenizer) draws its most as the bar and a whisker down to its fewest.
    `presenter`: projector-sized words and bars.
    """
    labels = [stage_label(s.code, s.dataset, lang) for s in funnel.stages]
    values = [s.rows_out for s in funnel.stages]
    lows = [s.rows_out if s.rows_out_low is None else s.rows_out_low for s in funnel.stages]
    labels.append(t(lang, "config.data.stage.examples"))
    values.append(funnel.train_examples)
    lows.append(funnel.train_examples if funnel.estimate is None else funnel.estimate.train[0])
    colours = [COLOURS["sample"]] * (len(values) - 1) + [COLOURS["micro_batch"]]
    exact = [fmt_int(v) if v == low else "" for v, low in zip(values, lows, strict=True)]
    figure = go.Figure(go.Bar(y=labels, x=lows, orientation="h", marker={"color": colours}, text=exact,
                              textposition="auto", hovertemplate="%{y}: %{x:,}<extra></extra>"))
    if lows != values:  # the rest of an estimated bar, hatched: it may or may not be there
        ranges = ["" if v == low else t(lang, "config.data.range", low=fmt_int(low), high=fmt_int(v))
                  for v, low in zip(values, lows, strict=True)]
        figure.add_bar(y=labels, x=[v - low for v, low in zip(values, lows, strict=True)], orientation="h",
                       marker={"color": colours, "opacity": 0.4, "pattern": {"shape": "/", "solidity": 0.3}},
                       text=ranges, textposition="inside", insidetextanchor="end", hoverinfo="skip",
                       textfont={"color": FIGURE_TEXT["ink"][0]})
        figure.update_layout(barmode="stack", showlegend=False)
    figure.update_layout(height=60 + 38 * len(values), margin={"l": 10, "r": 10, "t": 10, "b": 30},
                         yaxis={"autorange": "reversed", "automargin": True},
                         xaxis={"title": {"text": t(lang, "config.data.axis")}, "separatethousands": True})
    if presenter:
        figure.update_layout(height=90 + 56 * len(values), font_size=presenter_view.FIGURE_FONT,
                             margin={"l": 10, "r": 10, "t": 10, "b": 60},
                             uniformtext={"minsize": presenter_view.FIGURE_FONT, "mode": "show"})
        figure.update_traces(textfont_size=presenter_view.FIGURE_FONT)
        figure.update_xaxes(tickfont_size=presenter_view.FIGURE_FONT, title_font_size=presenter_view.FIGURE_FONT)
        figure.update_yaxes(tickfont_size=presenter_view.FIGURE_FONT)
    return figure


def show_chart(funnel: Funnel, lang: str, key: str, alt: str, presenter: bool = False) -> None:
    layout.chart(funnel_figure(funnel, lang, presenter), key, alt)


def show_stages(funnel: Funnel, lang: str) -> None:
    """Every stage and assumption in words: the figure's visible text alternative."""
    st.markdown("\n".join(f"{i}. {stage.note.get(lang)}" for i, stage in enumerate(funnel.stages, 1)))
    for assumption in funnel.assumptions:
        if funnel.estimate is None or assumption is not funnel.estimate.note:  # the estimate has its own box
            st.caption(assumption.get(lang))


def show_funnel(funnel: Funnel, lang: str) -> None:
    """The config page's funnel: the picture, the counts in a sentence, then every stage in words."""
    st.markdown(f"**{t(lang, 'config.data.title')}**")
    if funnel.estimate is not None:
        st.warning(funnel.estimate.note.get(lang), icon=":material/straighten:")
    key = "config.data.summary" if funnel.estimate is None else "config.data.summary_estimate"
    summary = t(lang, key, train=fmt_int(funnel.train_examples))
    if funnel.eval_examples is not None:
        summary += t(lang, "config.data.summary_eval", eval=fmt_int(funnel.eval_examples))
    show_chart(funnel, lang, "config_funnel", summary.replace("**", "").replace("`", ""),
               presenter=presenter_view.is_on())
    st.markdown(summary)
    show_stages(funnel, lang)


PROCESSES_KEY = "config_world_size"


def _set_processes(setup: TrainingSetup) -> None:
    """The field's value into the shared setup (a callback: the sidebar and the URL follow)."""
    value = st.session_state.get(PROCESSES_KEY)
    if value:
        state.apply_values({**setup.to_dict(), "world_size": int(value)})


def processes_field(setup: TrainingSetup, stated: bool, lang: str) -> None:
    """"GPUs (processes)" beside the funnel: how many processes the plan assumes, and where that number comes from.

    A LLaMA-Factory YAML does not say it: `llamafactory-cli train` starts one process per visible GPU.
    """
    st.session_state[PROCESSES_KEY] = setup.world_size
    with st.container(border=True):
        st.number_input(t(lang, "config.processes"), **state.number_range("world_size"), step=1, key=PROCESSES_KEY,
                        on_change=_set_processes, args=(setup,), help=t(lang, "config.processes_help"))
        said = "config.processes_stated" if stated else "config.processes_assumed"
        st.caption(t(lang, said, world_size=setup.world_size))
