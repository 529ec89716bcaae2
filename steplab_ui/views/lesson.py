"""Drawing a lesson's blocks: text, live widgets, predict-then-reveal, and the self-check."""

from __future__ import annotations

import math

import streamlit as st

from steplab.i18n import Text, t
from steplab.teaching import grpo_counting, rl_pipeline
from steplab.teaching.lessons import Block, Lesson, scenario_kind
from steplab.trainer.quantities import format_quantity, label
from steplab_ui.shell import layout
from steplab_ui.views import calculator as calculator_view
from steplab_ui.views import lesson_widgets as widgets

PARTS = "lesson_parts"  # presenter view's row: previous, where we are, next
SHORTCUTS = {-1: "PageUp", 1: "PageDown"}  # what a presentation clicker sends (the arrows move a slider)


def _part_key(lesson: Lesson) -> str:
    return f"{lesson.id}_block"


def _move(lesson: Lesson, by: int) -> None:
    key = _part_key(lesson)
    st.session_state[key] = min(max(int(st.session_state.get(key, 0)) + by, 0), len(lesson.blocks) - 1)


def parts(lesson: Lesson, lang: str) -> int:
    """Presenter view's one row: previous part, where we are, next part (buttons with keyboard shortcuts).

    Returns the part to show (0-based)."""
    count = len(lesson.blocks)
    index = min(max(int(st.session_state.get(_part_key(lesson), 0)), 0), count - 1)
    with st.container(horizontal=True, vertical_alignment="center", key=PARTS):
        st.button(t(lang, "lesson.previous"), key=f"{PARTS}_previous", on_click=_move, args=(lesson, -1),
                  disabled=index == 0, shortcut=SHORTCUTS[-1], icon=":material/chevron_left:",
                  help=t(lang, "lesson.parts_help"))
        st.progress((index + 1) / count, text=t(lang, "lesson.position", n=index + 1, total=count))
        st.button(t(lang, "lesson.next"), key=f"{PARTS}_next", on_click=_move, args=(lesson, 1),
                  disabled=index == count - 1, shortcut=SHORTCUTS[1], icon=":material/chevron_right:",
                  icon_position="right", help=t(lang, "lesson.parts_help"))
    return index


def _guess_key(key: str) -> str:
    return f"{key}_guess"


def _reveal(key: str) -> None:
    st.session_state[revealed_key(key)] = True


def revealed_key(key: str) -> str:
    """Where a predict block (drawn under `key`) remembers that its answer was revealed."""
    return f"{key}_revealed"


def is_revealed(key: str) -> bool:
    return bool(st.session_state.get(revealed_key(key), False))


