"""Lessons: the course chapter as interactive lessons, one at a time; presenter view shows one part at a time."""

import streamlit as st

from steplab.i18n import t
from steplab.teaching.lessons import LessonError, load_lessons
from steplab_ui import lesson_view, quiz_view
from steplab_ui.page import page

context = page(None)  # the first row holds the lesson chooser (beside the presenter switch); the lesson writes its title
lang, presenter = context.lang, context.presenter

try:
    course = load_lessons()
except LessonError as problem:  # an author's mistake: say where, never a traceback
    st.error(t(lang, "lesson.broken", message=str(problem)))
    st.stop()

lessons = {lesson.id: lesson for lesson in course}
links = {name: lesson.id for lesson in course for name in (lesson.id, *lesson.aliases)}  # a split lesson's old id too
WRITTEN = "_lesson_in_url"  # the lesson this page last put into the URL
wanted = st.query_params.get("lesson")
if wanted in links and wanted != st.session_state.get(WRITTEN):  # a link, back/forward or "next": the URL leads
    st.session_state["lesson"] = links[wanted]
elif "lesson" not in st.session_state:
    st.session_state["lesson"] = course[0].id
    if wanted:
        st.warning(t(lang, "url.ignored", key="lesson", value=str(wanted)[:40]))

choice = context.heading.selectbox(t(lang, "lesson.choose"), list(lessons), key="lesson",
                                   format_func=lambda key: f"{lessons[key].number}. {lessons[key].title.get(lang)}",
                                   label_visibility="collapsed" if presenter else "visible")
st.query_params["lesson"] = st.session_state[WRITTEN] = choice
quiz_view.keep_progress(lang)

lesson = lessons[choice]
lesson_view.scroll_if_opened()
st.title(f"{lesson.number}. {lesson.title.get(lang)}")
if presenter:
    index = lesson_view.parts(lesson, lang)
    lesson_view.render_block(lesson, lesson.blocks[index], lang, key=f"{lesson.id}_{index}", presenter=True)
else:
    st.markdown(f"**{t(lang, 'lesson.goals')}**")
    for goal in lesson.goals:
        st.markdown(f"- {lesson.say(goal, lang)}")
    shown = lesson.visible_blocks(lambda index: lesson_view.is_revealed(f"{lesson.id}_{index}"))
    for index, block in enumerate(lesson.blocks[:shown]):
        lesson_view.render_block(lesson, block, lang, key=f"{lesson.id}_{index}")
        if block.kind not in ("text", "aside"):
            st.divider()
    if shown < len(lesson.blocks):  # the rest would give the answer away: it comes once the learner has answered
        st.caption(t(lang, "lesson.answer_first"), help=t(lang, "lesson.answer_first_help"))
    else:
        lesson_view.next_lesson(course, lesson, lang)
    lesson_view.glossary(lang)
    with st.expander(t(lang, "lesson.progress"), icon=":material/bookmark:"):
        quiz_view.render_progress(lang, key="lesson_progress")
