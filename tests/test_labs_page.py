"""AppTest: the torch labs page (`app_pages/labs.py`) in both languages, each lab's inputs, its numbers, bad input."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.i18n import catalogue, fmt_float
from steplab.labs import accumulation, memory, overfitting, token_weighting

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "app_pages" / "labs.py"


def run(**params: str) -> AppTest:
    """The labs page alone, run once with these URL parameters, without an exception."""
    return run_page("app_pages/labs.py", **params)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> str:
    parts = [*at.markdown, *at.caption, *at.success, *at.info, *at.warning, *at.error]
    return "\n".join(str(p.value) for p in parts)


@pytest.fixture(scope="module")
def english() -> AppTest:
    return run(lang="en")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lab_renders(lang):
    at = run(lang=lang)
    strings = catalogue(lang)
    assert at.title[0].value == strings["page.labs.title"]
    assert [tab.label for tab in at.tabs] == [strings[f"labs.{k}.tab"] for k in "abcd"]
    shown = metrics(at)
    for key in ("labs.a.grad_diff", "labs.b.old_diff", "labs.b.fixed_diff", "labs.c.best", "labs.c.val_end"):
        assert strings[key] in shown
    charts = at.get("plotly_chart")
    assert len(charts) == 5
    assert all(chart.proto.alt for chart in charts)  # every chart has a text alternative
    captions = {c.value for c in at.caption}
    assert all(chart.proto.alt in captions for chart in charts)  # ... also visible on the page
    assert len(at.table) == 4  # lab A's mistakes, lab C's epochs, lab D's measurements and lengths


def test_lab_a_numbers_on_screen(english):
    result = accumulation.run(4, 8)
    shown = metrics(english)
    assert shown["Largest gradient difference"] == f"{result.variant('correct').grad_max_abs_diff:.1e}"
    assert float(shown["Largest gradient difference"]) <= 1e-12
    mistakes = english.table[0].value
    assert list(mistakes.iloc[:, 1]) == ["1", "1", "1", "8"]  # optimizer steps
    assert mistakes.iloc[1, 2] == "8.00×"  # not dividing: 8 × the gradient


def test_lab_a_follows_the_learners_batch_and_accumulation():
    at = run(lang="en")
    at.select_slider(key="labs_a_accumulation").set_value(16).run()
    at.select_slider(key="labs_a_batch").set_value(2).run()
    assert not at.exception
    assert "**2** × accumulation **16** = **32**" in texts(at)
    assert at.table[0].value.iloc[1, 2] == "16.00×"
    assert at.table[0].value.iloc[3, 1] == "16"


def test_lab_b_lengths_examples_and_bad_input():
    at = run(lang="en")
    unequal = token_weighting.run(token_weighting.parse_lengths(token_weighting.EXAMPLES["unequal"], 1), 1)
    assert metrics(at)["Difference, with the fix"] == f"{unequal.group_tokens_max_abs_diff:.1e}"
    assert any("Not the same run" in w.value for w in at.warning)
    at.button(key="labs_b_example_equal").click().run()
    assert at.text_input(key="labs_b_lengths").value == token_weighting.EXAMPLES["equal"]
    assert any("same number of label tokens" in s.value for s in at.success)
    at.text_input(key="labs_b_lengths").input("3, 4, five").run()
    assert not at.exception
    assert any("whole numbers" in e.value for e in at.error)
    at.text_input(key="labs_b_lengths").input("3, 4, 5").run()
    at.selectbox(key="labs_b_batch").set_value(2).run()
    assert any("multiple of 2" in e.value for e in at.error)


def test_lab_c_checkpoints_of_the_shared_setup_and_per_epoch(english):
    at = english
    result = overfitting.run(12, 0)
    assert metrics(at)["Lowest validation loss"] == fmt_float(result.val_loss[result.best_step - 1], 3)
    # the course setup saves once, at its last step (150 = epoch 3) → lab step 36
    assert at.selectbox(key="labs_c_checkpoint").options == [
        f"step 36 · epoch 3 · validation {fmt_float(result.val_loss[35], 3)} · your step 150"]
    at.radio(key="labs_c_source").set_value("epoch").run()
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 12
    at.selectbox(key="labs_c_checkpoint").set_value(24).run()
    assert any("step 24" in s.value for s in at.success)  # epoch 2's checkpoint is the best saved one
    at.slider(key="labs_c_epochs").set_value(4).run()
    assert not at.exception
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 4


def test_lab_c_checkpoints_follow_the_sidebar_setup():
    at = run(lang="en", save_strategy="epoch")
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 3  # epochs 1, 2, 3 of the course setup


def test_lab_d_model_and_measurement(english):
    at = english
    assert "27.92" in at.table[2].value.to_string() and "21.71" in at.table[2].value.to_string()
    fixed, per_sample = memory.chapter_line()
    assert f"F ≈ {fixed:.2f} GiB" in texts(at)
    at.select_slider(key="labs_d_batch").set_value(8).run()
    assert any(f"{memory.predicted_peak_gib(8):.2f} GiB" in w.value and "not measured" in w.value for w in at.warning)


def test_bad_lab_in_the_url_gives_a_notice():
    at = run(lang="en", lab="zz")
    assert any("lab=zz" in w.value for w in at.warning)
    assert not any("lab=" in w.value for w in run(lab="c").warning)


def test_torch_is_imported_only_inside_functions():
    """The page and its view may import torch (through the labs) only inside functions, never at import time."""
    for path in (PAGE, PAGE.parents[1] / "steplab_ui" / "labs_view.py"):
        _no_torch_at_import(ast.parse(path.read_text(encoding="utf-8")))


def _no_torch_at_import(tree: ast.Module) -> None:
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [getattr(node, "module", None) or ""] + [alias.name for alias in node.names]
            assert not any(n.startswith("torch") or n.startswith("steplab.labs.") for n in names), names
            if isinstance(node, ast.ImportFrom) and node.module == "steplab.labs":
                assert {alias.name for alias in node.names} <= {"TOLERANCE"}
