"""Lessons: the course chapter as interactive lessons, one at a time; presenter view shows one part at a time."""

import streamlit as st

from steplab.i18n import t
from steplab.teaching.lessons import LessonError, load_lessons
from steplab_ui import lesson_view, quiz_view
from steplab_ui.page import page

context = page(None)  # the first row holds the lesson chooser (beside the presenter switch); the lesson writes its title
lang, presenter = context.lang, context.presenter

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

choice = context.heading.selectbox(t(lang, "lesson.choose"), list(lessons), key="lesson",
                                   format_func=lambda key: f"{lessons[key].number}. {lessons[key].title.get(lang)}",
                                   label_visibility="collapsed" if presenter else "visible")
st.query_params["lesson"] = choice

lesson = lessons[choice]
st.title(f"{lesson.number}. {lesson.title.get(lang)}")
if presenter:
    index = lesson_view.parts(lesson, lang)
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
