"""AppTest: the self-check page in both languages; right answers get ✓ and the arithmetic, wrong ones the hint."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.i18n import catalogue
from steplab.teaching import quiz
from steplab.teaching.progress import PREFIX, VERSION, Progress, from_code, to_code

ROOT = Path(__file__).resolve().parents[1]
PAGE = str(ROOT / "app_pages" / "selfcheck.py")
SPECS = quiz.bank_by_id()


def page(lang: str = "en", current: tuple[str, int] | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["lang"] = lang
    if current is not None:
        at.session_state["selfcheck_current"] = current
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(at: AppTest) -> quiz.Question:
    question_id, seed = at.session_state["selfcheck_current"]
    return quiz.generate(SPECS[question_id], seed)


def base(question: quiz.Question) -> str:
    return f"selfcheck__{question.id}__{question.seed}"


def check(at: AppTest, question: quiz.Question) -> AppTest:
    at.button(key=f"{base(question)}__check").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def score(at: AppTest, lang: str = "en") -> str:
    return next(m.value for m in at.metric if m.label == catalogue(lang)["quiz.score"])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_renders_in_both_languages(lang):
    at = page(lang)
    assert at.title[0].value == catalogue(lang)["page.selfcheck.title"]
    question = shown(at)
    assert any(question.prompt.get(lang) == m.value for m in at.markdown)
    assert score(at, lang) == "0 / 0"
    assert any(c.value.startswith(f"{PREFIX}{VERSION}-") for c in at.code)
    assert at.button(key=f"{base(question)}__check").label == catalogue(lang)["quiz.check"]


def test_a_grpo_question_is_answered_with_a_number_and_shows_grpos_arithmetic():
    at = page("zh", ("l11-grpo-steps", 5))
    question = shown(at)
    at.number_input(key=f"{base(question)}__answer").set_value(question.answer).run()
    check(at, question)
    words = catalogue("zh")
    assert at.success and words["quiz.correct_mark"] in at.success[0].value
    assert any(words["grpo.quantity.unique_prompts_per_round"] in m.value for m in at.markdown)
    assert score(at, "zh") == "1 / 1"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_numeric_right_then_wrong(lang):
    at = page(lang, ("l4-total-steps", 11))
    question = shown(at)
    at.number_input(key=f"{base(question)}__answer").set_value(question.answer).run()
    check(at, question)
    assert at.success and catalogue(lang)["quiz.correct_mark"] in at.success[0].value
    assert not at.info  # no hint on a right answer
    assert any("`" in m.value and str(question.answer) in m.value.replace(",", "") for m in at.markdown)
    assert score(at, lang) == "1 / 1"

    at.number_input(key=f"{base(question)}__answer").set_value(question.answer + 3).run()
    assert not at.success and not at.error  # changing the answer clears the old feedback
    check(at, question)
    assert at.error and catalogue(lang)["quiz.wrong_mark"] in at.error[0].value
    assert any(question.hint.get(lang) in i.value for i in at.info)
    assert at.expander[0].label == catalogue(lang)["quiz.worked_reveal"]
    assert score(at, lang) == "1 / 1"  # a question counts once, at its first check
    assert catalogue(lang)["quiz.not_counted.earlier_right"] in at.error[0].value  # and the box says so


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_corrected_second_try_is_right_and_says_why_the_score_did_not_move(lang):
    """Issue 27 item 13: "✓ Right" after a corrected try stood beside a score of 0 / 1. The score counts each
    question's first check (its help says so); the ✓ box of a later check says that the first one counted."""
    at = page(lang, ("l4-total-steps", 11))
    question = shown(at)
    at.number_input(key=f"{base(question)}__answer").set_value(question.answer + 1).run()
    check(at, question)
    assert score(at, lang) == "0 / 1" and catalogue(lang)["quiz.not_counted.earlier_wrong"] not in at.error[0].value
    at.number_input(key=f"{base(question)}__answer").set_value(question.answer).run()
    check(at, question)
    assert score(at, lang) == "0 / 1"
    box = at.success[0].value
    assert catalogue(lang)["quiz.correct_mark"] in box and catalogue(lang)["quiz.not_counted.earlier_wrong"] in box


