"""AppTest: the torch labs page (`app_pages/labs.py`) in both languages, each lab's inputs, its numbers, bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app import run as run_page

from steplab.i18n import catalogue, fmt_float, fmt_int, t
from steplab.labs import accumulation, chapter_memory, memory, overfitting, readings, token_weighting
from steplab.teaching.presets import presets
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.setup import setup_from_mapping
from steplab_ui import labs_view as view

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "app_pages" / "labs.py"
VIEW = ROOT / "steplab_ui" / "labs_view.py"


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


# --- the view: figures, tables and sentences built from the labs' results, without a Streamlit run -------

TORCH_FREE_LABS = {"TOLERANCE", "readings", "chapter_memory"}  # what labs_view may import at import time


def test_the_view_imports_torch_only_inside_functions():
    _torch_only_inside_functions(VIEW, TORCH_FREE_LABS)
    code = "import sys, steplab_ui.labs_view; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.fixture(scope="module")
def lab_results():
    """Each lab run once at the page's defaults (and lab C with its few epochs), straight from the engine."""
    unequal = tuple(token_weighting.parse_lengths(token_weighting.EXAMPLES["unequal"], 1))
    return {"a": accumulation.run(4, 8), "b": token_weighting.run(unequal, 1, seed=view.TOKEN_LAB_SEED),
            "c": overfitting.run(4, 0), "d": memory.measure_activations()}


def _trace(figure, name: str):
    return next(trace for trace in figure.data if trace.name == name)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_update_ratio_figure_draws_the_engines_ratios(lab_results, lang):
    result = lab_results["a"]
    figure = view.update_ratio_figure(result, lang)
    assert [trace.name for trace in figure.data] == ["SGD", "AdamW"]
    assert list(_trace(figure, "SGD").y) == [v.sgd_update_ratio for v in result.variants]
    assert list(_trace(figure, "AdamW").y) == [v.adamw_update_ratio for v in result.variants]
    axis = readings.log_axis([v.sgd_update_ratio for v in result.variants]
                             + [v.adamw_update_ratio for v in result.variants])
    assert list(figure.layout.yaxis.tickvals) == list(axis.ticks) and 1 in axis.ticks  # "the same" is a tick
    assert list(figure.layout.yaxis.range) == [axis.low, axis.high]
    sentence = view.update_ratio_sentence(result, lang)
    no_divide = result.variant("no_divide")
    assert view.ratio(no_divide.sgd_update_ratio) in sentence and view.ratio(no_divide.adamw_update_ratio) in sentence
    assert view.ratio(no_divide.sgd_update_ratio) == view.ratio(result.accumulation)  # 8.00×: GA times as far


