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


def test_a_second_visit_draws_each_control_with_the_value_its_column_kept():
    """Through the router: change column 2's accumulation, visit the calculator, come back. The control Streamlit
    forgot meanwhile is drawn anew with the kept value as its own (its proto's default), so a browser mounting it
    shows 32 whatever it does with a state write (it once showed the column's first value, 8, beside a table that
    said 32); the page never writes a control's state."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("app_pages/compare.py").run()
    at.number_input(key="cmp_1_gradient_accumulation_steps").set_value(32).run()
    for visit in (1, 2):
        at.switch_page("app_pages/calculator.py").run()
        at.switch_page("app_pages/compare.py").run()
        assert not at.exception
        controls = [n for n in at.number_input if n.key.startswith("cmp_1_gradient_accumulation_steps")]
        assert len(controls) == 1 and controls[0].key != "cmp_1_gradient_accumulation_steps", visit  # drawn anew
        assert controls[0].value == 32 and controls[0].proto.default == 32
        assert "32" in list(at.table[0].value.columns)[1]
    preset = [n for n in at.number_input if n.key.startswith("cmp_2_gradient_accumulation_steps")][0]
    assert preset.value == preset.proto.default == 16  # a column nobody changed keeps its preset
