"""Lessons: the course chapter as interactive lessons, one at a time, with a presenter view for class."""

import streamlit as st

from steplab.i18n import t
from steplab.teaching.lessons import LessonError, load_lessons
from steplab_ui import lesson_view, quiz_view
from steplab_ui.page import page

lang = page(None).lang  # the lesson writes its own title

try:
    lessons = {lesson.id: lesson for lesson in load_lessons()}
except LessonError as problem:  # an author's mistake: say where, never a traceback
    st.error(t(lang, "lesson.broken", message=str(problem)))
    st.stop()

if "lesson" not in st.session_state:
    wanted = st.query_params.get("lesson")
    st.session_state["lesson"] = wanted if wanted in lessons else next(iter(lessons))
    if wanted and wanted not in lessons:
        st.warning(t(lang, "url.ignored", key="lesson", value=str(wanted)[:40]))
if "presenter" not in st.session_state:
    st.session_state["presenter"] = st.query_params.get("presenter") in ("1", "true")

top = st.columns([3, 1])
choice = top[0].selectbox(t(lang, "lesson.choose"), list(lessons), key="lesson",
                          format_func=lambda key: f"{lessons[key].number}. {lessons[key].title.get(lang)}")
presenter = top[1].toggle(t(lang, "lesson.presenter"), key="presenter", help=t(lang, "lesson.presenter_help"))
st.query_params["lesson"] = choice
if presenter:
    st.query_params["presenter"] = "1"
else:
    st.query_params.pop("presenter", None)

lesson = lessons[choice]
st.title(f"{lesson.number}. {lesson.title.get(lang)}")
if presenter:
    st.html(lesson_view.PRESENTER_CSS)
    count = len(lesson.blocks)
    index = min(max(int(st.session_state.get(f"{lesson.id}_block", 0)), 0), count - 1)
    back, position, forward = st.columns([1, 2, 1])
    if back.button(t(lang, "lesson.previous"), disabled=index == 0, shortcut="ArrowLeft", width="stretch"):
        index -= 1
    if forward.button(t(lang, "lesson.next"), disabled=index == count - 1, shortcut="ArrowRight", width="stretch"):
        index += 1
    st.session_state[f"{lesson.id}_block"] = index
    position.progress((index + 1) / count, text=t(lang, "lesson.position", n=index + 1, total=count))
    lesson_view.render_block(lesson, lesson.blocks[index], lang, key=f"{lesson.id}_{index}", presenter=True)
else:
    st.markdown(f"**{t(lang, 'lesson.goals')}**")
    for goal in lesson.goals:
        st.markdown(f"- {lesson.say(goal, lang)}")
    for index, block in enumerate(lesson.blocks):
        lesson_view.render_block(lesson, block, lang, key=f"{lesson.id}_{index}")
        if block.kind != "text":
            st.divider()
    with st.expander(t(lang, "lesson.progress"), icon=":material/bookmark:"):
        quiz_view.render_progress(lang, key="lesson_progress")
