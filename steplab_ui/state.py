"""The shared training setup: sidebar controls bound to the URL, presets, and notices for bad URL values.

One source of truth: every field is a session-state key named as the engine's field and kept in the query
parameter of the same name: a main control's own key, bound with `bind="query-params"`; an advanced field's plain
key, which `write_url` keeps in the URL and a control drawn only while its section is open edits (`_tied`). The
engine validates what they hold.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import streamlit as st

from steplab.errors import SetupError
from steplab.i18n import LANGUAGES, fmt_int, normalise_language, t
from steplab.teaching.presets import presets
from steplab.trainer.fields import FIELDS, STRATEGIES
from steplab.trainer.profiles import PROFILES
from steplab.trainer.setup import DEFAULTS, TrainingSetup, parse_setup, setup_from_mapping

SHELL_SETUP = "_steplab_shell_setup"
NOTICES = "_steplab_url_notices"
CARRIED_NOTICES = "_steplab_url_notices_carried"  # a sidebar-only first run's notices, for the page's first run
BIND = "query-params"

# The main controls and their slider's round stops; range and kind come from the field table, the
# default from the course preset.
SAMPLE_STOPS = sorted({*(m * 10**e for e in range(10) for m in (1, 2, 5) if m * 10**e <= 10**9), 1090, 1600})
SLIDER_STOPS: dict[str, list[float]] = {
    "num_samples": SAMPLE_STOPS,
    "per_device_train_batch_size": [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512, 1024],
    "gradient_accumulation_steps": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256, 512, 1024],
    "world_size": [1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024],
    "num_train_epochs": [0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100],
}
MAIN_FIELDS = tuple(SLIDER_STOPS)
COURSE_PRESET = "course_default"
FLOAT_FIELDS = tuple(name for name, field in FIELDS.items() if field.is_number and not field.whole)
SETUP_KEYS = (*MAIN_FIELDS, *(name for name in FIELDS if name not in MAIN_FIELDS))  # every field of the table


def number_range(name: str) -> dict[str, Any]:
    """`min_value` / `max_value` of a number control: the field's own range, in the field's type."""
    field = FIELDS[name]
    cast = int if field.whole else float
    return {"min_value": cast(field.low), "max_value": cast(field.high)}


def widget_default(name: str) -> Any:
    """What a control shows when neither the URL nor the user set it: the course setup, else the Trainer's default."""
    course = presets()[COURSE_PRESET].values
    if name in course:
        value = course[name]
        return float(value) if name in FLOAT_FIELDS else value
    value = getattr(DEFAULTS, name)
    if name == "lr_scheduler_kwargs":
        return ""
    if name in ("warmup_steps", "save_steps", "logging_steps", "learning_rate"):
        return float(value)
    return value


def language() -> str:
    """The language from the bound `lang` widget (URL `?lang=en`), Chinese by default."""
    return normalise_language(st.session_state.get("lang", "zh"))


TEXT_KEYS = tuple(name for name, field in FIELDS.items() if field.kind in ("choice", "kwargs"))  # read as text


def _url_value(key: str, raw: str) -> Any:
    """A URL value as the field reads it: JSON for numbers and flags, the text itself for names and kwargs."""
    if key in TEXT_KEYS:
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested deeper than the parser goes
        return raw


MAX_URL_PARAMETER = 1_000  # characters of `key=value`: far more than any setting or page parameter needs
# A whole link longer than the server reads never reaches the app (Streamlit's uvicorn answers a bare HTTP 400
# once it buffers over 16 KiB of an unfinished request head; on loopback a head arrives whole up to ~100 KB):
# deploy/nginx.conf sends a query longer than MAX_LINK_QUERY characters back to the same page with only
# LINK_REFUSED in it, and the page says why its setup is the default.
MAX_LINK_QUERY = 8_192
LINK_REFUSED = ("link", "too_long")