def test_choice_wrong_gives_hint_and_right_gives_explanation():
    spec = next(s for s in SPECS.values() if s.kind == "choice" and not s.multiple)
    at = page("en", (spec.id, 4))
    question = shown(at)
    wrong = next(i for i in range(len(question.options)) if i not in question.correct)
    at.radio(key=f"{base(question)}__choice").set_value(wrong).run()
    check(at, question)
    assert at.error and any(question.hint.en in i.value for i in at.info)
    assert score(at) == "0 / 1"
    at.radio(key=f"{base(question)}__choice").set_value(next(iter(question.correct))).run()
    check(at, question)
    assert at.success and any(question.explanation.en in m.value for m in at.markdown)
    assert score(at) == "0 / 1"


def test_multiple_choice_uses_checkboxes():
    spec = next(s for s in SPECS.values() if s.kind == "choice" and s.multiple)
    at = page("zh", (spec.id, 2))
    question = shown(at)
    for index in question.correct:
        at.checkbox(key=f"{base(question)}__option{index}").check()
    at.run()
    check(at, question)
    assert at.success and score(at, "zh") == "1 / 1"


def test_sliders_question():
    at = page("en", ("l3-keep-32", 0))
    question = shown(at)
    control = question.controls[0]
    slider = at.slider(key=f"{base(question)}__{control.field}")
    assert slider.value == control.start
    check(at, question)
    assert at.error and any(question.hint.en in i.value for i in at.info)
    assert any("✗" in m.value for m in at.markdown)
    at.slider(key=f"{base(question)}__{control.field}").set_value(dict(question.solution)[control.field]).run()
    check(at, question)
    assert at.success and any("✓" in m.value for m in at.markdown)


def test_new_question_and_lesson_filter():
    at = page("en")
    first = at.session_state["selfcheck_current"]
    at.button(key="selfcheck_new").click().run()
    assert at.session_state["selfcheck_current"] != first
    at.pills(key="selfcheck_lessons").set_value([9]).run()
    assert not at.exception
    assert SPECS[at.session_state["selfcheck_current"][0]].lesson == 9
    for _ in range(3):
        at.button(key="selfcheck_new").click().run()
        assert SPECS[at.session_state["selfcheck_current"][0]].lesson == 9
    at.pills(key="selfcheck_lessons").set_value([]).run()
    assert not at.exception
    assert any(catalogue("en")["quiz.no_lessons"] in i.value for i in at.info)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_question_on_screen_is_in_the_address_and_a_new_session_there_shows_it_again(lang):
    """Issue 27 item 7: after a server restart the page starts a new session on the same address; the question (and
    the answer typed into it) must not change under the student's hands."""
    at = page(lang)
    question = shown(at)
    assert at.query_params["question"] == question.token
    at.button(key="selfcheck_new").click().run()
    assert at.query_params["question"] == shown(at).token != question.token
    again = AppTest.from_file(PAGE, default_timeout=60)  # a new session on that address
    again.query_params.update({"lang": lang, "question": at.query_params["question"]})
    again.run()
    assert not again.exception and shown(again).token == at.query_params["question"]
    for bad in ("l4-total-steps:99999999999", "no-such-question:1", "l4-total-steps", "x" * 500, ":1"):
        broken = AppTest.from_file(PAGE, default_timeout=60)
        broken.query_params.update({"lang": lang, "question": bad})
        broken.run()
        assert not broken.exception
        assert [w.value for w in broken.warning] == [catalogue(lang)["quiz.link_question"].format(
            value=bad[:40])], bad
        assert broken.query_params["question"] == shown(broken).token  # a new question, in the address


