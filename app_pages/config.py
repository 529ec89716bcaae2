"""Config in and out: paste or upload a training YAML to fill the setup; download the setup as YAML."""

from functools import lru_cache

import streamlit as st

from steplab.dataset.files import MAX_FILE_BYTES
from steplab.dataset.load import funnel_from_uploads
from steplab.dataset.settings import data_settings
from steplab.errors import InputError, TrainerRefusal
from steplab.i18n import t
from steplab.io import census
from steplab.io.config_read import read_config
from steplab.io.config_write import write_config
from steplab.io.safe_yaml import MAX_BYTES, ConfigError, check_size
from steplab.trainer.fields import FIELDS
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import TrainingSetup, setup_from_mapping
from steplab_ui.shell import browser, layout, state
from steplab_ui.shell.page import page
from steplab_ui.views import funnel as funnel_view

context = page("config")
setup, error, lang = context.setup, context.error, context.lang

RESULT = "_config_import"
FUNNEL = "_config_funnel"
UPLOAD_MB = MAX_BYTES // 2**20  # what read_config reads, in the MiB that Streamlit's uploader counts: one limit
DATA_LIMIT_MB = MAX_FILE_BYTES // 2**20  # what the dataset stage reads per file; the uploader takes no more
COUNTING_NOTES = ("config_io.note.unknown_rows", "config_io.note.builtin_sizes")  # said by the row-count path; the funnel replaces them
PROCESS_NOTES = ("config_io.note.no_world_size",)  # the "GPUs (processes)" field says it
MAX_LISTED_DATASETS = 20  # row boxes shown; a YAML naming more is counted from its files
DATA_TYPES = ["json", "jsonl", "csv", "parquet", "arrow", "txt", "zip"]  # a zip: its members (a model folder's)
BOX_CHARS = browser.TEXT_BOX_CHARS


def current_text() -> str | bytes:
    """The YAML as the user gave it: the uploaded file, else the paste."""
    upload = st.session_state.get("config_upload")
    return upload.getvalue() if upload is not None else st.session_state.get("config_text", "")


@lru_cache(maxsize=16)
def named_datasets(text: str | bytes) -> tuple[str, ...]:
    """The datasets the YAML names, or none when it cannot be read yet (one parse per text, not per rerun)."""
    if not text.strip():
        return ()
    try:
        return data_settings(read_config(text).document).names
    except InputError:
        return ()


def _typed_rows(names: list[str] | tuple[str, ...]) -> dict[str, int]:
    return {name: int(value) for name in names[:MAX_LISTED_DATASETS]
            if (value := st.session_state.get(f"config_rows_{name}")) is not None}


YAML_SUFFIXES = (".yaml", ".yml")


def not_yaml(upload) -> bool:
    """An uploaded file that is not named like a YAML config (the uploader takes any file, so that the page can
    say what was wrong with it instead of a bare red icon)."""
    return upload is not None and not upload.name.lower().endswith(YAML_SUFFIXES)


def not_yaml_error(name: str) -> None:
    st.error(t(lang, "config.not_yaml_file", name=name[:80].replace("`", "'")), icon=":material/draft:")


def file_problem(upload) -> tuple[str, object] | None:
    """What is wrong with the chosen file before it is read (`import_config`'s result for it): not named like a
    YAML, or larger than a config is read. The uploader takes any file up to the dataset files' cap, so that both
    are said here, in the user's language, instead of Streamlit's English refusal beside the file."""
    if not_yaml(upload):
        return "not_yaml", upload.name
    if upload is not None:
        try:
            check_size(upload.size)
        except ConfigError as problem:
            return "error", problem
    return None


def show_problem(kind: str, payload) -> None:
    """A problem with the paste or the file: not a YAML file (`payload` its name), or the reader's `ConfigError`."""
    if kind == "not_yaml":
        not_yaml_error(payload)
    else:
        st.error(payload.message(lang), icon=":material/error:")


RESULT_FOR = "_config_import_for"


def input_now() -> tuple:
    """What Fill would read now: the chosen file (by its upload), else the pasted text."""
    upload = st.session_state.get("config_upload")
    return ("file", upload.file_id) if upload is not None else ("text", st.session_state.get("config_text", ""))