def _drop_url_parameters(keys: list[str]) -> None:
    """Take `keys` out of the URL before a widget or a page reads them (Streamlit itself chokes on e.g. inf)."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    for key in keys:
        try:
            del st.query_params[key]
        except Exception:  # noqa: BLE001 - a param bound in an earlier run cannot be deleted; harmless
            pass
    if keys:  # a bound control seeds itself from the URL the run began with: make that the URL without them
        with get_session_state().query_params() as params:
            params.set_initial_query_params_from_current()


def link_problem(key: str, values: list[str]) -> tuple[str, int | str] | None:
    """Why a URL parameter is dropped before anything reads it, whoever it belongs to: `("url.too_long", length)`
    for a `key=value` longer than `MAX_URL_PARAMETER` characters, `("url.unknown", field)` for a misspelt setup
    field, `("url.link_refused", MAX_LINK_QUERY)` for the balancer's mark of a link it refused. Other unknown
    keys stay unnamed: pages have their own (`?lesson=`, `?step=`) and shared links pick up a messenger's or a
    tracker's (`?from=singlemessage`, `?utm_source=`)."""
    if (key, values) == (LINK_REFUSED[0], [LINK_REFUSED[1]]):
        return "url.link_refused", MAX_LINK_QUERY
    length = len(key) + 1 + max(map(len, values), default=0)
    if length > MAX_URL_PARAMETER:
        return "url.too_long", length
    if key not in SETUP_KEYS:
        close = difflib.get_close_matches(key, SETUP_KEYS, n=1, cutoff=0.8)
        return ("url.unknown", close[0]) if close else None
    return None


def ensure_session() -> None:
    """Idempotent start of every run: check the raw URL values in one parse, before any widget is created.

    A notice is `(code, key, detail)`: `url.ignored` (the detail is the value that cannot be used), `url.too_long`
    (its length), `url.unknown` (the setup field meant) or `url.link_refused` (the balancer's limit)."""
    raw = st.query_params.to_dict()
    notices: list[tuple[str, str, int | str]] = []
    for key in list(raw):
        problem = link_problem(key, st.query_params.get_all(key))
        if problem is not None:
            notices.append((problem[0], key, problem[1]))
            del raw[key]
    if raw.get("lang", "zh") not in LANGUAGES:
        notices.append(("url.ignored", "lang", raw["lang"]))
    setup_values = {key: value for key, value in raw.items() if key in SETUP_KEYS}
    problems = url_problems(setup_values)
    for key in problems:
        if not _is_set(refused_key(key)):  # a value just typed and refused is said beside its field instead
            notices.append(("url.ignored", key, setup_values[key]))
    _drop_url_parameters([key for code, key, _ in notices if code != "url.ignored"] + list(problems))
    # a run that draws the sidebar only (`browser.sidebar_first`) leaves its notices to the page's run: the link's
    # bad values are gone from the URL by then, and with them the reason to say anything
    st.session_state[NOTICES] = st.session_state.pop(CARRIED_NOTICES, []) + notices


def url_problems(raw: dict[str, str]) -> dict[str, SetupError]:
    """The URL setup values that cannot be used, in one parse: the field table's kind and range, and an open
    choice (a scheduler name) that the control does not offer."""
    parsed = parse_setup({key: _url_value(key, value) for key, value in raw.items()})
    problems = dict(parsed.problems)
    for key, value in raw.items():
        field = FIELDS.get(key)
        if key not in problems and field is not None and field.open and getattr(parsed.setup, key) not in field.choices:
            problems[key] = SetupError("setup.choice", field=key, value=value, allowed=", ".join(field.choices))
    return problems


def url_value_problem(key: str, raw: str) -> str | None:
    """Why a URL value cannot be used (None when it can)."""
    problem = url_problems({key: raw}).get(key)
    return None if problem is None else problem.text.en


