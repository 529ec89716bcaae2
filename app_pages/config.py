"""Config in and out: paste or upload a training YAML to fill the setup; download the setup as YAML."""

import streamlit as st

from steplab.config_io import MAX_BYTES, ConfigError, read_config, write_config
from steplab.errors import SetupError
from steplab.i18n import t
from steplab.setup import setup_from_mapping
from steplab_ui import layout, state

setup, error = state.shared_setup()
lang = state.language()
layout.header(lang, "config")
state.show_url_notices(lang)

RESULT = "_config_import"
LIMIT = f"{MAX_BYTES // 1024} KiB"  # what read_config reads at most


def import_config() -> None:
    """Read the pasted or uploaded YAML; on success put it into the shared setup (runs as a callback)."""
    upload = st.session_state.get("config_upload")
    text = upload.getvalue() if upload is not None else st.session_state.get("config_text", "")
    if upload is None and not (text or "").strip():  # nothing pasted, or a file the uploader turned away
        st.session_state[RESULT] = ("nothing", None)
        return
    rows = st.session_state.get("config_num_samples")
    try:
        imported = read_config(text, num_samples=int(rows) if rows else None)
        values = imported.values
        setup_from_mapping({"num_samples": 1, **values})  # the setup's own validation, before anything changes
        if imported.needs_num_samples:
            st.session_state[RESULT] = ("needs_samples", imported)
            return
    except (ConfigError, SetupError) as problem:
        st.session_state[RESULT] = ("error", problem)
        return
    state.apply_values(values)
    st.session_state[RESULT] = ("ok", imported)


paste, upload = st.tabs([t(lang, "config.paste"), t(lang, "config.upload")])
with paste:
    st.text_area(t(lang, "config.yaml"), key="config_text", height=260, max_chars=MAX_BYTES,
                 placeholder="per_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nnum_train_epochs: 3")
with upload:
    st.file_uploader(t(lang, "config.file", limit=LIMIT), type=["yaml", "yml"], key="config_upload",
                     max_upload_size=1, help=t(lang, "config.file_help"))
st.number_input(t(lang, "config.num_samples"), **state.number_range("num_samples"), value=None, step=1,
                key="config_num_samples", help=t(lang, "config.num_samples_help"),
                placeholder=t(lang, "config.num_samples_placeholder"))
st.button(t(lang, "config.apply"), type="primary", on_click=import_config, icon=":material/upload:")

status, payload = st.session_state.get(RESULT, (None, None))
if status == "error":
    st.error(payload.message(lang), icon=":material/error:")
elif status == "nothing":
    st.warning(t(lang, "config.nothing", limit=LIMIT), icon=":material/draft:")
elif status == "needs_samples":
    st.warning(t(lang, "config.needs_samples"), icon=":material/help:")
elif status == "ok":
    st.success(t(lang, "config.applied"), icon=":material/check_circle:")
if status in ("ok", "needs_samples"):
    for line in payload.sample_lines:
        st.markdown(f"- {line.get(lang)}")
    for note in payload.notes:
        st.info(note.get(lang), icon=":material/info:")
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