def test_accumulation_parts_read_the_result(lab_results):
    result = lab_results["a"]
    assert "**4** × accumulation **8** = **32**" in view.accumulation_setup(result, "en")
    assert [card.value for card in view.accumulation_cards(result, "en")][0] == view.sci(
        result.variant("correct").grad_max_abs_diff)
    assert view.accumulation_verdict(result, "en").kind == "success"
    assert view.no_accumulation(result, "en") is None
    table = view.mistakes_table(result, "en")
    assert list(table.iloc[:, 1]) == ["1", "1", "1", "8"] and table.iloc[3, 2] == view.MISSING
    assert view.sci(0) == "0" and view.sci(4.2e-17) == "4.2e-17" and view.sci(0.0812) == "0.0812"
    assert view.ratio(8) == "8.00×" and view.ratio(1024) == "1,024×"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_token_weight_figure_draws_each_micro_batchs_weight(lab_results, lang):
    result = lab_results["b"]
    figure = view.token_weight_figure(result, lang)
    old, fixed = figure.data
    assert list(old.y) == readings.token_weights(result, fixed=False)
    assert list(fixed.y) == pytest.approx([1.0] * result.accumulation)  # the fix: every token its fair share
    assert [label.split(" ")[0] for label in old.x] == [str(j) for j in range(1, result.accumulation + 1)]
    assert all(f"({fmt_int(n)})" in label for label, n in zip(old.x, result.tokens_per_micro_batch, strict=True))
    sentence = view.token_weight_sentence(result, lang)
    shortest = result.tokens_per_micro_batch.index(min(result.tokens_per_micro_batch))
    assert fmt_float(readings.token_weights(result, fixed=False)[shortest], 2) in sentence
    assert view.token_verdict(result, lang).kind == "warning"  # unequal lengths: not the same run


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_loss_figure_draws_the_run_its_lowest_point_and_the_setups_checkpoints(lab_results, lang):
    result = lab_results["c"]
    strings = catalogue(lang)
    plan = make_plan(setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4,
                                         "gradient_accumulation_steps": 8, "num_train_epochs": 3,
                                         "save_strategy": "epoch"})[0])
    checkpoints, stop = view.setup_on_run(plan, result)
    assert [c.step for c in checkpoints] == [12, 24, 36] and stop == (3.0, 36)
    assert view.setup_on_run(None, result) == ([], None)
    figure = view.loss_figure(result, checkpoints, checkpoints[0], stop, lang)
    assert list(_trace(figure, strings["labs.c.series_train"]).y) == list(result.train_loss)
    assert list(_trace(figure, strings["labs.c.series_val"]).y) == list(result.val_loss)
    summary = readings.overfit_summary(result)
    best = _trace(figure, strings["labs.c.series_best"])
    assert (list(best.x), list(best.y)) == ([summary.best_step], [summary.best_val])
    saved = _trace(figure, strings["labs.c.series_checkpoint"])
    assert list(saved.y) == [result.val_loss[step - 1] for step in (12, 24, 36)]
    assert len(figure.layout.shapes) == result.epochs - 1 + 1  # the boundaries between epochs, and the stop
    assert figure.layout.annotations[0].text == t(lang, "labs.c.stop", epoch=fmt_float(3.0, 2))
    sentence = view.loss_sentence(result, lang)
    assert fmt_float(summary.best_val, 3) in sentence and fmt_float(summary.last_val, 3) in sentence
    table = view.epochs_table(result, lang)
    assert list(table.iloc[:, 1]) == result.epoch_ends
    verdict = view.checkpoint_verdict(result, checkpoints, readings.best_checkpoint(result, checkpoints), lang)
    assert verdict.kind == "success"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_memory_model_figure_draws_the_stated_line_and_the_choice(lang):
    strings = catalogue(lang)
    figure = view.memory_model_figure(8, lang)
    model = _trace(figure, strings["labs.d.series_model"])
    assert list(model.x) == list(chapter_memory.MICRO_BATCHES)
    assert list(model.y) == [memory.predicted_peak_gib(b) for b in chapter_memory.MICRO_BATCHES]
    measured = _trace(figure, strings["labs.d.series_measured"])
    assert sorted(measured.y) == sorted(r.peak_gib for r in memory.CHAPTER_RUNS)
    choice = _trace(figure, strings["labs.d.series_choice"])
    assert (list(choice.x), list(choice.y)) == ([8], [memory.predicted_peak_gib(8)])
    assert figure.layout.shapes[0].y0 == memory.V100_GIB
    sentence = view.memory_model_sentence(lang)
    fixed, per_sample = memory.chapter_line()
    large = chapter_memory.first_too_big()
    assert f"{fixed:.2f}" in sentence and f"{per_sample:.3f}" in sentence
    assert f"{memory.predicted_peak_gib(large):.2f}" in sentence


def test_micro_batch_verdicts_say_measured_fits_or_too_big():
    measured, fits, too_big = (view.micro_batch_verdict(b, "en") for b in (4, 1, 8))
    assert measured.kind == "info" and "27.92 GiB" in measured.text and "accumulation 8" in measured.text
    assert fits.kind == "info" and "accumulation 32" in fits.text and "not measured" in fits.text
    assert too_big.kind == "warning" and "accumulation 4" in too_big.text
    assert "32" in view.micro_batch_label("en")
    assert list(view.chapter_runs_table("en")["Effective batch"]) == [32, 32]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_activation_figure_draws_the_cpu_measurement(lab_results, lang):
    measurement = lab_results["d"]
    (trace,) = view.activation_figure(measurement, lang).data
    assert list(trace.x) == [p.batch_size for p in measurement.by_batch]
    assert list(trace.y) == [p.saved_bytes / 2**20 for p in measurement.by_batch]
    intercept, slope = measurement.batch_line()
    sentence = view.activation_sentence(measurement, lang)
    assert f"{slope / 2**20:.2f}" in sentence and f"{intercept / 2**10:.1f}" in sentence
    assert f"{measurement.by_batch[-1].batch_size} → {measurement.by_batch[-1].saved_bytes / 2**20:.2f} MiB" in sentence
    assert list(view.lengths_table(measurement, lang).iloc[:, 0]) == [p.sequence_length for p in measurement.by_length]