def _shortened(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "…"


def url_notice(lang: str, key: str, raw: str) -> None:
    """The notice for a URL value that was ignored (a long value shortened)."""
    st.warning(t(lang, "url.ignored", key=key, value=_shortened(raw)), icon=":material/link_off:")


def show_url_notices(lang: str) -> None:
    for code, key, detail in st.session_state.get(NOTICES, []):
        if code == "url.ignored":
            url_notice(lang, key, str(detail))
            continue
        shown = _shortened(key).replace("`", "'")  # said in a code span: no backtick of the link's ends it
        values = {"url.too_long": {"length": detail, "limit": MAX_URL_PARAMETER},
                  "url.link_refused": {"limit": detail}}.get(code, {"field": detail})
        st.warning(t(lang, code, key=shown, **values), icon=":material/link_off:")


def _sync_number(name: str) -> None:
    """The slider moved: copy its value into the exact input (the one the setup and the URL read)."""
    st.session_state[name] = st.session_state[f"{name}__slider"]
    st.session_state.pop(refused_key(name), None)


def refused_key(name: str) -> str:
    """Where the sidebar keeps the last value it refused for `name` (shown beside the field until the next change)."""
    return f"{name}__refused"


def _kept_key(name: str) -> str:
    return f"{name}__kept"


def _check_exact(name: str) -> None:
    """The exact input changed: a value the field table refuses (or an emptied field) is put back to the value in
    use, and remembered, so that the field can say what was kept and why.

    The input has no `min_value`/`max_value`: with them the browser itself refuses an out-of-range number (the
    field stays red, "Press Enter to apply") and Python never hears of it. The range check is the engine's.
    """
    typed = st.session_state.get(name)
    if typed is None or name in parse_setup({name: typed}).problems:
        st.session_state[name] = st.session_state.get(_kept_key(name), widget_default(name))
        st.session_state[refused_key(name)] = typed
    else:
        st.session_state.pop(refused_key(name), None)


def refusal_text(lang: str, name: str, kept: float, typed: float | None) -> str:
    """"Kept 8: accumulation takes a whole number from 1 to 1,000,000 (not 0)", the range from the field table."""
    field = FIELDS[name]
    values = {"kept": kept, "field": t(lang, f"field.{name}"), "lo": field.low, "hi": field.high}
    if typed is None:
        return t(lang, "sidebar.kept_empty", **values)
    shown = int(typed) if isinstance(typed, float) and typed.is_integer() and abs(typed) < 1e15 else typed
    return t(lang, "sidebar.kept_whole" if field.whole else "sidebar.kept_number", **values, value=shown)


def slider_stops(name: str, value: float) -> list[float]:
    """The slider's round stops plus the exact value, so the slider always shows the number in use."""
    stops = SLIDER_STOPS[name]
    return stops if value in stops else sorted({*stops, value})


def _is_set(key: str) -> bool:
    """`key in st.session_state` without its cost (`in` copies the whole state into a dict first)."""
    try:
        st.session_state[key]
    except KeyError:
        return False
    return True


def _default_arg(key: str, default: Any) -> dict[str, Any]:
    """`value=` always: a bound widget leaves its *default* out of the URL, so the default must be the same on
    every run (without `value=` a number input's default is its minimum, and a lesson's accumulation of 1 would
    vanish from the URL and reload as 8). The state a callback set still wins over `value=`."""
    return {"value": default}


def _main_control(name: str, lang: str) -> None:
    """One control in one box: a slider over round stops (the field's name and help) over the exact number input
    (the one bound to the URL; its label is read by screen readers, not repeated on screen), and, after a refused
    value, what was kept and why, right under the input.

    The exact input is the one source: the slider's move is copied into it by `_sync_number`, and the slider
    is set from it before it is drawn, with the exact value among its stops. The range is the field table's,
    checked in Python by `_check_exact` (see there why the input has no `min_value`/`max_value`).
    """
    default = widget_default(name)
    is_float = not FIELDS[name].whole
    box = st.container(border=True, gap="small", key=f"{name}__control")
    slider_slot = box.container()
    options = dict(step=0.5 if is_float else 1, format="%.2f" if is_float else "%d", help=t(lang, f"help.{name}"),
                   label_visibility="collapsed")
    label = t(lang, "field.exact", name=t(lang, f"field.{name}"))
    with box:
        try:
            value = st.number_input(label, **_default_arg(name, float(default) if is_float else int(default)),
                                    key=name, bind=BIND, on_change=_check_exact, args=(name,), **options)
        except (OverflowError, ValueError):  # Streamlit cannot even read this URL value (e.g. inf for a whole number)
            value = st.number_input(label, value=int(default), key=f"{name}__fallback", **number_range(name), **options)
        st.session_state[_kept_key(name)] = value
        if _is_set(refused_key(name)):
            st.warning(refusal_text(lang, name, value, st.session_state[refused_key(name)]), icon=":material/undo:")
    slider_key = f"{name}__slider"
    st.session_state[slider_key] = value  # the slider follows the exact input (typed, from the URL or a preset)
    with slider_slot:
        st.select_slider(
            t(lang, f"field.{name}"), options=slider_stops(name, value), key=slider_key, help=t(lang, f"help.{name}"),
            format_func=(lambda v: f"{v:g}") if is_float else fmt_int, on_change=_sync_number, args=(name,),
        )


def apply_values(values: dict[str, Any]) -> None:
    """Put a whole setup (a preset, an imported YAML, a column) into the shared controls.

    Every control is set, to the given value or to its default: popping a bound widget's state would let
    the old URL value come back.
    """
    for key in SETUP_KEYS:
        value = values.get(key, widget_default(key))
        st.session_state.pop(refused_key(key), None)  # a new setup: an earlier refusal no longer applies
        if key == "max_steps":
            st.session_state["use_max_steps"] = value is not None and value > 0
            if value is not None and value > 0:
                st.session_state[key] = int(value)
            continue
        st.session_state[key] = control_value(key, value)


def _load_preset() -> None:
    key = st.session_state.get("_preset_choice")
    if key in presets():
        preset = presets()[key]
        apply_values({"eval_strategy": "no", "eval_steps": None, **preset.values})


ADVANCED_KEYS = tuple(key for key in SETUP_KEYS if key not in (*MAIN_FIELDS, "max_steps"))  # the advanced section's
ADVANCED_OPEN = "_advanced_open"


def control_value(key: str, value: Any) -> Any:
    """A setup value in the type its control holds: floats and whole numbers as the field reads them, kwargs as
    their JSON text."""
    if key == "lr_scheduler_kwargs":
        return json.dumps(value) if isinstance(value, dict) and value else (value or "")
    if key in FLOAT_FIELDS and value is not None:
        return float(value)
    if FIELDS[key].whole and value is not None:
        return int(value)
    return value


def _hold_advanced() -> None:
    """Every advanced field has its value in the session state from the session's first run: the URL's (checked
    by `ensure_session`), else the default. Later runs keep it (`write_url` keeps the URL up to date with it)."""
    for key in ADVANCED_KEYS:
        if not _is_set(key):
            raw = st.query_params.get(key)
            st.session_state[key] = widget_default(key) if not raw else control_value(key, _url_value(key, raw))


def control_key(key: str) -> str:
    """The key of the advanced control that edits field `key` (the field's own key is never a widget's)."""
    return f"{key}__control"


def _copy_control(key: str) -> None:
    st.session_state[key] = st.session_state[control_key(key)]


def _tied(key: str) -> dict[str, Any]:
    """The arguments that tie an advanced control to its field: it shows the field's value and writes it back.

    The field's value is a plain session-state key, not the control's: Streamlit drops the state of a control
    that is not drawn at the end of the run, and a value set from code for its key with it."""
    st.session_state[control_key(key)] = st.session_state[key]
    return {"key": control_key(key), "on_change": _copy_control, "args": (key,)}


def _advanced(lang: str) -> None:
    """The rarely changed fields, drawn only while their section is open: 16 controls less on most reruns (a
    quarter of a calculator rerun's script CPU). Their values are plain session-state keys kept in the URL by
    `write_url` (`_tied`), so unlike the main controls they are not bound to the URL."""
    _hold_advanced()
    section = st.expander(t(lang, "sidebar.advanced"), icon=":material/tune:", key=ADVANCED_OPEN, on_change="rerun")
    if section.open:
        with section:
            _advanced_controls(lang)


def _advanced_controls(lang: str) -> None:
    st.toggle(t(lang, "field.dataloader_drop_last"), **_tied("dataloader_drop_last"),
              help=t(lang, "help.dataloader_drop_last"))
    trainer = st.selectbox(t(lang, "field.trainer"), list(PROFILES), **_tied("trainer"), help=t(lang, "help.trainer"))
    st.caption(t(lang, "sidebar.trainer_matched", release=PROFILES[trainer].matched,
                 releases=PROFILES[trainer].releases))
    st.number_input(t(lang, "field.learning_rate"), **number_range("learning_rate"), step=1e-5, format="%.2e",
                    **_tied("learning_rate"), help=t(lang, "help.learning_rate"))
    st.selectbox(t(lang, "field.lr_scheduler_type"), list(FIELDS["lr_scheduler_type"].choices),
                 **_tied("lr_scheduler_type"), help=t(lang, "help.lr_scheduler_type"))
    st.text_input(t(lang, "field.lr_scheduler_kwargs"), **_tied("lr_scheduler_kwargs"), placeholder='{"num_cycles": 0.5}',
                  help=t(lang, "help.lr_scheduler_kwargs"), max_chars=300)
    st.number_input(t(lang, "field.warmup_steps"), **number_range("warmup_steps"), step=1.0, format="%g",
                    **_tied("warmup_steps"), help=t(lang, "help.warmup_steps"))
    st.number_input(t(lang, "field.warmup_ratio"), **number_range("warmup_ratio"), step=0.01, format="%g",
                    **_tied("warmup_ratio"), help=t(lang, "help.warmup_ratio"), placeholder=t(lang, "sidebar.unset"))
    for kind in ("eval", "save", "logging"):
        st.selectbox(t(lang, f"field.{kind}_strategy"), list(STRATEGIES), **_tied(f"{kind}_strategy"),
                     help=t(lang, f"help.{kind}_strategy"))
        st.number_input(t(lang, f"field.{kind}_steps"), **number_range(f"{kind}_steps"), step=1.0, format="%g",
                        **_tied(f"{kind}_steps"), help=t(lang, f"help.{kind}_steps"), placeholder=t(lang, "sidebar.unset"))
    for flag in ("logging_first_step", "eval_on_start"):
        st.toggle(t(lang, f"field.{flag}"), **_tied(flag), help=t(lang, f"help.{flag}"))
    if _takes_batch_limit():
        st.number_input(t(lang, "field.limit_train_batches"), **number_range("limit_train_batches"), format="%g",
                        **_tied("limit_train_batches"), help=t(lang, "help.limit_train_batches"),
                        placeholder=t(lang, "sidebar.unset"))


SAMPLES_FROM_DATASETS = "_samples_from_datasets"
"""The sample count the config page worked out from dataset files (the sidebar says so while it stands)."""


def _samples_source(lang: str) -> None:
    counted = st.session_state.get(SAMPLES_FROM_DATASETS)  # (count, estimated) or None
    if counted is not None and counted[0] == st.session_state.get("num_samples"):
        key = "config.data.sidebar_estimate" if counted[1] else "config.data.sidebar_source"
        st.caption(t(lang, key, n=counted[0]))


def render_sidebar(lang: str) -> None:
    """Every shared control, in the sidebar, with a short help in the user's language."""
    with st.sidebar:
        st.selectbox(
            t(lang, "sidebar.preset"), list(presets()), index=None, key="_preset_choice", on_change=_load_preset,
            format_func=lambda k: presets()[k].title.get(lang), placeholder=t(lang, "sidebar.preset_placeholder"),
            help=t(lang, "help.preset"),
        )
        for name in MAIN_FIELDS:
            _main_control(name, lang)
            if name == "num_samples":
                _samples_source(lang)
        raw_max = st.query_params.get("max_steps")
        if not _is_set("use_max_steps"):
            st.session_state["use_max_steps"] = bool(raw_max and url_value_problem("max_steps", raw_max) is None
                                                     and float(raw_max) > 0)
        if st.toggle(t(lang, "field.use_max_steps"), key="use_max_steps", help=t(lang, "help.max_steps")):
            st.number_input(t(lang, "field.max_steps"), min_value=1, max_value=number_range("max_steps")["max_value"],
                            **_default_arg("max_steps", 100), step=1,
                            key="max_steps", bind=BIND, help=t(lang, "help.max_steps"))
        _advanced(lang)
    write_url()


def url_text(key: str, value: Any) -> str | None:
    """How the URL writes a setup value: None for the control's default (left out, as Streamlit does), whole
    numbers without `.0` (`eval_steps=50`, not `50.0`), flags as `true`/`false`."""
    if key == "max_steps":  # the toggle is on: always written, since its presence in the URL turns the toggle on
        return None if value is None else str(int(value))
    default = widget_default(key)
    if value == default or value is None or (isinstance(value, str) and key not in TEXT_KEYS):
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _takes_batch_limit() -> bool:
    """The chosen profile takes Lightning's `limit_train_batches` (its row says so)."""
    profile = PROFILES.get(st.session_state.get("trainer"))
    return profile is not None and profile.limit_train_batches


def _bound_keys() -> list[str]:
    """The setup keys whose bound control is on screen this run (a broken URL value left a fallback instead)."""
    keys = [key for key in SETUP_KEYS if not _is_set(f"{key}__fallback")]
    if not st.session_state.get("use_max_steps"):
        keys.remove("max_steps")
    if not _takes_batch_limit():
        keys.remove("limit_train_batches")
    return keys


def write_url() -> None:
    """Every way of changing the setup leaves a URL that reopens exactly it.

    Streamlit syncs a bound control to the URL, but a value set from code (a lesson's "use this setup", a preset,
    an imported YAML) reaches the URL only when the control was on screen in the run before, and it writes
    floats as `50.0`. So after the sidebar, the URL is set to what the controls hold, in `url_text`'s form.
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    wanted = {key: url_text(key, st.session_state.get(key)) for key in _bound_keys()}
    with get_session_state().query_params() as params:
        for key, text in wanted.items():
            current = params.get(key) if params.has_param(key) else None
            if text is None and current is not None and key != "max_steps":
                params.remove_param(key)
            elif text is not None and current != text:
                params.set_corrected_value(key, text, "string_value")


def setup_from_widgets() -> tuple[TrainingSetup | None, SetupError | None]:
    """The setup the widgets hold now, validated once in the usual case; a value the engine rejects falls back
    to its default and is named in a notice (a hand-edited URL can put anything into a bound text widget)."""
    values: dict[str, Any] = {}
    noticed = {key for _, key, _ in st.session_state.get(NOTICES, [])}
    for key in SETUP_KEYS:
        if key == "max_steps":
            value = st.session_state.get("max_steps", -1) if st.session_state.get("use_max_steps") else -1
        elif _is_set(f"{key}__fallback"):  # the URL value broke the bound widget; see _main_control
            value = st.session_state[f"{key}__fallback"]
        else:
            value = st.session_state.get(key, widget_default(key))
        values[key] = value
    parsed = parse_setup(values)  # the one validation of this run, in the usual case
    if not parsed.problems:
        return parsed.setup, None
    for key in parsed.problems:  # fall back to the control's own default and say so
        if key not in noticed:
            st.session_state[NOTICES].append(("url.ignored", key, str(values[key])))
        values[key] = widget_default(key)
    try:
        return setup_from_mapping(values)[0], None
    except SetupError as error:
        return None, error


def start(standalone: bool = False) -> tuple[TrainingSetup | None, SetupError | None]:
    """Language, URL check, menu, sidebar, setup: what every run needs before a page draws.

    `standalone`: the page runs without `app.py` (AppTest of one page file), so it registers the pages itself.
    """
    from steplab_ui import browser, layout, navigation

    ensure_session()
    layout.readability_fixes()
    if standalone:
        navigation.register(normalise_language(st.session_state.get("lang") or st.query_params.get("lang")))
    lang = language_control()
    browser.streamlit_words(lang)
    navigation.menu(lang)
    render_sidebar(lang)
    browser.page_changes()
    return setup_from_widgets()


def shared_setup() -> tuple[TrainingSetup | None, SetupError | None]:
    """The setup every page shows; when the page runs alone (AppTest of one file) it renders the shell itself."""
    stored = st.session_state.get(SHELL_SETUP)
    return stored if stored is not None else start(standalone=True)


def language_control() -> str:
    """The language switch, first in the sidebar so every label follows it; kept in the URL as `?lang=en`.

    Not bound with `bind=` because a bound widget stores its *displayed* label in the URL (中文/English).
    """
    if st.session_state.get("lang") not in LANGUAGES:
        # not set yet (a new session), or the required switch came back empty: the frontend now and then sends
        # None for it with another widget's change; the language is then the one the URL holds
        st.session_state["lang"] = normalise_language(st.query_params.get("lang"))
    with st.sidebar:
        st.segmented_control(
            "语言 / Language", list(LANGUAGES), key="lang", required=True,
            format_func=lambda code: {"zh": "中文", "en": "English"}[code], label_visibility="collapsed",
        )
    lang = language()
    if lang == "zh":
        st.query_params.pop("lang", None)
    else:
        st.query_params["lang"] = lang
    return lang
