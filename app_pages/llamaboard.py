"""LlamaBoard's Train tab: its fields, labels and defaults (llamafactory's own web UI code), the command and YAML
its "Preview command" gives, and the steps that run would take."""

from urllib.parse import urlencode

import streamlit as st

from steplab.dataset.catalog import KNOWN_DATASET_ROWS
from steplab.errors import InputError, TrainerRefusal
from steplab.i18n import t
from steplab.io.llamaboard import BoardField, LlamaBoardError, board, board_run, default_form
from steplab.trainer.fields import FIELDS
from steplab.trainer.plan import make_plan
from steplab.trainer.query import to_query
from steplab_ui.shell import layout, state
from steplab_ui.shell.page import page
from steplab_ui.views import calculator as calculator_view

context = page("llamaboard")
lang = context.lang
BOARD = board()
PREFIX = "lb_"  # widget keys: lb_<LlamaBoard's element name>; none is a shared setup key
ROWS_PREFIX = "lb_rows_"
STARTS = default_form()
CHOICES = {"lr_scheduler_type": FIELDS["lr_scheduler_type"].choices}  # transformers' SchedulerType, as StepLab knows it
MAX_IN_ROW = 5
TEXT_DROPDOWNS = ("model_name", "template")  # any name LlamaBoard's dropdowns accept (allow custom / long lists)

for name, start in STARTS.items():
    st.session_state.setdefault(PREFIX + name, start)


def _stage_changed() -> None:
    """LlamaBoard's `change_stage` (webui/control.py:78-84): the dataset is cleared, packing on for pre-training."""
    st.session_state[PREFIX + "dataset"] = []
    stages = BOARD.fields["training_stage"].facts["stages"]
    st.session_state[PREFIX + "packing"] = stages.get(st.session_state[PREFIX + "training_stage"]) == "pt"


def _help(f: BoardField) -> str:
    """LlamaBoard's info line, its slider's range, and where the field comes from."""
    parts = [f.info_in(lang)] if f.info_in(lang) else []
    if f.minimum is not None:
        parts.append(t(lang, "llamaboard.range", low=f"{f.minimum:g}", high=f"{f.maximum:g}", step=f"{f.step:g}"))
    default = "—" if f.default in (None, "", []) else f"{f.default}"
    parts.append(t(lang, "llamaboard.source_of", source=f.source, default=default))
    return "\n\n".join(parts)


def _control(f: BoardField) -> None:
    """One LlamaBoard widget as the nearest Streamlit control, with LlamaBoard's label in the user's language."""
    key, label, helptext = PREFIX + f.name, f.label_in(lang), _help(f)
    if f.name == "dataset":
        st.multiselect(label, list(KNOWN_DATASET_ROWS), key=key, accept_new_options=True, help=helptext,
                       placeholder=t(lang, "llamaboard.dataset_placeholder"))
    elif f.name == "device_count":
        st.number_input(label, **state.number_range("world_size"), step=1, key=key, help=helptext)
    elif f.widget == "slider":
        whole = all(float(v).is_integer() for v in (f.minimum, f.maximum, f.step, f.default))
        cast = int if whole else float
        st.number_input(label, min_value=cast(f.minimum), max_value=cast(f.maximum), step=cast(f.step), key=key,
                        help=helptext, **({} if whole else {"format": "%g"}))
    elif f.widget == "checkbox":
        st.checkbox(label, key=key, help=helptext)
    elif f.widget == "dropdown" and f.name not in TEXT_DROPDOWNS and f.name != "output_dir":
        options = list(CHOICES.get(f.name, f.choices))
        extra = {"on_change": _stage_changed} if f.name == "training_stage" else {}
        st.selectbox(label, options, key=key, help=helptext, accept_new_options=f.name == "report_to", **extra)
    else:
        st.text_input(label, key=key, help=helptext, max_chars=300)


def _width(f: BoardField) -> int:
    """Gradio's `scale=` (LlamaBoard's proportions); a dropdown or checkbox at least two parts wide so that its
    words stay readable."""
    return max(f.scale, 2) if f.widget in ("dropdown", "checkbox") else f.scale


