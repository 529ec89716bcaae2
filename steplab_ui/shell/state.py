"""The shared training setup: sidebar controls bound to the URL, presets, and notices for bad URL values.

The sidebar returns the setup and its notices (`Shared`): every field is a session-state key named as the engine's
field (a main control's own key, bound with `bind="query-params"`; an advanced field's plain key, which a control
drawn only while its section is open edits: `_tied`); the sidebar collects what they hold and parses it once. The
link's text form, both ways, is the engine's codec (`steplab.trainer.query`): `ensure_session` reads the link with
`from_query`, `write_url` writes the setup back with `to_query`. `set_values` is the one writer of the setup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import streamlit as st

from steplab.errors import SetupError
from steplab.i18n import LANGUAGES, fmt_int, normalise_language, t
from steplab.teaching.presets import presets
from steplab.trainer import query
from steplab.trainer.fields import FIELDS
from steplab.trainer.profiles import PROFILES
from steplab.trainer.query import LINK_REFUSED, MAX_LINK_QUERY, MAX_URL_PARAMETER, Notice
from steplab.trainer.setup import TrainingSetup, parse_setup

__all__ = ["LINK_REFUSED", "MAX_LINK_QUERY", "MAX_URL_PARAMETER", "Notice", "Shared"]

SHELL_SETUP = "_steplab_shell_setup"  # this run's `Shared`, from the router to the page
CARRIED_NOTICES = "_steplab_url_notices_carried"  # a sidebar-only first run's notices, for the page's first run
IN_USE = "_steplab_setup_in_use"  # the setup the last run used: what a refused typed value gives way to
REFUSED = "_steplab_refused"  # {field: the value typed and refused}: said beside the field until it changes
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


@dataclass(frozen=True)
class Shared:
    """What the shell hands the page: the shared setup (None with `error` when there is none) and the notices
    about the link and the sidebar's values (`steplab.trainer.query.Notice`)."""

    setup: TrainingSetup | None
    error: SetupError | None = None
    notices: tuple[Notice, ...] = ()


@lru_cache(maxsize=1)
def course_setup() -> TrainingSetup:
    """The setup the sidebar starts from: the course preset, the Trainer's defaults elsewhere (links leave it out)."""
    return presets()[COURSE_PRESET].setup()


def number_range(name: str) -> dict[str, Any]:
    """`min_value` / `max_value` of a number control: the field's own range, in the field's type."""
    field = FIELDS[name]
    cast = int if field.whole else float
    return {"min_value": cast(field.low), "max_value": cast(field.high)}


def widget_default(name: str) -> Any:
    """What a control shows when neither the URL nor the user set it: the course setup's value, in the control's
    type (`control_value`)."""
    return control_value(name, getattr(course_setup(), name))


def language() -> str:
    """The language from the bound `lang` widget (URL `?lang=en`), Chinese by default."""
    return normalise_language(st.session_state.get("lang", "zh"))


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


@lru_cache(maxsize=64)
def _read_link(items: tuple[tuple[str, tuple[str, ...]], ...]) -> query.Parsed:
    """The link's one parse (the codec's `from_query` on the course setup), kept while the link stays the same."""
    return query.from_query(dict(items), course_setup())


def ensure_session() -> tuple[tuple[Notice, ...], query.Parsed]:
    """Idempotent start of every run: the link read in one parse, before any widget is created; what it cannot
    use is taken out of the URL. Returns the notices (a sidebar-only first run's carried ones first, see
    `browser.sidebar_first`) and the parse, whose setup seeds the controls a session creates.

    A notice is `(code, key, detail)` (`steplab.trainer.query.Notice`): `url.ignored` (the detail is the value
    that cannot be used), `url.too_long` (its length), `url.unknown` (the setup field meant) or `url.link_refused`
    (the balancer's limit)."""
    params = st.query_params
    link = _read_link(tuple((key, tuple(params.get_all(key))) for key in params))
    refused = st.session_state.get(REFUSED) or {}
    notices = [notice for notice in link.notices if notice.code != "url.ignored"]
    if "lang" not in link.dropped and params.get("lang", "zh") not in LANGUAGES:
        notices.append(Notice("url.ignored", "lang", params.get("lang")))
    # a value just typed and refused is said beside its field instead
    notices.extend(notice for notice in link.notices if notice.code == "url.ignored" and notice.key not in refused)
    _drop_url_parameters(list(link.dropped))
    # a run that draws the sidebar only (`browser.sidebar_first`) leaves its notices to the page's run: the link's
    # bad values are gone from the URL by then, and with them the reason to say anything
    return (*st.session_state.pop(CARRIED_NOTICES, ()), *notices), link


