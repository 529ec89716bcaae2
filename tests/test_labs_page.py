"""AppTest: the torch labs page (`app_pages/labs.py`) in both languages, each lab's inputs, its numbers, bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.i18n import catalogue, fmt_float
from steplab.labs import accumulation, memory, overfitting, token_weighting
from steplab.teaching.presets import presets
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan

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


@pytest.fixture(scope="module")
def lab_pages() -> dict[str, AppTest]:
    """Each lab opened by its link (`?lab=b`), in English: the tab that is open is the only lab computed."""
    return {key: run(lang="en", lab=key) for key in "abcd"}


# what each lab's tab shows when it is open: metric labels, charts, tables
SHOWN = {"a": (("labs.a.grad_diff",), 1, 1), "b": (("labs.b.old_diff", "labs.b.fixed_diff"), 1, 0),
         "c": (("labs.c.best", "labs.c.val_end"), 1, 1), "d": ((), 2, 2)}


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("lab", "abcd")
def test_every_lab_renders_when_its_tab_is_open_and_only_then(lab, lang):
    at = run(lang=lang, lab=lab)
    strings = catalogue(lang)
    assert at.title[0].value == strings["page.labs.title"]
    assert [tab.label for tab in at.tabs] == [strings[f"labs.{k}.tab"] for k in "abcd"]
    keys, chart_count, table_count = SHOWN[lab]
    shown = metrics(at)
    for key in keys:
        assert strings[key] in shown
    others = {key for other, (names, _, _) in SHOWN.items() if other != lab for key in names}
    assert not [strings[key] for key in others if strings[key] in shown], "a lab off screen was computed"
    charts = at.get("plotly_chart")
    assert len(charts) == chart_count
    assert all(chart.proto.alt for chart in charts)  # every chart has a text alternative
    captions = {c.value for c in at.caption}
    assert all(chart.proto.alt in captions for chart in charts)  # ... also visible on the page
    assert len(at.table) == table_count
    assert at.query_params.get("lab", "a") == lab  # the URL names the open lab


def test_the_first_lab_opens_by_default_and_only_it_runs(english):
    assert "lab" not in english.query_params
    shown = metrics(english)
    assert "Largest gradient difference" in shown and "Lowest validation loss" not in shown


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
    at = run(lang="en", lab="b")
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


def test_lab_c_checkpoints_of_the_shared_setup_and_per_epoch(lab_pages):
    at = lab_pages["c"]
    result = overfitting.run(12, 0)
    assert metrics(at)["Lowest validation loss"] == fmt_float(result.val_loss[result.best_step - 1], 3)
    # the course setup saves at every save_steps (the chapter's 50, 100, 150), each moved onto the lab's epochs
    course = make_plan(presets()["course_default"].setup())
    saved = overfitting.setup_checkpoints(course, result.steps_per_epoch, result.steps)
    assert [c.setup_step for c in saved] == events(course, "save").steps()
    assert at.selectbox(key="labs_c_checkpoint").options == [
        f"step {c.step} · epoch {fmt_float(c.epoch, 2)} · validation {fmt_float(result.val_loss[c.step - 1], 3)}"
        f" · your step {c.setup_step}" for c in saved]
    at.radio(key="labs_c_source").set_value("epoch").run()
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 12
    at.selectbox(key="labs_c_checkpoint").set_value(24).run()
    assert any("step 24" in s.value for s in at.success)  # epoch 2's checkpoint is the best saved one
    at.slider(key="labs_c_epochs").set_value(4).run()
    assert not at.exception
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 4


def test_lab_c_checkpoints_follow_the_sidebar_setup():
    at = run(lang="en", save_strategy="epoch", lab="c")
    assert len(at.selectbox(key="labs_c_checkpoint").options) == 3  # epochs 1, 2, 3 of the course setup


def test_lab_d_model_and_measurement(lab_pages):
    at = lab_pages["d"]
    assert "27.92" in at.table[0].value.to_string() and "21.71" in at.table[0].value.to_string()
    fixed, per_sample = memory.chapter_line()
    assert f"F ≈ {fixed:.2f} GiB" in texts(at)
    at.select_slider(key="labs_d_batch").set_value(8).run()
    assert any(f"{memory.predicted_peak_gib(8):.2f} GiB" in w.value and "not measured" in w.value for w in at.warning)


def test_bad_lab_in_the_url_gives_a_notice():
    at = run(lang="en", lab="zz")
    assert any("lab=zz" in w.value for w in at.warning)
    assert not any("lab=" in w.value for w in run(lab="c").warning)


def _torch_only_inside_functions(path: Path, allowed: set[str]) -> None:
    """No top-level import of torch or of a lab module; from `steplab.labs` only the torch-free names `allowed`."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [getattr(node, "module", None) or ""] + [alias.name for alias in node.names]
            assert not any(n.startswith("torch") or n.startswith("steplab.labs.") for n in names), names
            if isinstance(node, ast.ImportFrom) and node.module == "steplab.labs":
                assert {alias.name for alias in node.names} <= allowed


def test_torch_is_imported_only_inside_functions():
    """The page may import torch (through the labs) only inside functions, never at import time."""
    _torch_only_inside_functions(PAGE, {"TOLERANCE"})


# --- the lab views (steplab_ui/views/labs/, one module per lab; their builders: tests/test_views_labs_<lab>.py) ------------

TORCH_FREE_LABS = {"TOLERANCE", "readings", "chapter_memory"}  # what a lab view may import at import time
VIEWS = sorted((ROOT / "steplab_ui" / "views" / "labs").glob("*.py"))


def test_the_views_import_torch_only_inside_functions():
    assert {path.stem for path in VIEWS} >= {"accumulation", "token_weighting", "overfitting", "memory"}
    for path in VIEWS:
        _torch_only_inside_functions(path, TORCH_FREE_LABS)
    modules = ", ".join(f"steplab_ui.views.labs.{path.stem}" for path in VIEWS if path.stem != "__init__")
    code = f"import sys, {modules}; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