def predict(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """The learner commits to a guess; only then the engine's answer, the arithmetic and the widget appear."""
    scenario, name = block.data["scenario"], block.data["quantity"]
    answer = lesson.answer(block)
    st.markdown(f"**{t(lang, 'lesson.predict')}**  \n{lesson.say(block.text('prompt'), lang)}")  # label, line break, prompt
    revealed = st.session_state.get(f"{key}_revealed", False)
    if not presenter:
        guess = st.number_input(t(lang, "lesson.your_guess"), value=None, step=1.0, format="%g",
                                key=_guess_key(key), disabled=revealed, placeholder=t(lang, "lesson.guess_placeholder"))
    else:
        guess = None
    button = t(lang, "lesson.reveal_answer") if presenter else t(lang, "lesson.check_guess")
    st.button(button, key=f"{key}_reveal", on_click=_reveal, args=(key,),
              disabled=revealed or (guess is None and not presenter), type="primary")
    if not revealed:
        return
    kind = scenario_kind(lesson.scenarios[scenario])
    quantity_label = {"rlvr": rl_pipeline.label, "grpo": grpo_counting.label}.get(kind, label)(name).get(lang)
    if guess is not None and math.isfinite(guess):
        tolerance = block.data.get("tolerance", 0)
        right = abs(guess - answer) <= tolerance
        message = t(lang, "lesson.guess_right" if right else "lesson.guess_wrong", guess=format_quantity(guess),
                    answer=format_quantity(answer), quantity=quantity_label)
        (st.success if right else st.warning)(message)
    else:
        st.info(t(lang, "lesson.answer_is", quantity=quantity_label, answer=format_quantity(answer)))
    st.markdown(lesson.say(block.text("reveal"), lang))
    if kind == "rlvr":
        widgets.roll_arithmetic(lesson.scenarios[scenario], lang)
    elif kind == "grpo":
        st.markdown(layout.worked_markdown(
            grpo_counting.worked(grpo_counting.grpo_plan(lesson.scenarios[scenario])), lang))
    else:
        calculator_view.arithmetic(lesson.plan(scenario), lang)


def _text(block: Block) -> Text:
    """A text or aside block's own words in both languages."""
    return Text(block.data["zh"], block.data["en"])


def check(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    """The end-of-lesson self-check: questions from the bank for this lesson, fresh numbers per session."""
    from steplab.teaching import quiz
    from steplab_ui.shell import progress
    from steplab_ui.views import quiz as quiz_view

    st.subheader(t(lang, "lesson.self_check"))
    specs = [spec for spec in quiz.load_bank() if spec.lesson == lesson.number][: block.data.get("count", 3)]
    seed = st.session_state.setdefault(f"{key}_seed", st.session_state.get("_lesson_seed_base", 0) + lesson.number)
    # presenter view: the questions side by side, so that the part fits the projector (one under another, lesson
    # 11's three were 1,585 px high at 1920 x 1080)
    places = st.columns(len(specs), border=False) if presenter and specs else [st.container() for _ in specs]
    results = []
    for index, (spec, place) in enumerate(zip(specs, places, strict=True)):
        with place:
            results.append(quiz_view.render_question(quiz.generate(spec, seed + index), lang, key=f"{key}_q{index}",
                                                     titled=not presenter))
    if results and all(feedback is not None and feedback.correct for feedback in results):
        progress.mark_lesson_done(lesson.number)
        st.success(t(lang, "lesson.done"), icon=":material/verified:")


def render_block(lesson: Lesson, block: Block, lang: str, key: str, presenter: bool = False) -> None:
    if block.kind == "text":
        st.markdown(lesson.say(_text(block), lang))
    elif block.kind == "aside":
        with st.expander(lesson.say(block.text("title"), lang), icon=":material/school:", expanded=presenter):
            st.markdown(lesson.say(_text(block), lang))
    elif block.kind == "widget":
        widgets.render(lesson, block, lang, key, presenter)
    elif block.kind == "predict":
        predict(lesson, block, lang, key, presenter)
    elif block.kind == "check":
        check(lesson, block, lang, key, presenter)
    elif block.kind == "funnel":
        widgets.funnel(lesson, block, lang, key, presenter)


SCROLL_TOP = "_lesson_scroll_top"  # set when a lesson was opened from the end of the one before


def _open(lesson_id: str) -> None:
    st.session_state["lesson"] = lesson_id
    st.session_state[SCROLL_TOP] = st.session_state.get(SCROLL_TOP, 0) + 1


def scroll_if_opened() -> None:
    """After "Next lesson", show the new lesson from its top (the page would stay scrolled to the old one's end)."""
    from steplab_ui.shell import browser

    count = st.session_state.get(SCROLL_TOP)
    if count:
        browser.scroll_to_top(count, key="lesson_scroll_top")


def next_lesson(course: tuple[Lesson, ...], lesson: Lesson, lang: str) -> None:
    """At a lesson's end: the next lesson, or after the last one the self-check page."""
    later = [other for other in course if other.number > lesson.number]
    if later:
        following = later[0]
        st.button(t(lang, "lesson.next_lesson", title=f"{following.number}. {following.title.get(lang)}"),
                  key="lesson_next_lesson", type="primary", icon=":material/arrow_forward:", icon_position="right",
                  on_click=_open, args=(following.id,), help=t(lang, "lesson.next_lesson_help"))
    else:
        st.caption(t(lang, "lesson.finished"))
        layout.page_link("app_pages/selfcheck.py", "selfcheck", t(lang, "lesson.to_selfcheck"), ":material/quiz:")


def glossary(lang: str) -> None:
    """The course's vocabulary (`lessons/glossary.yaml`), folded away at the end of every lesson."""
    from steplab.teaching.glossary import glossary as terms

    with st.expander(t(lang, "lesson.glossary"), icon=":material/menu_book:"):
        st.caption(t(lang, "lesson.glossary_intro"))
        rows = []
        for term in terms():
            field = f"（`{term.field}`）" if lang == "zh" and term.field else (f" (`{term.field}`)" if term.field else "")
            rows.append(f"- **{term.term.get(lang)}**{field}{'：' if lang == 'zh' else ': '}{term.meaning.get(lang)}")
        st.markdown("\n".join(rows))
