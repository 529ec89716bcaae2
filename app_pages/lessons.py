"""Lessons: the course chapter as interactive lessons, one at a time; presenter view shows one part at a time."""

import streamlit as st

from steplab.i18n import t
from steplab.teaching.lessons import LessonError, load_lessons
from steplab_ui.shell import progress
from steplab_ui.shell.page import page
from steplab_ui.views import lesson as lesson_view
from steplab_ui.views import quiz as quiz_view

context = page(None)  # the first row holds the lesson chooser (beside the presenter switch); the lesson writes its title
lang, presenter = context.lang, context.presenter

try:
    course = load_lessons()
except LessonError as problem:  # an author's mistake: say where, never a traceback
    st.error(t(lang, "lesson.broken", message=str(problem)))
    st.stop()

lessons = {lesson.id: lesson for lesson in course}
# a lesson's id, a split lesson's old id, and its number (the lessons are numbered everywhere: `?lesson=11`)
links = {**{str(lesson.number): lesson.id for lesson in course},
         **{name: lesson.id for lesson in course for name in (lesson.id, *lesson.aliases)}}
WRITTEN = "_lesson_in_url"  # the lesson this page last put into the URL (kept when another page clears the chooser)
wanted = st.query_params.get("lesson")
shown = st.session_state.get("lesson")  # the chooser's state: gone after a visit to another page
if wanted in links and (wanted != st.session_state.get(WRITTEN) or shown is None):  # a link, back/forward, "next"
    shown = links[wanted]
elif shown not in lessons:  # back through the menu (no lesson in the URL): the lesson left last, else the first
    shown = st.session_state.get(WRITTEN) if st.session_state.get(WRITTEN) in lessons else course[0].id
st.session_state["lesson"] = shown  # every run: the chooser's label changes with the language, and a new label
# would otherwise start the chooser over at lesson 1
if wanted and wanted not in links:
    st.warning(t(lang, "url.ignored", key="lesson", value=str(wanted)[:40]))

choice = context.heading.selectbox(t(lang, "lesson.choose"), list(lessons), key="lesson",
                                   format_func=lambda key: f"{lessons[key].number}. {lessons[key].title.get(lang)}",
                                   label_visibility="collapsed" if presenter else "visible")
st.query_params["lesson"] = st.session_state[WRITTEN] = choice

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
progress.keep_progress(lang)  # last: a check finished in this run is in the code this browser keeps