def _row(names: tuple[str, ...]) -> None:
    """One of LlamaBoard's rows; a row of more than five (the extra settings' switches) as four columns of
    two, the way LlamaBoard stacks them in `gr.Column`s (webui/components/train.py:95-114)."""
    if len(names) > MAX_IN_ROW:
        size = -(-len(names) // 4)
        groups = [names[i:i + size] for i in range(0, len(names), size)]
    else:
        groups = [(name,) for name in names]
    widths = [max(_width(BOARD.fields[name]) for name in group) for group in groups]
    for column, group in zip(st.columns(widths, vertical_alignment="bottom"), groups, strict=True):
        with column:
            for name in group:
                _control(BOARD.fields[name])


st.caption(t(lang, "llamaboard.source", release=BOARD.release))
top_rows = [names for accordion, names in BOARD.rows if BOARD.fields[names[0]].row.startswith("webui/components/top")]
_row(tuple(name for names in top_rows for name in names))  # LlamaBoard's top bar: model, method, template
open_accordion = None
for accordion, names in BOARD.rows:
    if names in top_rows:
        continue
    if accordion is None:
        open_accordion = None
        _row(names)
        continue
    if accordion != open_accordion:
        open_accordion = accordion
        holder = st.expander(BOARD.accordions[accordion]["label"][lang])
    with holder:
        _row(names)

form = {name: st.session_state.get(PREFIX + name) for name in STARTS}
unknown = [name for name in form["dataset"] or [] if name not in KNOWN_DATASET_ROWS]
for name in unknown:
    st.number_input(t(lang, "llamaboard.rows_for", dataset=name), min_value=0, max_value=10**12, value=None,
                    step=1, key=ROWS_PREFIX + name, help=t(lang, "llamaboard.rows_help"))
rows = {name: int(st.session_state[ROWS_PREFIX + name]) for name in unknown
        if st.session_state.get(ROWS_PREFIX + name) is not None}
st.caption(t(lang, "llamaboard.starts", model=STARTS["model_path"], datasets=", ".join(STARTS["dataset"]),
             folder=STARTS["output_dir"], devices=STARTS["device_count"]))


def _problem(error: InputError) -> None:
    """A form LlamaBoard (or StepLab) cannot use: the field's LlamaBoard label and what to change."""
    f = BOARD.fields.get(error.field or "")
    text = error.text.get(lang)
    st.error(t(lang, "llamaboard.problem", label=f.label_in(lang), problem=text) if f else text,
             icon=":material/error:")


SAMPLES = "lb_num_samples"  # the sample count typed when row counts cannot give it (packing, pre-training)
typed = st.session_state.get(SAMPLES)
run = None
try:
    run = board_run(form, rows, int(typed) if typed else None)
except LlamaBoardError as error:
    _problem(error)
except InputError as error:  # the YAML LlamaBoard would write, refused by StepLab's reader (e.g. through extra args)
    st.error(t(lang, "llamaboard.yaml_refused", problem=error.message(lang)), icon=":material/error:")

button = BOARD.preview_button["label"][lang]
with st.container(border=True):
    st.subheader(button)
    if run is None:
        st.caption(t(lang, "llamaboard.no_preview"))
    else:
        st.caption(t(lang, "llamaboard.preview_caption", button=button))
        command, written = st.tabs([t(lang, "llamaboard.tab_command"), t(lang, "llamaboard.tab_yaml")])
        with command:
            st.code(run.command, language="bash", wrap_lines=True)
        with written:
            st.caption(t(lang, "llamaboard.yaml_caption"))
            st.code(run.yaml_text, language="yaml", wrap_lines=True)

plan = None
if run is not None:
    st.subheader(t(lang, "llamaboard.steps_heading"))
    for line in run.imported.sample_lines:
        st.markdown(f"- {line.get(lang)}")
    if run.setup is not None:
        st.info(t(lang, "llamaboard.processes", label=BOARD.fields["device_count"].label_in(lang),
                  world_size=run.setup.world_size), icon=":material/memory:")
    for note in run.notes:
        st.caption(note.get(lang))
    if run.setup is None or typed:
        st.number_input(t(lang, "llamaboard.num_samples"), **state.number_range("num_samples"), value=None, step=1,
                        key=SAMPLES, help=t(lang, "llamaboard.num_samples_help"))
    if run.problem is not None:
        _problem(run.problem)
    elif run.setup is None:
        st.warning(t(lang, "llamaboard.needs_rows" if unknown else "llamaboard.cannot_count"), icon=":material/help:")
    else:
        try:
            plan = make_plan(run.setup)
        except TrainerRefusal as refusal:
            layout.show_refusal(refusal, lang)
        except InputError as error:
            st.error(error.message(lang), icon=":material/error:")

def sidebar_source() -> None:
    """Where these numbers come from beside the sidebar's setup, which every other page shows: the form (LlamaBoard's
    own defaults until changed), not the sidebar (after an imported YAML the sidebar showed the learner's run and
    this page LlamaBoard's, without a word)."""
    if context.setup is None:
        return
    if context.setup == run.setup:
        st.caption(t(lang, "llamaboard.is_sidebar"))
        return
    try:
        steps = make_plan(context.setup).max_steps
    except (InputError, TrainerRefusal):
        steps = "—"
    st.info(t(lang, "llamaboard.not_sidebar", samples=context.setup.num_samples, steps=steps,
              apply=t(lang, "llamaboard.apply")), icon=":material/info:")


if plan is not None:
    sidebar_source()
    calculator_view.cards(plan, lang, key="_llamaboard")
    with st.expander(t(lang, "llamaboard.arithmetic"), icon=":material/calculate:"):
        calculator_view.arithmetic(plan, lang)
    values = run.setup.to_dict()

    def _use_everywhere() -> None:
        state.apply_values(values)
        st.session_state[state.SAMPLES_FROM_DATASETS] = None
        st.session_state["_llamaboard_applied"] = True

    query = to_query(run.setup, state.course_setup())
    if lang != "zh":
        query["lang"] = lang
    with st.container(horizontal=True):
        st.button(t(lang, "llamaboard.apply"), type="primary", on_click=_use_everywhere, icon=":material/share:")
        # a plain link, as lesson pages link: `st.page_link(query_params=)` would add these to the URL's own
        st.markdown(f":material/calculate: [{t(lang, 'llamaboard.calculator_link')}](/calculator?{urlencode(query)})")
    if st.session_state.pop("_llamaboard_applied", False):
        st.success(t(lang, "llamaboard.applied"), icon=":material/check_circle:")