def test_progress_code_restores_and_bad_codes_say_why():
    at = page("en")
    code = to_code(Progress(frozenset({1, 2}), ((2, 2, 3),), 5, 8))
    at.text_input(key="selfcheck_progress__code").set_value(code).run()
    at.button(key="selfcheck_progress__restore").click().run()
    assert not at.exception
    assert score(at) == "5 / 8"
    assert any(c.value == code for c in at.code)
    assert at.success and catalogue("en")["quiz.progress.restored"] in at.success[-1].value
    assert from_code(next(c.value for c in at.code if c.value.startswith(f"{PREFIX}{VERSION}-"))).lessons_done == {1, 2}
    for bad in ("SL1-2000-000A-SQ1Z", "garbage", "SL1-" + "Z" * 150, "١٢٣"):
        at.text_input(key="selfcheck_progress__code").set_value(bad).run()
        at.button(key="selfcheck_progress__restore").click().run()
        assert not at.exception
        assert at.error and "Cannot restore" in at.error[-1].value
        assert score(at) == "5 / 8"  # a bad code changes nothing


def test_broken_session_progress_is_ignored():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["steplab_progress"] = {"selfstudy": {"correct": 9, "attempts": 1}}
    at.run()
    assert not at.exception
    assert score(at, "zh") == "0 / 0"


def two_questions_page():
    """What a lesson page does: several questions on one page, each with its own key (run by AppTest)."""
    from steplab.teaching import quiz
    from steplab_ui.shell.progress import get_progress
    from steplab_ui.views.quiz import render_question

    bank = quiz.bank_by_id()
    render_question(quiz.generate(bank["l2-micro-batches"], 1), "en", key="lesson2_a")
    render_question(quiz.generate(bank["l3-effective-batch"], 2), "en", key="lesson2_b")
    render_question(quiz.generate(bank["l3-effective-batch"], 2), "en", key="demo", source=None)
    progress = get_progress()
    import streamlit as st

    st.text(f"scores {progress.lesson_scores} selfstudy {progress.selfstudy_attempts}")


def test_questions_share_a_page_and_count_in_their_lesson():
    at = AppTest.from_function(two_questions_page, default_timeout=60)
    at.run()
    assert not at.exception
    first = quiz.generate(SPECS["l2-micro-batches"], 1)
    second = quiz.generate(SPECS["l3-effective-batch"], 2)
    at.number_input(key=f"lesson2_a__{first.id}__1__answer").set_value(first.answer).run()
    at.button(key=f"lesson2_a__{first.id}__1__check").click().run()
    assert len(at.success) == 1 and not at.error  # only the checked question shows feedback
    at.number_input(key=f"lesson2_b__{second.id}__2__answer").set_value(second.answer + 1).run()
    at.button(key=f"lesson2_b__{second.id}__2__check").click().run()
    assert len(at.success) == 1 and len(at.error) == 1
    at.number_input(key=f"demo__{second.id}__2__answer").set_value(second.answer).run()
    at.button(key=f"demo__{second.id}__2__check").click().run()
    assert len(at.success) == 2
    assert at.text[0].value == "scores ((2, 1, 1), (3, 0, 1)) selfstudy 0"  # the demo (source None) is not counted


def answered_and_checked_in_one_run():
    """A question whose answer and Check reach the server as one run: the check's callback first, then the answer's
    (the order a page reconnected after a server restart listed its controls). Run by AppTest."""
    import streamlit as st

    from steplab.teaching import quiz
    from steplab_ui.views import quiz as view

    question = quiz.generate(quiz.bank_by_id()["l2-micro-batches"], 1)
    if st.session_state.pop("together", False):  # what Streamlit does before the script when both arrive at once
        st.session_state[f"k__{question.id}__1__answer"] = question.answer
        view._check(question, "k", "selfstudy")
        view._clear("k")
    view.render_question(question, "en", key="k", source="selfstudy")


def test_a_check_that_arrives_with_the_answer_is_graded_whatever_the_callback_order():
    at = AppTest.from_function(answered_and_checked_in_one_run, default_timeout=60)
    at.run()
    assert not at.success and not at.error
    at.session_state["together"] = True
    at.run()
    assert not at.exception
    assert len(at.success) == 1  # graded ✓: the answer's callback after the check's did not unsay it
    question = quiz.generate(SPECS["l2-micro-batches"], 1)
    at.number_input(key=f"k__{question.id}__1__answer").set_value(question.answer + 1).run()
    assert not at.success and not at.error  # a later change of the answer alone still clears the old feedback
