"""The live class on screen: the database door of this process, the join QR code, the answers' chart, the
reveal, a student's answer form and feedback, and times in the reader's time zone. (A joined student's seat and the
progress it reports: `steplab_ui.shell.seat`.)

Every number comes from the engine (`steplab.classroom`): the tally, the spread's bars, the reveal's answer,
arithmetic and traps. Names and answers of other students never reach a student's page: only the aggregate.
"""

from __future__ import annotations

import io
import logging
import re
import string
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import Any

import plotly.graph_objects as go
import segno
import streamlit as st

from steplab.classroom import localtime, polls, spread
from steplab.classroom.polls import Poll
from steplab.classroom.spread import Bar
from steplab.classroom.store import ClassError, Store, Tally
from steplab.i18n import fmt_number, t, whole
from steplab_ui.shell import layout
from steplab_ui.shell.class_database import DATABASE_ERRORS, open_store
from steplab_ui.shell.layout import COLOURS
from steplab_ui.shell.presenter import figure_layout

REFRESH_SECONDS = 2  # how often the projector and a student's page read the current question
TABLE_REFRESH_SECONDS = 10  # how often the instructor's class table is read again
VERDICT_COLOURS = {"open": COLOURS["micro_batch"], "right": COLOURS["epoch"], "trap": COLOURS["update"],
                   "other": COLOURS["sample"]}
MAX_EXPLAINED = 8  # the reveal explains this many of the room's wrong answers, the most frequent; one line counts the rest
LOG = logging.getLogger(__name__)


def store(lang: str) -> Store | None:
    """The class database of this process (opened once, shared by every session), or None after a clear message."""
    try:
        return open_store()
    except DATABASE_ERRORS as error:
        st.error(t(lang, "room.db_error", error=type(error).__name__), icon=":material/database:")
        return None


def reader_zone() -> tzinfo:
    """The time zone of this page's reader: the browser's (`st.context`), UTC when the browser did not say."""
    return localtime.browser_zone(st.context.timezone, st.context.timezone_offset)


def client_address() -> str:
    """Who asks for a seat, as the store's joins-per-client limit counts them: the address this browser reached the
    server from (`st.context.ip_address`). Behind a proxy the server already reads it from the proxy's
    X-Forwarded-For (uvicorn trusts that header from the addresses in FORWARDED_ALLOW_IPS, the loopback by default;
    `deploy/nginx.conf` sends it), so a browser cannot choose its own; "local" for the server's own machine (and
    wherever no address is known: an AppTest's session)."""
    address = st.context.ip_address
    return address if isinstance(address, str) and address else "local"


def when(moment: datetime, lang: str, zone: tzinfo) -> str:
    """A class time as the reader reads it: `2026-12-03 17:00 (Asia/Shanghai)`."""
    return t(lang, "room.time", time=localtime.local_text(moment, zone), zone=localtime.zone_label(zone, moment))


def say_error(error: Exception, lang: str) -> None:
    """A refusal of the store (in the user's language) or a database that did not answer."""
    if isinstance(error, ClassError):
        st.error(error.message(lang), icon=":material/error:")
    else:
        LOG.warning("class database: %s", error, exc_info=error)  # for the operator's log, never the page
        st.error(t(lang, "room.busy"), icon=":material/hourglass_empty:")


MARKDOWN_SPECIALS = re.compile("([" + re.escape(string.punctuation) + "])")


def literal(text: str) -> str:
    """`text` as typed, inside Markdown (a nickname): every ASCII punctuation mark backslash-escaped (CommonMark
    lets any of them be), so nothing in it turns into emphasis, a link, HTML, LaTeX or an icon."""
    return MARKDOWN_SPECIALS.sub(r"\\\1", text)


@lru_cache(maxsize=64)
def qr_png(url: str) -> bytes:
    """The QR code of `url` as a PNG (dark modules on white with a quiet zone, as phone cameras expect)."""
    buffer = io.BytesIO()
    segno.make(url, error="m").save(buffer, kind="png", scale=10, border=3)
    return buffer.getvalue()


