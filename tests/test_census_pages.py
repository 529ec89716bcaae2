"""The census on the pages (AppTest): /config names an imported YAML's keys StepLab does not model or does not know,
one sentence each; every other page names them under its title while the imported setup stands, and marks an
estimated sample count as one."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest
from test_app import first_button

from steplab.i18n import fmt_int, t
from steplab.io.census import Unknown, Unmodelled

ROOT = Path(__file__).resolve().parents[1]
YAML = "num_samples: 100\nper_device_train_batch_size: 4\noptim: sgd\ngradient_acumulation_steps: 8\nseed: 3\n"


def page(name: str, lang: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def test_config_names_each_key_not_modelled_and_the_key_a_misspelt_one_means():
    for lang in ("zh", "en"):
        at = page("config", lang)
        at.text_area(key="config_text").set_value(YAML).run()
        first_button(at).click().run()
        assert not at.exception and at.success
        warning = " ".join(w.value for w in at.warning)
        assert t(lang, "config.census_heading") in warning
        assert Unmodelled("optim", "learning_rates").message().get(lang) in warning
        assert Unknown("gradient_acumulation_steps", "gradient_accumulation_steps").message().get(lang) in warning
        assert "`seed`" not in warning  # proven irrelevant: nothing to say
        assert at.session_state["_imported_census"][1] == (Unmodelled("optim", "learning_rates"),)


def test_another_page_names_them_while_the_imported_setup_stands():
    for lang in ("zh", "en"):
        at = AppTest.from_file(str(ROOT / "app_pages" / "calculator.py"), default_timeout=60)
        at.query_params["lang"] = lang
        at.session_state["_imported_census"] = ({"num_samples": 1600}, (Unmodelled("optim", "learning_rates"),))
        at.run()
        assert not at.exception
        heading = t(lang, "sidebar.census_heading")
        assert heading in [e.label for e in at.expander]
        assert Unmodelled("optim", "learning_rates").message().get(lang) in " ".join(m.value for m in at.markdown)
        at.session_state["_imported_census"] = ({"num_samples": 1234}, (Unmodelled("optim", "learning_rates"),))
        at.run()
        assert heading not in [e.label for e in at.expander]  # the setup moved on: the import no longer stands


def test_an_estimated_sample_count_is_marked_on_the_pages():
    at = AppTest.from_file(str(ROOT / "app_pages" / "calculator.py"), default_timeout=60)
    at.query_params["lang"] = "en"
    at.session_state["_samples_from_datasets"] = (1600, True)
    at.run()
    assert t("en", "sidebar.census_estimate", n=fmt_int(1600)) in [c.value for c in at.caption]
    at.session_state["_samples_from_datasets"] = (1600, False)
    at.run()
    assert t("en", "sidebar.census_estimate", n=fmt_int(1600)) not in [c.value for c in at.caption]
