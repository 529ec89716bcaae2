"""Hand-edited URLs and odd YAML: the app always renders, names what it ignored, never shows a traceback."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest
from test_app import first_button

from steplab.i18n import catalogue, t
from steplab.trainer.query import value_problem as url_value_problem
from steplab_ui.shell.state import (
    ADVANCED_OPEN,
    LINK_REFUSED,
    MAX_LINK_QUERY,
    MAX_URL_PARAMETER,
    SETUP_KEYS,
    control_key,
)

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e309", "-0", "0x10", "1_000", "３", "1.5", "", " ", "null"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60)
VALUES = st.one_of(NUMBERS, TEXT, st.sampled_from(["linear", "hf-4.46", "epoch", "true", "{\"num_cycles\": 2}"]))
KEYS = st.one_of(st.sampled_from([*SETUP_KEYS, "lang", "embed"]), st.text(string.ascii_letters + "_", min_size=1,
                                                                           max_size=12))


def render(params: dict[str, str | list[str]], advanced: bool = False) -> AppTest:
    """The calculator at a URL of `params`; `advanced`: with the sidebar's advanced section open."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "calculator.py"), default_timeout=60)
    at.session_state[ADVANCED_OPEN] = advanced
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    return at


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, st.one_of(VALUES, st.lists(VALUES, min_size=2, max_size=3)), max_size=6))
def test_any_url_renders_and_names_what_it_ignored(params):
    at = render(params)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == catalogue("zh")["page.calculator.title"]
    shown = " ".join(w.value for w in at.warning) + " ".join(e.value for e in at.error)
    assert "Traceback" not in shown
    for key, value in params.items():
        if key in SETUP_KEYS and isinstance(value, str) and url_value_problem(key, value):
            assert f"{key}=" in shown, (key, value, shown)


def test_repeated_keys_do_not_break_anything():
    at = render({"num_samples": ["1000", "2000"], "lang": ["en", "zh"]})
    assert not at.exception and at.metric


def test_two_sessions_never_share_a_setup():
    first, second = render({"num_samples": "1000"}), render({"num_samples": "2000", "lang": "en"})
    first.number_input(key="gradient_accumulation_steps").set_value(16).run()
    second.run()
    assert second.number_input(key="gradient_accumulation_steps").value == 8
    assert first.number_input(key="num_samples").value == 1000
    assert second.number_input(key="num_samples").value == 2000
    assert first.title[0].value != second.title[0].value  # zh and en


def test_hostile_yaml_on_the_config_page():
    at = AppTest.from_file(str(ROOT / "app_pages" / "config.py"), default_timeout=60).run()
    bomb = "a: &a ['x','x','x','x','x','x','x','x','x']\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
        for i in range(8))
    for text in (bomb, "!!python/object/new:os.system ['touch /tmp/steplab-pwned']", "[" * 5000,
                 "per_device_train_batch_size: {a: 1}", "x" * 300_000, "\x00\x01\x02binary"):
        at.text_area(key="config_text").set_value(text[:262_144]).run()
        first_button(at).click().run()
        assert not at.exception
        assert at.error, text[:40]
    assert not Path("/tmp/steplab-pwned").exists()


HUNDRED_KB = "9" * 100_000  # text pasted into the address by mistake


@pytest.mark.parametrize(("lang", "key"), [(lang, key) for lang in ("zh", "en")
                                            for key in ("x", "num_samples", "lr_scheduler_kwargs")] + [("zh", "lang")])
def test_a_hundred_kilobyte_parameter_is_named_and_dropped(lang, key):
    """About 100 KB of query string: the page draws as usual, one notice names the parameter, its length and the
    limit, and the parameter leaves the URL (a bound text control, `lr_scheduler_kwargs`, does not keep it)."""
    at = render({"lang": lang, key: HUNDRED_KB} if key != "lang" else {"lang": HUNDRED_KB}, advanced=True)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == catalogue(lang)["page.calculator.title"] and at.metric  # an unread `lang`: Chinese
    notice = t(lang, "url.too_long", key=key, length=len(key) + 1 + len(HUNDRED_KB), limit=MAX_URL_PARAMETER)
    assert [w.value for w in at.warning] == [notice]
    assert key not in at.query_params
    assert at.text_input(key=control_key("lr_scheduler_kwargs")).value == ""
    at.run()  # the next rerun: nothing left to say
    assert not at.warning and not at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_balancers_mark_of_a_refused_link_is_said_once_and_leaves_the_url(lang):
    """deploy/nginx.conf sends a link too long for the replicas back as `?link=too_long`: the page says the link
    was refused and why the setup is the default, in the page's language, and the mark leaves the address."""
    at = render({"lang": lang, LINK_REFUSED[0]: LINK_REFUSED[1]})
    assert not at.exception
    assert [w.value for w in at.warning] == [t(lang, "url.link_refused", limit=MAX_LINK_QUERY)]
    assert LINK_REFUSED[0] not in at.query_params and at.metric
    at.run()
    assert not at.warning


def test_the_balancer_refuses_links_at_the_length_the_page_names():
    """The limit in nginx's rule is the one the notice quotes (`^.{N+1}` matches a query over N characters)."""
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    assert re.search(r'if \(\$args ~ "\^\.\{(\d+)\}"\)', site).group(1) == str(MAX_LINK_QUERY + 1)
    assert f"?{LINK_REFUSED[0]}={LINK_REFUSED[1]}" in site


def test_json_nested_deeper_than_the_parser_goes_is_a_notice_not_a_crash():
    """`[[[[…` under the length limit: json.loads raises RecursionError, which used to end every page in an error."""
    for key in ("num_samples", "learning_rate", "lr_scheduler_kwargs", "dataloader_drop_last"):
        at = render({"lang": "en", key: "[" * (MAX_URL_PARAMETER - len(key) - 1)})
        assert not at.exception, (key, [e.value for e in at.exception])
        assert any(w.value.startswith(f"The value {key}=[[[") for w in at.warning), key
        assert key not in at.query_params and at.metric


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_misspelt_setting_is_named_with_the_one_meant_and_other_keys_are_left_alone(lang):
    """`learning_rat` is named with `learning_rate`; a messenger's or a tracker's parameters (`from`, `utm_source`)
    and a page's own are nobody's typo: kept, unnamed."""
    at = render({"lang": lang, "learning_rat": "1e-4", "per_device_batch_size": "16", "from": "singlemessage",
                 "utm_source": "wechat"})
    assert not at.exception
    assert [w.value for w in at.warning] == [
        t(lang, "url.unknown", key="learning_rat", field="learning_rate"),
        t(lang, "url.unknown", key="per_device_batch_size", field="per_device_train_batch_size")]
    assert at.query_params["from"] == "singlemessage" and at.query_params["utm_source"] == "wechat"
    assert "learning_rat" not in at.query_params and "per_device_batch_size" not in at.query_params
    assert at.number_input(key="per_device_train_batch_size").value == 4  # not taken from the misspelt key