# --------------------------------------------------------------------------- the question and its answers


def prompt_lines(poll: Poll, lang: str) -> str:
    """The question as students read it, with the setup it is about (Markdown). A setup poll's prompt already
    names the five main fields: only the lines beyond them (`max_steps`, the release, ...) follow it."""
    said = polls.setup_lines(poll)
    if poll.kind == "setup":
        said = said[len(polls.SHOWN_FIELDS):]
    return "\n".join([polls.prompt(poll).get(lang), *(f"- {line.get(lang)}" for line in said)])


BANK_LABEL_CHARS = 70  # a bank question's prompt in the instructor's chooser is cut here


def bank_label(question_id: str, lang: str) -> str:
    """A bank question in the instructor's chooser: its lesson and its prompt as plain text, numbers the seed draws
    as "…" (`polls.bank_prompt`), so the option reads the same whatever numbers the preview below shows."""
    said = polls.bank_prompt(question_id).get(lang)
    if len(said) > BANK_LABEL_CHARS:
        said = said[:BANK_LABEL_CHARS].rstrip() + "…"
    return t(lang, "poll.bank_label", lesson=polls.bank_lesson(question_id), prompt=said)


def answer_text(poll: Poll, value: float | None, lang: str) -> str:
    """A stored value as the student gave it: a number, or a choice poll's option text."""
    if value is None:
        return "—"
    if polls.is_numeric(poll):
        return fmt_number(whole(value))
    options = polls.options(poll)
    index = int(value)
    return options[index].get(lang) if 0 <= index < len(options) else "—"


def right_answer_text(poll: Poll, lang: str) -> str:
    """The engine's answer as students read it (a number, or the right option's text)."""
    shown = polls.reveal(poll)
    if shown.answer is not None:
        return answer_text(poll, shown.answer, lang)
    separator = t(lang, "schedule.list_separator")
    return separator.join(answer_text(poll, float(index), lang) for index in sorted(shown.correct_options))


def spread_sentence(bars: tuple[Bar, ...], lang: str) -> str:
    """The chart in one sentence (its text alternative): how many answered, and each bar's count."""
    total = sum(bar.count for bar in bars)
    if not total:
        return t(lang, "room.poll.no_answers")
    separator = t(lang, "schedule.list_separator")
    parts = separator.join(t(lang, "room.poll.part", label=bar.label(lang), count=bar.count)
                           for bar in bars if bar.count)
    return t(lang, "room.poll.sentence", count=total, parts=parts)


def spread_figure(bars: tuple[Bar, ...], lang: str, presenter: bool = False) -> go.Figure:
    """One bar per answer (or range, or option), coloured by verdict after the reveal; before it all alike."""
    traces = []
    for verdict in ("open", "right", "trap", "other"):
        chosen = [bar for bar in bars if bar.verdict == verdict]
        if not chosen:
            continue
        traces.append({
            "type": "bar", "x": [bar.label(lang) for bar in chosen], "y": [bar.count for bar in chosen],
            "name": t(lang, f"room.poll.legend.{verdict}"), "marker": {"color": VERDICT_COLOURS[verdict]},
            "text": [bar.count for bar in chosen], "textposition": "outside", "cliponaxis": False,
            "hovertemplate": "%{x}: %{y}<extra></extra>",
        })
    order = [bar.label(lang) for bar in bars]
    layout: dict[str, Any] = {
        "height": 340, "margin": {"l": 10, "r": 10, "t": 30, "b": 40}, "barmode": "overlay",
        "showlegend": any(bar.verdict != "open" for bar in bars),
        "legend": {"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
        "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": order,
                  "title": {"text": t(lang, "room.poll.axis_answer")}},
        "yaxis": {"title": {"text": t(lang, "room.poll.axis_count")}, "rangemode": "tozero", "dtick": 1 if
                  max((bar.count for bar in bars), default=0) <= 10 else None},
    }
    if presenter:
        layout = figure_layout({**layout, "height": 440, "margin": {"l": 10, "r": 10, "t": 50, "b": 70}})
    return go.Figure(data=traces, layout=layout, _validate=False)