def _checked(imported) -> census.Checked:
    """The census of the imported YAML's keys: what StepLab does not model, and keys no argument class has."""
    document = imported.document
    return census.check(document, str(document.get("trainer_class") or "Trainer"), imported.flavour == "llamafactory")


def _census_of(imported, checked: TrainingSetup, values: dict) -> tuple[dict, tuple]:
    """What `state.IMPORTED` keeps: the values the import set, as the setup holds them, and the keys not modelled."""
    held = checked.to_dict()
    return {name: held[name] for name in values if name in held}, _checked(imported).unmodelled


def fill() -> None:
    """Fill's callback: the import, and what it read, so that its message goes once the paste or file changes."""
    import_config()
    st.session_state[RESULT_FOR] = input_now()


def import_config() -> None:
    """Read the pasted or uploaded YAML; on success put it into the shared setup (runs as a callback)."""
    upload = st.session_state.get("config_upload")
    problem = file_problem(upload)
    if problem is not None:
        st.session_state[RESULT] = problem
        return
    text = current_text()
    if upload is None and not (text or "").strip():  # nothing pasted, or a file the browser turned away (too large)
        st.session_state[RESULT] = ("nothing", None)
        return
    rows = st.session_state.get("config_num_samples")
    files = funnel_view.data_files([(f.name, f.getvalue()) for f in st.session_state.get("config_data_files") or []],
                                   MAX_FILE_BYTES)
    st.session_state[FUNNEL] = None
    try:
        typed = _typed_rows(named_datasets(text))  # cached: the rerun that drew the boxes parsed it
        imported = read_config(text, dataset_rows=typed, num_samples=int(rows) if rows else None)
        values = dict(imported.values)
        funnel = imported.funnel  # typed or known row counts
        if not rows and "num_samples" not in imported.document and files:
            funnel = funnel_from_uploads(imported.document, files, typed)
            values["num_samples"] = funnel.train_examples
        st.session_state[FUNNEL] = funnel
        checked = setup_from_mapping({"num_samples": 1, **values})[0]  # validated before anything changes
        if any(f.open and getattr(checked, name) not in f.choices for name, f in FIELDS.items()):
            make_plan(checked)  # a name no control offers: the Trainer's refusal says why (TrainerRefusal)
        if "num_samples" not in values:
            st.session_state[RESULT] = ("needs_samples", imported)
            return
    except (ConfigError, InputError) as problem:
        st.session_state[RESULT] = ("error", problem)
        return
    except TrainerRefusal as refusal:
        st.session_state[RESULT] = ("refused", refusal)
        return
    state.apply_values(values)
    st.session_state[state.IMPORTED] = _census_of(imported, checked, values)
    funnel = st.session_state[FUNNEL]
    st.session_state[state.SAMPLES_FROM_DATASETS] = None if funnel is None else (funnel.train_examples,
                                                                                 funnel.estimate is not None)
    st.session_state[RESULT] = ("ok", imported)


# The last Fill's message while the paste or file it read is there (not an old error beside a new one); a successful
# import's also when the box is empty: Streamlit empties it when the learner comes back from another page, and the
# import still stands.
EMPTY = ("text", "")
fresh = (st.session_state.get(RESULT_FOR) == input_now()
         or (input_now() == EMPTY and st.session_state.get(RESULT, (None,))[0] == "ok"))
status, payload = st.session_state.get(RESULT, (None, None)) if fresh else (None, None)
paste, upload = st.tabs([t(lang, "config.paste"), t(lang, "config.upload")])
with paste:
    st.text_area(t(lang, "config.yaml"), key="config_text", height=260, max_chars=BOX_CHARS,
                 placeholder="per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nnum_train_epochs: 3")
    browser.cap_text_box("config_text", BOX_CHARS)
    browser.capped_note("config_text", t(lang, "config.box_refused", chars=BOX_CHARS, mb=UPLOAD_MB, tab=t(lang, "config.upload")))
    st.caption(t(lang, "config.box_limit", chars=BOX_CHARS, mb=UPLOAD_MB, tab=t(lang, "config.upload")))
