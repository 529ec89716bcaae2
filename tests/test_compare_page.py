"""/compare (issue 16 item 11): the results come before the forms, and each column is named by what it changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from steplab.i18n import t
from steplab_ui.views.compare import column_names

ROOT = Path(__file__).resolve().parents[1]


def test_columns_are_named_by_what_differs_from_the_first():
    first = {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 8, "num_train_epochs": 3.0}
    names = column_names([first, {**first, "per_device_train_batch_size": 2},
                          {**first, "gradient_accumulation_steps": 16, "num_train_epochs": 2.0}, dict(first)], "en")
    assert names == ["Setup 1 (the baseline)", "Setup 2: batch 2", "Setup 3: accumulation 16, epochs 2",
                     "Setup 4: same as the baseline"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_results_come_first_and_follow_a_changed_column(lang):
    at = AppTest.from_file(str(ROOT / "app_pages/compare.py"), default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    headers = list(at.table[0].value.columns)
    assert headers[2] == t(lang, "compare.column_diff", n=3, changes=t(lang, "compare.list_separator").join(
        [t(lang, "compare.short.per_device_train_batch_size", value="2"),
         t(lang, "compare.short.gradient_accumulation_steps", value="16")]))
    # the table is drawn before the first form field (the page reads top to bottom)
    order = [element.type for element in at.main]
    assert order.index("table") < order.index("number_input"), order
    at.number_input(key="cmp_1_gradient_accumulation_steps").set_value(32).run()
    assert t(lang, "compare.short.gradient_accumulation_steps", value="32") in list(at.table[0].value.columns)[1]
    assert at.markdown and f"**{list(at.table[0].value.columns)[1]}**" in [m.value for m in at.markdown]


def test_the_column_holding_a_setup_is_found_whatever_the_number_types():
    from steplab.teaching.compare import column_of
    from steplab.teaching.presets import presets

    chapter = [presets()[key].values for key in ("course_default", "course_batch2_acc8", "course_batch2_acc16")]
    sidebar = presets()["course_default"].setup().to_dict()  # floats where the preset wrote whole numbers
    columns = [{**values, "world_size": 1, "trainer": sidebar["trainer"]} for values in chapter]
    assert isinstance(sidebar["num_train_epochs"], float) and column_of(columns, sidebar) == 0
    assert column_of(columns, {**sidebar, "per_device_train_batch_size": 2}) == 1
    assert column_of(columns, {**sidebar, "num_samples": 1090}) is None