def _shortened(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "…"


def url_notice(lang: str, key: str, raw: str) -> None:
    """The notice for a URL value that was ignored (a long value shortened)."""
    st.warning(t(lang, "url.ignored", key=key, value=_shortened(raw)), icon=":material/link_off:")


def show_url_notices(lang: str, notices: tuple[Notice, ...]) -> None:
    for code, key, detail in notices:
        if code == "url.ignored":
            url_notice(lang, key, str(detail))
            continue
        shown = _shortened(key).replace("`", "'")  # said in a code span: no backtick of the link's ends it
        values = {"url.too_long": {"length": detail, "limit": MAX_URL_PARAMETER},
                  "url.link_refused": {"limit": detail}}.get(code, {"field": detail})
        st.warning(t(lang, code, key=shown, **values), icon=":material/link_off:")


def _refused() -> dict[str, Any]:
    return st.session_state.get(REFUSED) or {}


def _forget_refused(*names: str) -> None:
    """The fields changed: an earlier refusal no longer applies."""
    refused = _refused()
    if any(name in refused for name in names):
        st.session_state[REFUSED] = {name: value for name, value in refused.items() if name not in names}


def _sync_number(name: str) -> None:
    """The slider moved: copy its value into the exact input (the one the setup and the URL read)."""
    st.session_state[name] = st.session_state[f"{name}__slider"]
    _forget_refused(name)


def _check_exact(name: str) -> None:
    """The exact input changed: a value the field table refuses (or an emptied field) is put back to the value in
    use, and remembered, so that the field can say what was kept and why.

    The input has no `min_value`/`max_value`: with them the browser itself refuses an out-of-range number (the
    field stays red, "Press Enter to apply") and Python never hears of it. The range check is the engine's.
    """
    typed = st.session_state.get(name)
    if typed is None or name in parse_setup({name: typed}).problems:
        in_use = st.session_state.get(IN_USE)
        st.session_state[name] = widget_default(name) if in_use is None else control_value(name, getattr(in_use, name))
        st.session_state[REFUSED] = {**_refused(), name: typed}
    else:
        _forget_refused(name)


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


def _main_control(name: str, lang: str) -> tuple[Any, bool]:
    """One control in one box: a slider over round stops (the field's name and help) over the exact number input
    (the one bound to the URL; its label is read by screen readers, not repeated on screen), and, after a refused
    value, what was kept and why, right under the input. Returns the value and whether the bound input could not
    read the URL's value (a fallback input shows the default instead).

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
    fell_back = False
    with box:
        try:
            value = st.number_input(label, **_default_arg(name, default), key=name, bind=BIND,
                                    on_change=_check_exact, args=(name,), **options)
        except (OverflowError, ValueError):  # Streamlit cannot even read this URL value (e.g. inf for a whole number)
            value = st.number_input(label, value=int(default), key=f"{name}__fallback", **number_range(name), **options)
            fell_back = True
        refused = _refused()
        if name in refused:
            st.warning(refusal_text(lang, name, value, refused[name]), icon=":material/undo:")
    slider_key = f"{name}__slider"
    st.session_state[slider_key] = value  # the slider follows the exact input (typed, from the URL or a preset)
    with slider_slot:
        st.select_slider(
            t(lang, f"field.{name}"), options=slider_stops(name, value), key=slider_key, help=t(lang, f"help.{name}"),
            format_func=(lambda v: f"{v:g}") if is_float else fmt_int, on_change=_sync_number, args=(name,),
        )
    return value, fell_back


def set_values(changes: Mapping[str, Any]) -> None:
    """The one writer of the shared setup: put values into its controls (call it from a callback); the sidebar
    reads them on the run that follows, and the URL follows the sidebar. `max_steps` above 0 turns its toggle on."""
    _forget_refused(*changes)  # a new value: an earlier refusal no longer applies
    for key, value in changes.items():
        if key == "max_steps":
            st.session_state["use_max_steps"] = value is not None and value > 0
            if value is not None and value > 0:
                st.session_state[key] = int(value)
            continue
        st.session_state[key] = control_value(key, value)


def apply_values(values: Mapping[str, Any]) -> None:
    """Put a whole setup (a preset, an imported YAML, a column) into the shared controls (`set_values`).

    Every control is set, to the given value or to its default: popping a bound widget's state would let
    the old URL value come back.
    """
    set_values({key: values.get(key, widget_default(key)) for key in SETUP_KEYS})


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
        if isinstance(value, tuple):  # the setup's own form: (name, value) pairs
            value = dict(value)
        return json.dumps(value) if isinstance(value, dict) and value else (value or "")
    if key in FLOAT_FIELDS and value is not None:
        return float(value)
    if FIELDS[key].whole and value is not None:
        return int(value)
    return value


def _hold_advanced(link: TrainingSetup) -> None:
    """Every advanced field has its value in the session state from the session's first run: the link's (read
    by `ensure_session`; the course setup's where it sets none). Later runs keep it (`write_url` keeps the URL up
    to date with it)."""
    for key in ADVANCED_KEYS:
        if not _is_set(key):
            st.session_state[key] = control_value(key, getattr(link, key))


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


def _advanced(lang: str, link: TrainingSetup) -> None:
    """The rarely changed fields, drawn only while their section is open: 16 controls less on most reruns (a
    quarter of a calculator rerun's script CPU). Their values are plain session-state keys kept in the URL by
    `write_url` (`_tied`), so unlike the main controls they are not bound to the URL."""
    _hold_advanced(link)
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
        st.selectbox(t(lang, f"field.{kind}_strategy"), list(FIELDS[f"{kind}_strategy"].choices), **_tied(f"{kind}_strategy"),
                     help=t(lang, f"help.{kind}_strategy"))
        st.number_input(t(lang, f"field.{kind}_steps"), **number_range(f"{kind}_steps"), step=1.0, format="%g",
                        **_tied(f"{kind}_steps"), help=t(lang, f"help.{kind}_steps"), placeholder=t(lang, "sidebar.unset"))
    for flag in ("logging_first_step", "eval_on_start"):
        st.toggle(t(lang, f"field.{flag}"), **_tied(flag), help=t(lang, f"help.{flag}"))
    if _takes_batch_limit():
        st.number_input(t(lang, "field.limit_train_batches"), **number_range("limit_train_batches"), format="%g",
                        **_tied("limit_train_batches"), help=t(lang, "help.limit_train_batches"),
                        placeholder=t(lang, "sidebar.unset"))
    for key in ADVANCED_KEYS:
        if key not in DRAWN and not FIELDS[key].trainer_classes:  # TRL's fields: their page's controls
            field_control(lang, key)


DRAWN = ("dataloader_drop_last", "trainer", "learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs",
         "warmup_steps", "warmup_ratio", "eval_strategy", "eval_steps", "save_strategy", "save_steps",
         "logging_strategy", "logging_steps", "logging_first_step", "eval_on_start", "limit_train_batches")
"""The advanced fields with a control of their own above; any other field of the table gets `field_control`."""


def field_control(lang: str, key: str) -> None:
    """A field's control drawn from its row of the field table alone (a flag, a choice, a number, kwargs): a new
    field is in the sidebar, the URL and the setup without a line here. A page draws its own fields' controls with
    it too (the GRPO page: TRL's fields); like the advanced section's, they hold a plain session-state key that the
    sidebar reads and `write_url` keeps in the link."""
    field, label, helptext = FIELDS[key], t(lang, f"field.{key}"), t(lang, f"help.{key}")
    if field.kind == "bool":
        st.toggle(label, **_tied(key), help=helptext)
    elif field.kind == "choice":
        st.selectbox(label, list(field.choices), **_tied(key), help=helptext)
    elif field.kind == "kwargs":
        st.text_input(label, **_tied(key), help=helptext, max_chars=300)
    else:
        st.number_input(label, **number_range(key), step=1 if field.whole else 1.0, format="%d" if field.whole else "%g",
                        **_tied(key), help=helptext, placeholder=t(lang, "sidebar.unset") if field.optional else None)


SAMPLES_FROM_DATASETS = "_samples_from_datasets"
"""The sample count the config page worked out from dataset files (the sidebar says so while it stands)."""


IMPORTED = "_imported_census"
"""What /config's last import set (`{field: value}`, normalised by the setup) and what its YAML holds that StepLab
does not model (`steplab.io.census.Unmodelled`s): every page names them while those values stand."""


def imported_stands(setup: TrainingSetup | None) -> tuple[Any, ...]:
    """The imported YAML's keys StepLab does not model, while the setup still holds what the import set (else ())."""
    stored = st.session_state.get(IMPORTED)
    if setup is None or stored is None:
        return ()
    values, items = stored
    current = setup.to_dict()
    return tuple(items) if all(current.get(name) == value for name, value in values.items()) else ()


def show_import_notes(lang: str, setup: TrainingSetup | None) -> None:
    """Under a page's title, while the imported setup stands: an estimated sample count marked as one (every count
    on the page rests on it), and the YAML's keys StepLab does not model, one sentence each (`census.may_change.*`)."""
    if setup is None:
        return
    counted = st.session_state.get(SAMPLES_FROM_DATASETS)
    if counted is not None and counted[1] and counted[0] == setup.num_samples:
        st.caption(t(lang, "sidebar.census_estimate", n=counted[0]))
    items = imported_stands(setup)
    if items:
        with st.expander(t(lang, "sidebar.census_heading"), icon=":material/help:"):
            st.markdown("\n".join(f"- {item.message().get(lang)}" for item in items))


def _samples_source(lang: str) -> None:
    counted = st.session_state.get(SAMPLES_FROM_DATASETS)  # (count, estimated) or None
    if counted is not None and counted[0] == st.session_state.get("num_samples"):
        key = "config.data.sidebar_estimate" if counted[1] else "config.data.sidebar_source"
        st.caption(t(lang, key, n=counted[0]))


def render_sidebar(lang: str, link: query.Parsed, noticed: set[str]) -> tuple[TrainingSetup, tuple[Notice, ...]]:
    """Every shared control, in the sidebar, with a short help in the user's language; returns the setup they hold
    and the notices about values it could not use (`noticed`: fields the link's notices already name).

    `link` is the link's parse: its setup seeds the controls a new session creates that are not bound to the URL."""
    values: dict[str, Any] = {}
    broken: set[str] = set()
    with st.sidebar:
        st.selectbox(
            t(lang, "sidebar.preset"), list(presets()), index=None, key="_preset_choice", on_change=_load_preset,
            format_func=lambda k: presets()[k].title.get(lang), placeholder=t(lang, "sidebar.preset_placeholder"),
            help=t(lang, "help.preset"),
        )
        for name in MAIN_FIELDS:
            values[name], fell_back = _main_control(name, lang)
            if fell_back:
                broken.add(name)
            if name == "num_samples":
                _samples_source(lang)
        if not _is_set("use_max_steps"):
            st.session_state["use_max_steps"] = "max_steps" in link.given and link.setup.max_steps > 0
        values["max_steps"] = -1
        if st.toggle(t(lang, "field.use_max_steps"), key="use_max_steps", help=t(lang, "help.max_steps")):
            values["max_steps"] = st.number_input(
                t(lang, "field.max_steps"), min_value=1, max_value=number_range("max_steps")["max_value"],
                **_default_arg("max_steps", 100), step=1, key="max_steps", bind=BIND, help=t(lang, "help.max_steps"))
        _advanced(lang, link.setup)
    for key in ADVANCED_KEYS:
        values[key] = st.session_state[key]
    parsed = parse_setup(values, course_setup())  # the one validation of this run's setup
    # a value the engine rejects (a hand-edited URL can put anything into a bound control) is the course setup's
    notices = tuple(Notice("url.ignored", key, str(values[key])) for key in parsed.problems if key not in noticed)
    st.session_state[IN_USE] = parsed.setup
    write_url(parsed.setup, broken)
    return parsed.setup, notices


def _takes_batch_limit() -> bool:
    """The chosen profile takes Lightning's `limit_train_batches` (its row says so)."""
    profile = PROFILES.get(st.session_state.get("trainer"))
    return profile is not None and profile.limit_train_batches


def write_url(setup: TrainingSetup, broken: set[str] | frozenset[str] = frozenset()) -> None:
    """Every way of changing the setup leaves a URL that reopens exactly it (`steplab.trainer.query.to_query`).

    Streamlit syncs a bound control to the URL, but a value set from code (a lesson's "use this setup", a preset,
    an imported YAML) reaches the URL only when the control was on screen in the run before, and it writes
    floats as `50.0`. So after the sidebar, the URL is set to the setup in the codec's form. Left alone: a
    field whose bound control could not read the URL (`broken`), `max_steps` while its toggle is off, and
    Lightning's batch limit under another trainer.
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    wanted = query.to_query(setup, course_setup())
    keys = [key for key in SETUP_KEYS if key not in broken]
    if setup.max_steps <= 0:
        keys.remove("max_steps")
    if not PROFILES[setup.trainer].limit_train_batches:
        keys.remove("limit_train_batches")
    with get_session_state().query_params() as params:
        for key in keys:
            text = wanted.get(key)
            current = params.get(key) if params.has_param(key) else None
            if text is None and current is not None:
                params.remove_param(key)
            elif text is not None and current != text:
                params.set_corrected_value(key, text, "string_value")


def start(standalone: bool = False) -> Shared:
    """Language, URL check, menu, sidebar, setup: what every run needs before a page draws.

    `standalone`: the page runs without `app.py` (AppTest of one page file), so it registers the pages itself.
    """
    from steplab_ui.shell import browser, layout, navigation

    notices, link = ensure_session()
    layout.readability_fixes()
    if standalone:
        navigation.register(normalise_language(st.session_state.get("lang") or st.query_params.get("lang")))
    lang = language_control()
    browser.streamlit_words(lang)
    navigation.menu(lang)
    setup, more = render_sidebar(lang, link, {notice.key for notice in notices})
    browser.page_changes()
    return Shared(setup, None, (*notices, *more))


def shared_setup() -> Shared:
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
