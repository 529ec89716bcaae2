"""Compare 2–4 setups side by side: the chapter's three-setup table, generated live."""

import streamlit as st

from steplab.errors import SetupError, TrainerRefusal
from steplab.i18n import t
from steplab.teaching.compare import COMPARE_FIELDS, column_of
from steplab.teaching.presets import presets
from steplab.trainer.fields import FIELDS
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import PROFILES
from steplab_ui.shell import state
from steplab_ui.shell.page import page
from steplab_ui.views import compare as compare_view

CHAPTER = ("course_default", "course_batch2_acc8", "course_batch2_acc16")
CURRENT = "__current__"

context = page("compare")
setup, error, lang = context.setup, context.error, context.lang


COLUMNS = "cmp_columns"  # {column id: {field: value}}: plain state, which outlives a visit to another page
# {column id: generation}: a column's controls are drawn under keys of their generation, with their value given
# from COLUMNS; a new generation (a new visit, a column loaded from elsewhere) draws new controls. The controls' own
# state is never written: a control remounted on a second visit once showed its first value (8) beside a table
# that said 32, the value written into its state before it was drawn.
GENERATIONS = "cmp_generations"


def widget_key(column: int, field: str) -> str:
    generation = st.session_state[GENERATIONS].get(column, 0)
    return f"cmp_{column}_{field}" if generation == 0 else f"cmp_{column}_{field}_g{generation}"


def renew(column: int) -> None:
    """Draw `column`'s controls anew (new keys) with the values COLUMNS holds for it."""
    if column in st.session_state[GENERATIONS]:
        st.session_state[GENERATIONS][column] += 1


def load_column(column: int, values: dict) -> None:
    """Put `values` into `column` (controls it had are drawn anew to show them)."""
    st.session_state[COLUMNS][column] = {field: values.get(field, state.widget_default(field)) for field in COMPARE_FIELDS}
    renew(column)


def keep_typed(column: int, field: str) -> None:
    """A column's control changed: keep its value in the plain state (Streamlit forgets a control's own state when
    a run of another page does not draw it, and /compare raised KeyError on the next visit)."""
    st.session_state[COLUMNS][column][field] = st.session_state[widget_key(column, field)]


def start_from(column: int) -> None:
    choice = st.session_state[f"cmp_{column}_from"]
    if choice == CURRENT and setup is not None:
        load_column(column, setup.to_dict())
    elif choice in presets():
        load_column(column, {**presets()[choice].setup().to_dict(), **presets()[choice].values})


def add_column() -> None:
    ids = st.session_state["cmp_ids"]
    new = max(ids) + 1
    ids.append(new)
    load_column(new, setup.to_dict() if setup is not None else presets()["course_default"].values)


def remove_column(column: int) -> None:
    st.session_state["cmp_ids"].remove(column)
    st.session_state[COLUMNS].pop(column, None)
    st.session_state[GENERATIONS].pop(column, None)


if "cmp_ids" not in st.session_state or COLUMNS not in st.session_state:
    st.session_state["cmp_ids"] = list(range(len(CHAPTER)))
    st.session_state[COLUMNS], st.session_state[GENERATIONS] = {}, {}
    for index, key in enumerate(CHAPTER):
        load_column(index, presets()[key].values)

st.session_state.setdefault(GENERATIONS, {})
ids = st.session_state["cmp_ids"]
for column in ids:  # a drawn control Streamlit forgot (another page ran meanwhile): draw the column's anew
    drawn = column in st.session_state[GENERATIONS]
    if drawn and any(widget_key(column, field) not in st.session_state for field in COMPARE_FIELDS):
        renew(column)
    st.session_state[GENERATIONS].setdefault(column, 0)
options = [CURRENT, *presets()]
# what the columns hold now (callbacks and typed values are in the state before the script runs), so that the
# results come first, above the forms, at every width: on a phone the forms alone are two screens long
setups = [dict(st.session_state[COLUMNS][column]) for column in ids]
names = compare_view.column_names(setups, lang)


def sidebar_source() -> None:
    """Where the columns come from beside the sidebar's setup, which every other page shows: the column that is
    it, or its numbers and a button that puts it into the first column (after an imported YAML the sidebar showed
    the learner's run and this table the chapter's three setups, without a word)."""
    if setup is None:
        return
    column = column_of(setups, setup.to_dict())
    if column is not None:
        st.caption(t(lang, "compare.sidebar_column", n=column + 1))
        return
    try:
        steps = make_plan(setup).max_steps
    except (SetupError, TrainerRefusal):
        steps = None
    text = t(lang, "compare.sidebar_elsewhere", samples=setup.num_samples, batch=setup.per_device_train_batch_size,
             ga=setup.gradient_accumulation_steps, gpus=setup.world_size, count=setup.world_size,
             epochs=setup.num_train_epochs, steps="—" if steps is None else steps)
    with st.container(horizontal=True, vertical_alignment="center", key="cmp_sidebar"):
        st.info(text, icon=":material/info:")
        st.button(t(lang, "compare.sidebar_put", n=1), on_click=load_column, args=(ids[0], setup.to_dict()),
                  icon=":material/input:")


with st.container(key="cmp_results"):
    st.subheader(t(lang, "compare.table"))
    sidebar_source()
    compare_view.table(setups, lang, presenter=context.presenter)

st.subheader(t(lang, "compare.edit"))
columns = st.columns(len(ids))
for slot, column, name in zip(columns, ids, names, strict=True):
    with slot.container(border=True):
        st.markdown(f"**{name}**")
        st.selectbox(t(lang, "compare.start_from"), options, index=None, key=f"cmp_{column}_from",
                     on_change=start_from, args=(column,), placeholder=t(lang, "compare.start_placeholder"),
                     format_func=lambda k: t(lang, "compare.current") if k == CURRENT else presets()[k].title.get(lang))
        for field in COMPARE_FIELDS:
            kept = st.session_state[COLUMNS][column][field]  # the control is drawn with the kept value, in its type
            if field != "trainer":
                kept = (int if FIELDS[field].whole or field == "eval_steps" else float)(kept)
            label = t(lang, f"field.{field}")
            tied = {"key": widget_key(column, field), "on_change": keep_typed, "args": (column, field)}
            if field == "trainer":
                st.selectbox(label, list(PROFILES), index=list(PROFILES).index(kept), **tied,
                             format_func=lambda k: f"{k} · {PROFILES[k].matched}")
            elif field == "eval_steps":  # whole steps here: a column compares rhythms, not ratios
                st.number_input(label, min_value=1, max_value=int(FIELDS[field].high), value=kept, step=1, **tied)
            else:
                st.number_input(label, **state.number_range(field), value=kept,
                                step=1 if FIELDS[field].whole else 0.5, **tied)
        st.button(t(lang, "compare.remove"), key=f"cmp_{column}_remove", on_click=remove_column, args=(column,),
                  disabled=len(ids) <= 2, icon=":material/close:")

st.button(t(lang, "compare.add"), on_click=add_column, disabled=len(ids) >= 4, icon=":material/add:")