def show_spread(poll: Poll, tally: Tally, lang: str, key: str, presenter: bool = False) -> None:
    """The chart of the answers and its sentence (nothing names a student)."""
    bars = spread.spread(poll, tally.values, tally.revealed)
    sentence = spread_sentence(bars, lang)
    if any(bar.count for bar in bars):
        layout.chart(spread_figure(bars, lang, presenter), key, sentence)
    st.caption(sentence)


def given_lines(poll: Poll, tally: Tally, lang: str) -> list[str]:
    """The wrong answers the room gave, most frequent first, each with the wrong rule that produces it (or, close to
    the answer, how far off it is; or that no common rule gives it), as Markdown list items; beyond
    `MAX_EXPLAINED` answers, one line counts the rest."""
    given = polls.wrong_answers(poll, tally.values)
    answer = polls.reveal(poll).answer

    def line(item: polls.Given) -> str:
        value = answer_text(poll, item.value, lang)
        if item.trap is not None:
            return t(lang, "room.reveal.trap", value=value, count=item.count, why=item.trap.why.get(lang))
        if answer is not None and polls.is_close(poll, item.value):  # no rule, but close: "almost", and how far
            return t(lang, "room.reveal.close", value=value, count=item.count,
                     gap=fmt_number(whole(abs(item.value - answer))))
        return t(lang, "room.reveal.no_rule", value=value, count=item.count)

    lines = [line(item) for item in given[:MAX_EXPLAINED]]
    if rest := given[MAX_EXPLAINED:]:
        lines.append(t(lang, "room.reveal.more", answers=len(rest), count=len(rest)))
    return [f"- {line}" for line in lines]


def show_reveal(poll: Poll, tally: Tally, lang: str) -> None:
    """The projector's reveal: the answer, how many got it, the arithmetic, and the wrong answers the room gave,
    each explained by the rule that produces it (no names: values and counts only)."""
    shown = polls.reveal(poll)
    right = spread.right_count(poll, tally.values)
    right_answer = right_answer_text(poll, lang)
    with st.container(horizontal=True, gap="small", key="steplab_cards_reveal"):
        st.metric(t(lang, "room.reveal.answer"), right_answer, border=True)
        st.metric(t(lang, "room.reveal.right"), t(lang, "room.reveal.right_value", right=right,
                                                  answered=tally.answered), border=True)
    if shown.worked:
        st.markdown(f"**{t(lang, 'room.reveal.worked')}**")
        st.markdown(layout.worked_markdown(shown.worked, lang))
    if shown.explanation is not None:
        st.markdown(f"**{t(lang, 'room.reveal.explanation')}**\n\n{shown.explanation.get(lang)}")
    if polls.is_numeric(poll) and (lines := given_lines(poll, tally, lang)):
        st.markdown(f"**{t(lang, 'room.reveal.traps')}**")
        st.markdown("\n".join(lines))


def feedback(poll: Poll, mine: float | None, lang: str) -> None:
    """A student's feedback after the reveal: right or not, and which wrong rule gives their answer."""
    shown = polls.reveal(poll)
    right_answer = right_answer_text(poll, lang)
    if mine is None:
        st.info(t(lang, "join.closed_unanswered", answer=right_answer), icon=":material/info:")
    elif polls.is_correct(poll, mine):
        st.success(t(lang, "join.right", answer=right_answer), icon=":material/check_circle:")
    else:
        st.warning(t(lang, "join.close" if polls.is_close(poll, mine) else "join.wrong", answer=right_answer,
                     value=answer_text(poll, mine, lang)), icon=":material/lightbulb:")
        trap = polls.trap_for(poll, mine)
        if trap is not None:
            st.markdown(t(lang, "join.trap", why=trap.why.get(lang)))
        elif polls.is_numeric(poll):
            st.markdown(t(lang, "join.no_rule", value=answer_text(poll, mine, lang)))
    if shown.worked:
        st.markdown(layout.worked_markdown(shown.worked, lang))
    if shown.explanation is not None:
        st.markdown(shown.explanation.get(lang))
