"""AppTest: the entry point and every page, in both languages; sliders, presets, URLs, bad input, YAML import."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.i18n import catalogue, fmt_int, t
from steplab.teaching.presets import presets
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui.shell.navigation import FIGURE_PAGES, PAGES

PAGE_FILES = [path for _, path, _, _ in PAGES]
ROOT = Path(__file__).resolve().parents[1]


def run(path: str, session: dict[str, object] | None = None, **params: str) -> AppTest:
    """`path` (from the repository's root) at a URL of `params`, with `session` put in its session state first."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    for key, value in (session or {}).items():
        at.session_state[key] = value
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def consoles(at: AppTest) -> list[str]:
    """The text of each console block on the page (`steplab_ui.shell.layout.console_text`), as the browser shows it."""
    from steplab_ui.shell.layout import CONSOLE_CLASS

    pattern = re.compile(rf"<pre class='{CONSOLE_CLASS}'>(.*)</pre>", re.DOTALL)
    return ["\n".join(html.unescape(line) for line in re.findall("<span>(.*?)</span>", found.group(1)))
            for element in at.get("html") if (found := pattern.fullmatch(element.proto.body))]


def first_button(at: AppTest):
    """The page's own first button (every page starts with the presenter switch, `steplab_ui.shell.presenter.SWITCH`)."""
    from steplab_ui.shell.presenter import SWITCH

    return next(button for button in at.button if button.key != SWITCH)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def total_steps(at: AppTest, lang: str = "zh") -> str:
    return metrics(at)[catalogue(lang)["card.total_steps"]]


@pytest.mark.parametrize("page", ["app_pages/llamaboard.py", "app_pages/calculator.py"])
def test_an_empty_language_switch_keeps_the_language_the_url_holds(page):
    """The required language switch now and then comes back from the browser as None together with another
    widget's change (seen on /llamaboard in a browser: a slider moved, the page turned Chinese and `lang=en` left
    the URL). The page stays in the URL's language and keeps `lang=en`."""
    at = run(page, lang="en")
    at.session_state["lang"] = None
    at.run()
    assert not at.exception
    assert at.title[0].value == catalogue("en")[f"page.{Path(page).stem}.title"]
    assert at.query_params["lang"] == "en"
    assert at.session_state["lang"] == "en"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_entry_point_renders(lang):
    at = run("app.py", lang=lang)
    assert at.title[0].value == catalogue(lang)["page.home.title"]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("path", PAGE_FILES)
def test_every_page_alone(path, lang):
    at = run(path, lang=lang)
    key = next(url for _, p, url, _ in PAGES if p == path)
    if key == "lessons":  # the lesson page is titled by its lesson
        assert at.title[0].value.startswith("1. ")
    else:
        assert at.title[0].value == catalogue(lang)[f"page.{key}.title"]
    menu = [link.proto.label for link in at.get("page_link")]
    assert [catalogue(lang)[f"page.{url}.title"] for _, _, url, _ in PAGES] == menu[: len(PAGES)]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_calculator_log_block_is_what_the_trainer_prints(lang):
    from steplab.simulation.logblock import running_training_block

    at = run("app_pages/calculator.py", lang=lang, num_samples="1090", gradient_accumulation_steps="8")
    setup = setup_from_mapping({**presets()["course_default"].values, "num_samples": 1090,
                                "gradient_accumulation_steps": 8})[0]
    assert consoles(at) == [running_training_block(make_plan(setup), lang)]
    assert not at.code  # plain text: no syntax highlighter for the browser to load


def test_console_text_is_escaped():
    def page() -> None:
        from steplab_ui.shell import layout

        layout.console_text("<script>alert(1)</script>\n  a & b")

    at = AppTest.from_function(page)
    at.run()
    assert "<script>" not in at.get("html")[0].proto.body
    assert consoles(at) == ["<script>alert(1)</script>\n  a & b"]


def test_calculator_course_default_and_slider():
    at = run("app_pages/calculator.py")
    assert total_steps(at) == "150"
    at.select_slider(key="gradient_accumulation_steps__slider").set_value(16).run()
    assert at.number_input(key="gradient_accumulation_steps").value == 16
    assert total_steps(at) == "75"
    at.number_input(key="num_samples").set_value(1001).run()
    expected = make_plan(setup_from_mapping({"num_samples": 1001, "per_device_train_batch_size": 4,
                                             "gradient_accumulation_steps": 16, "num_train_epochs": 3})[0])
    assert total_steps(at) == fmt_int(expected.max_steps)
    assert at.select_slider(key="num_samples__slider").value == 1001  # the slider shows the number in use
    assert "1,001" in at.select_slider(key="num_samples__slider").options
    at.select_slider(key="num_samples__slider").set_value(2000).run()
    assert at.number_input(key="num_samples").value == 2000
    assert "1,001" not in at.select_slider(key="num_samples__slider").options  # only the value in use is added


@pytest.mark.parametrize("key", list(presets()))
def test_each_preset_loads(key):
    at = run("app_pages/calculator.py", lang="en")
    at.selectbox(key="_preset_choice").set_value(key).run()
    assert not at.exception
    plan = make_plan(presets()[key].setup())
    shown = metrics(at)
    assert shown["Total steps"] == fmt_int(plan.max_steps)
    assert shown["Micro-batches per epoch"] == fmt_int(plan.micro_batches_per_epoch)
    assert shown["Effective batch"] == fmt_int(plan.total_train_batch_size)
    assert shown["Warmup steps"] == fmt_int(plan.warmup_steps)


def test_url_restores_setup():
    at = run("app_pages/calculator.py", lang="en", num_samples="1000", per_device_train_batch_size="4",
             gradient_accumulation_steps="8", num_train_epochs="3", trainer="hf-4.51", max_steps="120")
    assert at.number_input(key="num_samples").value == 1000
    assert at.toggle(key="use_max_steps").value is True
    assert total_steps(at, "en") == "120"
    at = run("app_pages/calculator.py", lang="en", num_samples="1000", trainer="hf-4.51")
    assert total_steps(at, "en") == "93"


@pytest.mark.parametrize(("key", "value"), [("num_samples", "abc"), ("per_device_train_batch_size", "0"),
                                            ("num_train_epochs", "1e9"), ("trainer", "hf-9"), ("lang", "fr"),
                                            ("world_size", "nan"), ("lr_scheduler_kwargs", "{broken")])
def test_bad_url_value_gives_notice(key, value):
    at = run("app_pages/calculator.py", **{key: value})
    assert any(key in w.value and "默认值" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.metric  # the page still renders a plan


def test_refused_setup_shows_the_trainers_error():
    at = run("app_pages/calculator.py", lang="en", eval_strategy="steps", eval_steps="37.5")
    assert any("refuses" in e.value for e in at.error)
    assert any("--eval_steps must be an integer if bigger than 1: 37.5" in c.value for c in at.code)


def test_yaml_import_good_and_bad(tmp_path):
    from golden import EXAMPLES

    text = (EXAMPLES / "train_lora__qwen3_lora_sft.yaml").read_text()
    at = run("app_pages/config.py", lang="en")
    at.text_area(key="config_text").set_value(text).run()
    first_button(at).click().run()
    assert at.success and not at.exception
    assert at.session_state["num_samples"] == 1090
    assert at.session_state["per_device_train_batch_size"] == 1
    at.text_area(key="config_text").set_value("a: [1,\nb: 2").run()
    first_button(at).click().run()
    assert any("line 3" in e.value for e in at.error)
    at.text_area(key="config_text").set_value("!!python/object/apply:os.system ['echo hi']").run()
    first_button(at).click().run()
    assert at.error and not at.exception


def test_compare_add_and_remove_columns():
    at = run("app_pages/compare.py", lang="en")
    frame = at.table[0].value
    assert list(frame.loc["Total steps"]) == ["150", "300", "150"]
    at.button(key="cmp_0_remove").click().run()
    assert len(at.session_state["cmp_ids"]) == 2
    at.button[-1].click().run()
    assert len(at.session_state["cmp_ids"]) == 3


def test_catalogues_have_the_same_keys():
    assert set(catalogue("zh")) == set(catalogue("en"))
    assert all(catalogue("zh").values()) and all(catalogue("en").values())


@pytest.mark.parametrize(("params", "english", "chinese"), [
    ({}, "4 per device, accumulation 8, 1 GPU, 3 epochs.", "1 张 GPU，训练 3 轮。"),
    ({"world_size": "2", "num_train_epochs": "1"}, "2 GPUs, 1 epoch.", "2 张 GPU，训练 1 轮。"),
])
def test_home_sentence_counts_gpus_and_epochs(params, english, chinese):
    for lang, expected in (("en", english), ("zh", chinese)):
        at = run("app_pages/home.py", lang=lang, **params)
        sentence = next(m.value for m in at.markdown if m.value.startswith(catalogue(lang)["home.current"][:4]))
        assert expected in sentence
        plan = make_plan(setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4,
                                             "gradient_accumulation_steps": 8, "num_train_epochs": 3,
                                             **{k: float(v) for k, v in params.items()}})[0])
        assert f"**{fmt_int(plan.max_steps)}**" in sentence
        blurbs = [c.value for c in at.caption]
        assert catalogue(lang)["home.link.calculator"] in blurbs


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_filling_with_nothing_says_what_to_do(lang):
    """No paste and no file (or a file the browser turned away as too large): say so, the limit and what to do,
    not "the config has no keys"."""
    from steplab.dataset.files import MAX_FILE_BYTES

    at = run("app_pages/config.py", lang=lang)
    nothing = t(lang, "config.nothing", mb=MAX_FILE_BYTES // 2**20)  # the uploader's cap: larger files stay in the browser
    for pasted in ("", "  \n "):
        at.text_area(key="config_text").set_value(pasted).run()
        first_button(at).click().run()
        assert [w.value for w in at.warning] == [nothing]
        assert not at.error and not at.success and not at.exception
    at.text_area(key="config_text").set_value("# only a comment\n").run()
    first_button(at).click().run()  # a document without keys is still the parser's "empty"
    assert at.error and nothing not in [w.value for w in at.warning]


@pytest.mark.parametrize("path", [path for _, path, url, _ in PAGES if url not in FIGURE_PAGES])
def test_a_page_left_out_of_the_figure_pages_draws_no_figure_at_first(path):
    """A new visitor's first page in `navigation.FIGURE_PAGES` gets its sidebar drawn first (`browser.sidebar_first`:
    plotly's code kept the sidebar grey); one left out must draw no plotly figure when it opens, or it brings that
    wait back."""
    at = run(path)
    assert not at.get("plotly_chart"), path
