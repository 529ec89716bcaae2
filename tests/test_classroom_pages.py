"""AppTest: the live class's two pages, in both languages. The instructor opens a class, asks, watches the
answers, reveals and reads the class table; a student joins with the code, answers and gets feedback. Every number
the tests expect comes from the engine (the plan, the poll's reveal), and what the store holds is read back from
the same database the pages use (`STEPLAB_DATA_DIR`, a fresh folder per test process: tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.classroom import polls
from steplab.classroom.store import JOIN_WINDOW, JOINS_PER_CLIENT, ClassError, Store, roster_csv
from steplab.i18n import LANGUAGES, fmt_int, t
from steplab.teaching import quiz
from steplab.teaching.presets import presets
from steplab.teaching.progress import Progress
from steplab.trainer.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]
CLASS_PAGE, JOIN_PAGE = str(ROOT / "app_pages" / "classroom.py"), str(ROOT / "app_pages" / "join.py")
SELFCHECK_PAGE = str(ROOT / "app_pages" / "selfcheck.py")
SETUP = presets()["course_default"].setup()
PLAN = make_plan(SETUP)
POLL = polls.poll_from_setup(SETUP)


@pytest.fixture(scope="module")
def store():
    opened = Store()  # the database the pages open (same environment)
    yield opened
    opened.close()


def run(path: str, lang: str, **params: str) -> AppTest:
    at = AppTest.from_file(path, default_timeout=60)
    if lang == "en":
        at.query_params["lang"] = "en"
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def again(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, lang: str, key: str) -> str:
    return next(m.value for m in at.metric if m.label == t(lang, key))


def words(at: AppTest) -> str:
    """Everything the page wrote as text (markdown, captions, boxes, metrics)."""
    parts = [e.value for kind in (at.markdown, at.caption, at.info, at.success, at.warning, at.error) for e in kind]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(str(part) for part in parts)


def opened_class(lang: str) -> AppTest:
    at = run(CLASS_PAGE, lang)
    next(b for b in at.button if b.label == t(lang, "room.open")).click()
    return again(at)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_class_from_open_to_reveal(store, lang):
    at = opened_class(lang)
    token = at.query_params["host"]
    info = store.host(token)
    assert metric(at, lang, "room.code") == info.join_code
    assert t(lang, "room.poll.none") in words(at)
    at.button(key="room_ask").click()  # the default question: the sidebar's setup, the course default
    again(at)
    current = store.current_poll(info.class_id)
    assert current is not None and current.poll == POLL
    seats = [store.join(info.join_code, name) for name in ("Ana", "Bo", "Cy", "Dee")]
    micro = PLAN.micro_batches_per_epoch  # micro-batches of one epoch: a wrong answer students give (issue 27)
    trap = polls.trap_for(POLL, micro)
    for seat, answer in zip(seats, (str(PLAN.max_steps), str(micro), str(micro), "7"), strict=True):
        store.answer(seat.token, current.poll_id, answer)
    again(at)
    assert metric(at, lang, "room.students") == "4"
    assert metric(at, lang, "room.poll.answered") == t(lang, "room.poll.answered_value", answered=4, joined=4)
    assert at.get("plotly_chart"), "the spread of answers is drawn"
    assert "Ana" not in "\n".join(e.value for e in at.caption)  # the chart's sentence names answers, not people
    at.button(key="room_reveal").click()
    again(at)
    assert store.current_poll(info.class_id).revealed
    assert metric(at, lang, "room.reveal.answer") == fmt_int(PLAN.max_steps)
    assert metric(at, lang, "room.reveal.right") == t(lang, "room.reveal.right_value", right=1, answered=4)
    said = words(at)
    assert polls.reveal(POLL).worked[-1].formula in said
    # the reveal explains the answers the room gave, most frequent first, and no wrong answer nobody gave
    given = [t(lang, "room.reveal.trap", value=fmt_int(micro), count=2, why=trap.why.get(lang)),
             t(lang, "room.reveal.no_rule", value="7", count=1)]
    assert f"- {given[0]}\n- {given[1]}" in said
    unused = [other for other in polls.reveal(POLL).traps if other is not trap]
    assert unused and not [other for other in unused if other.why.get(lang) in said]
    assert not [b for b in at.button if b.key == "room_reveal"], "a revealed question cannot be revealed again"


def test_a_grpo_question_from_the_bank_asked_and_revealed_with_grpos_arithmetic(store):
    """Issue 32: a GRPO self-check question put to the class; the reveal is GRPO's (its arithmetic, the prompts
    taken as steps named as the room's wrong answer)."""
    lang = "zh"
    at = run(CLASS_PAGE, lang)
    next(b for b in at.button if b.label == t(lang, "room.open")).click()
    at.session_state["room_seed"] = 3
    again(at)
    info = store.host(at.query_params["host"])
    at.segmented_control(key="room_kind").set_value("bank")
    again(at)
    at.selectbox(key="room_bank").set_value("l11-grpo-steps")
    again(at)
    options = at.selectbox(key="room_bank").options  # issue 39: plain labels, no ids, no Markdown
    assert not [o for o in options if "`" in o or any(qid in o for qid in polls.bank_choices())]
    at.button(key="room_ask").click()
    again(at)
    current = store.current_poll(info.class_id)
    poll = polls.poll_from_bank("l11-grpo-steps", 3)
    assert current.poll == poll
    # issue 39: the panel keeps the asked question (no new numbers above the live one) and says it is asked
    assert [e.value for e in at.markdown].count(polls.prompt(poll).get(lang)) == 2
    assert t(lang, "room.ask.is_live") in words(at) and not [b for b in at.button if b.key == "room_ask"]
    question = quiz.generate(quiz.bank_by_id()["l11-grpo-steps"], 3)
    prompts = dict(question.values)["num_samples"]
    for name, answer in (("Ana", fmt_int(question.answer)), ("Bo", fmt_int(prompts))):
        store.answer(store.join(info.join_code, name).token, current.poll_id, answer)
    at.button(key="room_reveal").click()
    again(at)
    assert metric(at, lang, "room.reveal.answer") == fmt_int(question.answer)
    said = words(at)
    assert polls.reveal(poll).worked[-1].formula in said
    trap = polls.trap_for(poll, float(prompts))
    assert trap is not None and trap.why.get(lang) in said
    assert t(lang, "room.reveal.trap", value=fmt_int(prompts), count=1, why=trap.why.get(lang)) in said
    assert [b for b in at.button if b.key == "room_ask"]  # revealed: the same question may be asked again
    at.button(key="room_new_numbers").click()  # new numbers only when asked for: then the question can be asked
    again(at)
    assert at.session_state["room_seed"] != 3
    assert [b for b in at.button if b.key == "room_ask"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_presenter_view_does_not_send_the_instructor_to_the_hidden_sidebar(store, lang):
    at = run(CLASS_PAGE, lang, presenter="1")
    next(b for b in at.button if b.label == t(lang, "room.open")).click()
    again(at)
    said = words(at)
    assert t(lang, "room.ask.setup_note_presenter") in said and t(lang, "room.ask.setup_note") not in said
    plain = run(CLASS_PAGE, lang, host=at.query_params["host"])
    assert t(lang, "room.ask.setup_note") in words(plain)


def test_a_close_answer_hears_almost_and_a_far_one_does_not(store):
    lang = "zh"
    opened = store.open_class()
    near, far = store.join(opened.join_code, "Near"), store.join(opened.join_code, "Far")
    poll_id = store.ask(opened.host_token, POLL)
    answers = {near: PLAN.max_steps - 1, far: PLAN.max_steps * 4 + 7}
    for seat, value in answers.items():
        store.answer(seat.token, poll_id, f"{value}步")  # issue 39: the unit a Chinese student types
    store.reveal(opened.host_token, poll_id)
    for seat, value in answers.items():
        join = run(JOIN_PAGE, lang, seat=seat.token)
        key = "join.close" if seat is near else "join.wrong"
        assert t(lang, key, answer=fmt_int(PLAN.max_steps), value=fmt_int(value)) in words(join)
    assert polls.trap_for(POLL, PLAN.max_steps - 1) is None and polls.trap_for(POLL, PLAN.max_steps * 4 + 7) is None
    said = words(run(CLASS_PAGE, lang, host=opened.host_token))  # the projector: close said with its gap, far not
    assert t(lang, "room.reveal.close", value=fmt_int(PLAN.max_steps - 1), count=1, gap="1") in said
    assert t(lang, "room.reveal.no_rule", value=fmt_int(PLAN.max_steps * 4 + 7), count=1) in said


def test_back_on_the_class_page_through_the_menu_is_the_same_class(store):
    """A page change through the menu starts from a bare address: the instructor comes back to their class, not to
    "Open a class" (whose click would open a second one)."""
    at = opened_class("en")
    token = at.query_params["host"]
    at.query_params.pop("host")
    again(at)
    assert at.query_params["host"] == token and metric(at, "en", "room.code") == store.host(token).join_code
    assert not [b for b in at.button if b.label == t("en", "room.open")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_class_table_and_its_csv_only_when_opened_and_never_on_the_projector(store, lang):
    at = opened_class(lang)
    token = at.query_params["host"]
    info = store.host(token)
    mei = store.join(info.join_code, "Mei")
    store.report_progress(mei.token, Progress(lessons_done=frozenset({2}), selfstudy_correct=1, selfstudy_attempts=2))
    poll_id = store.ask(token, POLL)
    store.answer(mei.token, poll_id, str(PLAN.max_steps))
    store.reveal(token, poll_id)
    again(at)
    # revealed, in the normal view (which is projected too): no name, no table, until the instructor opens it
    assert metric(at, lang, "room.reveal.answer") == fmt_int(PLAN.max_steps)
    assert not at.dataframe and "Mei" not in words(at) and not at.get("download_button")
    assert [e.label for e in at.expander if e.label == t(lang, "room.table.title")]
    at.session_state["room_table_open"] = True
    again(at)
    table = at.dataframe[0].value
    assert list(table.columns)[0] == t(lang, "class.csv.nickname")
    assert table.iloc[0, 0] == "Mei" and table.iloc[0, 2] == "2"
    download = at.get("download_button")[0]
    assert download.proto.label == t(lang, "room.table.download")
    assert roster_csv(store.roster(token), lang).splitlines()[1].startswith("Mei,")
    projector = run(CLASS_PAGE, lang, host=token, presenter="1")
    assert not projector.dataframe and "Mei" not in words(projector)
    assert metric(projector, lang, "room.code") == info.join_code


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_student_joins_answers_and_reads_the_feedback(store, lang):
    opened = store.open_class()
    join = run(JOIN_PAGE, lang, code=opened.join_code.lower())
    assert join.text_input(key="join_code").value == opened.join_code.lower()
    join.text_input(key="join_nickname").input("Lin")
    next(b for b in join.button if b.label == t(lang, "join.button")).click()
    again(join)
    seat = join.query_params["seat"]
    assert store.seat(seat).nickname == "Lin"
    assert t(lang, "join.joined", nickname="Lin") in words(join)
    assert t(lang, "join.waiting") in words(join)
    poll_id = store.ask(opened.host_token, POLL)
    again(join)
    assert polls.prompt(POLL).get(lang) in words(join)
    key = f"join_answer_{poll_id}"
    join.text_input(key=key).input("many")  # not a number: said, nothing stored
    next(b for b in join.button if b.label == t(lang, "join.send")).click()
    again(join)
    assert join.error and store.my_answer(seat, poll_id) is None
    trap = polls.reveal(POLL).traps[0]
    join.text_input(key=key).input(fmt_int(int(trap.value)))
    next(b for b in join.button if b.label == t(lang, "join.send")).click()
    again(join)
    assert store.my_answer(seat, poll_id) == trap.value
    assert t(lang, "join.sent", value=fmt_int(int(trap.value))) in words(join)
    store.reveal(opened.host_token, poll_id)
    again(join)
    said = words(join)
    assert t(lang, "join.wrong", answer=fmt_int(PLAN.max_steps), value=fmt_int(int(trap.value))) in said
    assert trap.why.get(lang) in said
    assert not [b for b in join.button if b.label == t(lang, "join.send")], "a revealed question takes no answers"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_fraction_of_a_step_is_refused_and_said(store, lang):
    opened = store.open_class()
    seat = store.join(opened.join_code, "Lu")
    poll_id = store.ask(opened.host_token, POLL)
    join = run(JOIN_PAGE, lang, seat=seat.token)
    join.text_input(key=f"join_answer_{poll_id}").input("150.5")
    next(b for b in join.button if b.label == t(lang, "join.send")).click()
    again(join)
    refusal = ClassError("class.answer", problem=polls.PollAnswerError("poll.whole_steps", value=150.5).text)
    assert [e.value for e in join.error] == [refusal.message(lang)]
    assert "150.5" in join.error[0].value and store.my_answer(seat.token, poll_id) is None
    assert join.text_input(key=f"join_answer_{poll_id}").help == t(lang, "join.answer_help")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_client_over_its_joins_limit_is_told_how_long_to_wait_and_gets_no_seat(store, lang):
    opened = store.open_class()
    for _ in range(JOINS_PER_CLIENT):  # an AppTest session has no address: the page names its client "local"
        store.join(opened.join_code, "", client="local")
    join = run(JOIN_PAGE, lang, code=opened.join_code)
    next(b for b in join.button if b.label == t(lang, "join.button")).click()
    again(join)
    window = int(JOIN_WINDOW.total_seconds())
    said = {ClassError("class.too_many_joins", limit=JOINS_PER_CLIENT, window=window, seconds=s, count=s).message(lang)
            for s in range(1, window + 1)}
    assert [e.value for e in join.error] and join.error[0].value in said
    assert "seat" not in join.query_params and store.host(opened.host_token).students == JOINS_PER_CLIENT
    assert join.text_input(key="join_code") is not None  # the form stays, to try again


def test_progress_made_while_joined_reaches_the_class_table(store):
    opened = store.open_class()
    seat = store.join(opened.join_code, "Kai")
    join = AppTest.from_file(JOIN_PAGE, default_timeout=60)
    join.query_params["seat"] = seat.token
    join.session_state["steplab_progress"] = Progress(lessons_done=frozenset({1, 4}), selfstudy_correct=3,
                                                      selfstudy_attempts=3).to_dict()
    join.run()
    assert not join.exception
    row = store.roster(opened.host_token)[0]
    assert (row.nickname, row.lessons_done, row.selfstudy_correct) == ("Kai", (1, 4), 3)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_new_session_on_a_seats_address_takes_the_seat_and_its_progress_back(store, lang):
    """Issue 27 item 7: after a server restart (or on another replica) the browser's page starts a new session on
    the same address. The seat is in that address on every page, and its progress in the database."""
    opened = store.open_class()
    seat = store.join(opened.join_code, "Kai")
    store.report_progress(seat.token, Progress(lessons_done=frozenset({2}), selfstudy_correct=2, selfstudy_attempts=3))
    question = quiz.generate(quiz.bank_by_id()["l4-total-steps"], 11)
    selfcheck = AppTest.from_file(SELFCHECK_PAGE, default_timeout=60)  # a fresh session, as after the restart
    selfcheck.query_params.update({"seat": seat.token, **({"lang": "en"} if lang == "en" else {})})
    selfcheck.session_state["selfcheck_current"] = (question.id, question.seed)
    again(selfcheck)
    assert selfcheck.query_params["seat"] == seat.token
    score = next(m.value for m in selfcheck.metric if m.label == t(lang, "quiz.score"))
    assert score == t(lang, "quiz.score_value", correct=2, attempts=3)  # not 0 / 0
    base = f"selfcheck__{question.id}__{question.seed}"
    selfcheck.number_input(key=f"{base}__answer").set_value(question.answer)
    selfcheck.button(key=f"{base}__check").click()
    again(selfcheck)
    row = store.roster(opened.host_token)[0]  # the check after the restart reaches the class table
    assert (row.selfstudy_correct, row.selfstudy_attempts, row.lessons_done) == (3, 4, (2,))
    # the join page of that session is the seat's, not an empty form
    join = run(JOIN_PAGE, lang, seat=seat.token)
    assert t(lang, "join.joined", nickname="Kai") in words(join) and not join.text_input


@pytest.mark.parametrize("lang", LANGUAGES)
def test_wrong_codes_and_links_get_a_clear_message_and_no_controls(store, lang):
    join = run(JOIN_PAGE, lang)
    join.text_input(key="join_code").input("ZZZZZZ")
    next(b for b in join.button if b.label == t(lang, "join.button")).click()
    again(join)
    assert [e.value for e in join.error] == [ClassError("class.unknown_code").message(lang)]
    opened = store.open_class()
    seat = store.join(opened.join_code, "Eve")
    as_host = run(CLASS_PAGE, lang, host=seat.token)  # a student's link on the instructor's page
    assert [e.value for e in as_host.error] == [ClassError("class.not_host").message(lang)]
    assert not [b for b in as_host.button if b.key in ("room_ask", "room_reveal", "room_delete")]
    assert not as_host.dataframe
    stale = run(JOIN_PAGE, lang, seat="not-a-seat")
    assert ClassError("class.not_seat").message(lang) in [e.value for e in stale.warning]
    assert stale.text_input(key="join_code") is not None and "seat" not in stale.query_params


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_instructor_deletes_the_class(store, lang):
    at = opened_class(lang)
    token = at.query_params["host"]
    at.checkbox(key="room_delete_confirm").check()
    again(at)
    at.button(key="room_delete").click()
    again(at)
    assert t(lang, "room.delete.done") in words(at)
    assert "host" not in at.query_params
    with pytest.raises(ClassError):
        store.host(token)