with upload:
    # Up to the dataset files' cap, not UPLOAD_MB: a file the browser refuses stays in the uploader beside the next
    # one with Streamlit's English error, and never reaches the page to be explained. The label states the limit
    # read; Streamlit's own line under the button ("64MB per file") would contradict it and is hidden.
    uploaded = st.file_uploader(t(lang, "config.file", mb=UPLOAD_MB), key="config_upload", max_upload_size=DATA_LIMIT_MB,
                                help=t(lang, "config.file_help"))
    st.html("<style>.st-key-config_upload [data-testid='stFileUploaderDropzoneInstructions'] { display: none; }</style>")
    chosen = file_problem(uploaded)
    if chosen is not None and status is None:  # said once: here until Fill is pressed, then under the button
        show_problem(*chosen)
with st.expander(t(lang, "config.data.heading"), icon=":material/dataset:"):
    st.markdown(t(lang, "config.data.intro"))
    st.file_uploader(t(lang, "config.data.files", limit=f"{DATA_LIMIT_MB} MB"), type=DATA_TYPES,
                     accept_multiple_files=True, key="config_data_files", max_upload_size=DATA_LIMIT_MB,
                     help=t(lang, "config.data.files_help"))
    names = named_datasets(current_text())
    if not names:
        st.caption(t(lang, "config.data.none"))
    for name in names[:MAX_LISTED_DATASETS]:
        st.number_input(t(lang, "config.data.rows", dataset=name), min_value=0, max_value=10**12, value=None, step=1,
                        key=f"config_rows_{name}", help=t(lang, "config.data.rows_help"))
st.number_input(t(lang, "config.num_samples"), **state.number_range("num_samples"), value=None, step=1,
                key="config_num_samples", help=t(lang, "config.num_samples_help"),
                placeholder=t(lang, "config.num_samples_placeholder", example=TrainingSetup().num_samples))
st.button(t(lang, "config.apply"), type="primary", on_click=fill, icon=":material/upload:")

if status in ("error", "not_yaml"):
    show_problem(status, payload)
elif status == "refused":
    layout.show_refusal(payload, lang)
elif status == "nothing":
    st.warning(t(lang, "config.nothing", mb=DATA_LIMIT_MB), icon=":material/draft:")  # the browser's own cap
elif status == "needs_samples":
    st.warning(t(lang, "config.needs_samples"), icon=":material/help:")
elif status == "ok":
    st.success(t(lang, "config.applied"), icon=":material/check_circle:")
if status == "ok" and st.session_state.get(FUNNEL) is not None:
    funnel_view.show_funnel(st.session_state[FUNNEL], lang)
if status == "ok" and setup is not None:
    funnel_view.processes_field(setup, "world_size" in payload.values, lang)
elif status in ("ok", "needs_samples"):
    for line in payload.sample_lines:
        st.markdown(f"- {line.get(lang)}")
if status in ("ok", "needs_samples"):
    counted = status == "ok" and st.session_state.get(FUNNEL) is not None
    for note in payload.notes:
        if not (counted and note.key in COUNTING_NOTES) and not (status == "ok" and note.key in PROCESS_NOTES):
            st.info(note.get(lang), icon=":material/info:")
    named = _checked(payload)
    if named.unmodelled or named.unknown:
        sentences = [item.message().get(lang) for item in (*named.unknown, *named.unmodelled)]
        st.warning(f"**{t(lang, 'config.census_heading')}**\n\n" + "\n".join(f"- {line}" for line in sentences),
                   icon=":material/help:")
    used, ignored = st.columns(2)
    used.markdown(f"**{t(lang, 'config.used')}**  \n" + (", ".join(f"`{k}`" for k in payload.used) or "—"))
    ignored.markdown(f"**{t(lang, 'config.ignored')}**  \n" + (", ".join(f"`{k}`" for k in payload.ignored) or "—"))

st.subheader(t(lang, "config.export"))
if setup is None:
    layout.show_setup_error(error, lang)
else:
    flavour = st.segmented_control(t(lang, "config.flavour"), ["llamafactory", "hf"], default="llamafactory",
                                   key="config_flavour", required=True,
                                   format_func=lambda f: t(lang, f"config.flavour_{f}"))
    text = write_config(setup.to_dict(), flavour=flavour, lang=lang)
    st.code(text, language="yaml", wrap_lines=True)  # no sideways scroll region (axe)
    st.download_button(t(lang, "config.download"), text, file_name="steplab_setup.yaml", mime="application/x-yaml",
                       icon=":material/download:", on_click="ignore")
