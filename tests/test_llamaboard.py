"""LlamaBoard's Train tab: the data file against the llamafactory 0.9.5 wheel's own code, the preview against what
that code builds, and the page (both languages, the preview and steps following the form, "use this setup")."""

from __future__ import annotations

import ast
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from steplab.i18n import catalogue
from steplab.io.llamaboard import (
    LlamaBoardError,
    board,
    board_run,
    default_form,
    preview_command,
    train_args,
    training_yaml,
)
from steplab.trainer.plan import make_plan
from tests.wheels import unpacked

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "llamaboard"
RELEASE = "llamafactory==0.9.5"
ALERTS = ("err_no_model", "err_no_path", "err_no_dataset", "err_no_output_dir", "err_json_schema",
          "err_no_reward_model")


# --- the wheel's files, parsed with ast ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def webui() -> Path:
    """`llamafactory/webui` of the 0.9.5 wheel (fetched once by `tests/wheels.py`; a skip says why it could not be)."""
    return unpacked(RELEASE) / "llamafactory" / "webui"


def _widgets(path: Path) -> dict[str, dict[str, Any]]:
    """Every `name = gr.X(...)` in a component file: kind, literal keyword values, line, row and accordion."""
    found: dict[str, dict[str, Any]] = {}

    def walk(body: list[ast.stmt], row: int | None, accordion: str | None) -> None:
        for node in body:
            if isinstance(node, ast.With):
                call = node.items[0].context_expr
                kind = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
                inner_row, inner_acc = row, accordion
                if kind == "Row":
                    inner_row = node.lineno
                elif kind == "Accordion" and node.items[0].optional_vars is not None:
                    inner_acc = node.items[0].optional_vars.id
                walk(node.body, inner_row, inner_acc)
            elif isinstance(node, ast.FunctionDef):
                walk(node.body, None, None)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                value = node.value
                if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                        and isinstance(value.func.value, ast.Name) and value.func.value.id == "gr"
                        and isinstance(target, ast.Name)):
                    kwargs = {}
                    for kw in value.keywords:
                        try:
                            kwargs[kw.arg] = ast.literal_eval(kw.value)
                        except ValueError:
                            kwargs[kw.arg] = ast.unparse(kw.value)
                    found[target.id] = {"widget": value.func.attr.lower(), "kwargs": kwargs, "line": node.lineno,
                                        "row": row, "accordion": accordion}

    walk(ast.parse(path.read_text(encoding="utf-8")).body, None, None)
    return found


def _dicts(path: Path) -> dict[str, dict[str, Any]]:
    """`LOCALES` and `ALERTS` of locales.py: key → {"line": n, lang: {part: (text, line)}}."""
    out: dict[str, dict[str, Any]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            table = out.setdefault(node.targets[0].id, {})
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                entry: dict[str, Any] = {"line": key.lineno}
                for lang_key, words in zip(value.keys, value.values, strict=True):
                    if not isinstance(words, ast.Dict):  # ALERTS: {"en": "text", ...}
                        entry[lang_key.value] = {"value": (ast.literal_eval(words), words.lineno)}
                        continue
                    entry[lang_key.value] = {part.value: (ast.literal_eval(text), text.lineno)
                                             for part, text in zip(words.keys, words.values, strict=True)}
                table[key.value] = entry
    return out


def _file_line(text: str) -> tuple[str, int]:
    path, line = text.rsplit(":", 1)
    return path, int(line)


def test_every_field_is_the_wheels_widget(webui):
    """Kind, default, slider range, choices, width, line, row and accordion: as train.py / top.py build them."""
    files = {"webui/components/train.py": _widgets(webui / "components" / "train.py"),
             "webui/components/top.py": _widgets(webui / "components" / "top.py")}
    facts = yaml.safe_load((ROOT / "steplab" / "io" / "llamaboard.yaml").read_text(encoding="utf-8"))["fields"]
    assert len(facts) > 40
    for name, fact in facts.items():
        path, line = _file_line(fact["source"])
        widget = files[path][name]
        assert (widget["line"], widget["widget"]) == (line, fact["widget"]), name
        assert _file_line(fact["row"]) == (path, widget["row"]), name
        assert fact.get("accordion") == widget["accordion"], name
        kwargs = widget["kwargs"]
        for key in ("minimum", "maximum", "step", "scale", "multiselect"):
            assert fact.get(key) == kwargs.get(key), (name, key)
        if "default_from" not in fact:  # a literal value= (or none at all, for a checkbox: False)
            expected = kwargs.get("value", False if fact["widget"] == "checkbox" else None)
            assert fact["default"] == expected, name
        if isinstance(kwargs.get("choices"), list):
            assert fact["choices"] == kwargs["choices"], name
    # the few defaults that are names in the code, checked against what those names hold
    assert files["webui/components/train.py"]["training_stage"]["kwargs"]["value"] == "stages[0]"
    assert facts["dataset_dir"]["default"] == "data"
    assert 'DEFAULT_DATA_DIR = "data"' in (webui / "common.py").read_text(encoding="utf-8").splitlines()[40]


def test_training_stages_and_methods_are_the_wheels(webui):
    constants = (webui.parent / "extras" / "constants.py").read_text(encoding="utf-8")
    values = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(constants).body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in ("TRAINING_STAGES", "METHODS")}
    fields = board().fields
    assert fields["training_stage"].facts["stages"] == values["TRAINING_STAGES"]
    assert list(fields["training_stage"].choices) == list(values["TRAINING_STAGES"])
    assert fields["training_stage"].default == next(iter(values["TRAINING_STAGES"]))
    assert list(fields["finetuning_type"].choices) == values["METHODS"]


def test_every_label_and_info_is_llamaboards_own(webui):
    """Labels and infos in both languages, and the lines they stand on in locales.py."""
    tables = _dicts(webui / "locales.py")
    locales = tables["LOCALES"]
    data = yaml.safe_load((ROOT / "steplab" / "io" / "llamaboard.yaml").read_text(encoding="utf-8"))
    for name, fact in data["fields"].items():
        entry = locales[name]
        assert _file_line(fact["locale"]) == ("webui/locales.py", entry["line"]), name
        for part in ("label", "info"):
            if part not in entry["en"]:
                assert part not in fact, (name, part)
                continue
            for lang in ("zh", "en"):
                assert (fact[part][lang], fact[f"{part}_lines"][lang]) == entry[lang][part], (name, part, lang)
    for name, accordion in data["accordions"].items():
        assert accordion["label"] == {lang: locales[name][lang]["label"][0] for lang in ("zh", "en")}
        assert _file_line(accordion["locale"])[1] == locales[name]["line"]
    button = data["preview_button"]
    assert button["label"] == {lang: locales["cmd_preview_btn"][lang]["value"][0] for lang in ("zh", "en")}
    for key in ALERTS:  # LlamaBoard's refusals: its own words open StepLab's message
        for lang in ("zh", "en"):
            assert catalogue(lang)[f"llamaboard.{key}"].startswith(tables["ALERTS"][key][lang]["value"][0]), key


def test_the_labels_the_course_names():
    labels = {name: f.label["zh"] for name, f in board().fields.items()}
    assert [labels[n] for n in ("batch_size", "gradient_accumulation_steps", "max_samples", "val_size",
                                "logging_steps", "save_steps", "warmup_steps", "cutoff_len")] == [
        "批处理大小", "梯度累积", "最大样本数", "验证集比例", "日志间隔", "保存间隔", "预热步数", "截断长度"]


# --- the preview: StepLab's engine against the wheel's own functions ---------------------------------------------


def _function(source: str, name: str, cls: str | None = None) -> str:
    tree = ast.parse(source)
    nodes = tree.body
    if cls is not None:
        nodes = next(n for n in nodes if isinstance(n, ast.ClassDef) and n.name == cls).body
    node = next(n for n in nodes if isinstance(n, ast.FunctionDef) and n.name == name)
    return textwrap.dedent(ast.get_source_segment(source, node))


class _Manager:
    """The Runner's `manager`: an element id stands for its element (the data is keyed by id)."""

    @staticmethod
    def get_elem_by_id(elem_id: str) -> str:
        return elem_id


class _Logger:
    @staticmethod
    def warning_rank0(*_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def llamaboard_code(webui):
    """`_parse_train_args` (webui/runner.py:126-290), `gen_cmd` and `save_cmd`'s dump (webui/common.py), run as
    the wheel has them: llamafactory itself cannot be imported here (it needs gradio, peft, ...), so the functions
    are taken out of its files and given the names they use (constants read from extras/constants.py)."""
    common = (webui / "common.py").read_text(encoding="utf-8")
    runner = (webui / "runner.py").read_text(encoding="utf-8")
    constants = (webui.parent / "extras" / "constants.py").read_text(encoding="utf-8")
    names: dict[str, Any] = {"json": json, "os": os, "Any": Any, "logger": _Logger()}
    for node in ast.parse(constants).body + ast.parse(common).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in (
                "TRAINING_STAGES", "PEFT_METHODS", "DEFAULT_CACHE_DIR", "DEFAULT_SAVE_DIR"):
            names[node.targets[0].id] = ast.literal_eval(node.value)
    names.update(load_config=lambda: {"path_dict": {}}, is_torch_npu_available=lambda: False,
                 MULTIMODAL_SUPPORTED_MODELS=set(), calculate_pixels=int)
    for function in ("get_save_dir", "_clean_cmd", "gen_cmd"):
        exec(_function(common, function), names)  # noqa: S102 - the wheel's own code, read from its file
    exec(_function(runner, "_parse_train_args", "Runner"), names)  # noqa: S102

    class Runner:
        manager = _Manager()

    def run(form: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
        data = _gradio_data({**default_form(), **form})
        args = names["_parse_train_args"](Runner(), data)
        return args, names["gen_cmd"](args), yaml.safe_dump(names["_clean_cmd"](args))

    return run


def _gradio_data(form: dict[str, Any]) -> dict[str, Any]:
    """The form as LlamaBoard's components hand it to the runner: by element id, sliders as JSON numbers (a
    whole number arrives as an int), the top bar's other controls at their defaults (webui/components/top.py)."""
    fields = board().fields
    data: dict[str, Any] = {"top.model_name": form["model_name"], "top.model_path": form["model_path"],
                            "top.finetuning_type": form["finetuning_type"], "top.template": form["template"],
                            "top.rope_scaling": "none", "top.booster": "auto", "top.checkpoint_path": None,
                            "top.quantization_bit": "none", "train.use_galore": False, "train.use_apollo": False,
                            "train.use_badam": False, "train.use_swanlab": False}
    for name, value in form.items():
        if fields[name].facts["source"].startswith("webui/components/train.py"):
            if fields[name].widget == "slider" and float(value).is_integer():
                value = int(value)
            data[f"train.{name}"] = value
    return data


CHANGED_FORMS = [
    {},
    {"batch_size": 4},
    {"batch_size": 4.0, "gradient_accumulation_steps": 2, "num_train_epochs": "2", "learning_rate": "1e-4"},
    {"val_size": 0.1, "save_steps": 50},
    {"compute_type": "fp16", "neftune_alpha": 5.0, "warmup_steps": 10, "logging_steps": 10},
    {"compute_type": "fp32", "packing": True, "neat_packing": True, "max_samples": "500"},
    {"finetuning_type": "full", "training_stage": "Pre-Training", "dataset": ["c4_demo"]},
    {"finetuning_type": "freeze", "freeze_extra_modules": "embed_tokens"},
    {"training_stage": "DPO", "dataset": ["dpo_en_demo"], "pref_beta": 0.2, "pref_loss": "orpo"},
    {"extra_args": '{"optim": "adamw_torch", "per_device_train_batch_size": 8, "max_steps": 40}'},
    {"ds_stage": "3", "ds_offload": True, "use_llama_pro": True, "lora_rank": 16, "use_pissa": True},
    {"lora_dropout": 0.05, "loraplus_lr_ratio": 16.0, "lora_target": "", "report_to": "tensorboard"},
]


@pytest.mark.parametrize("changes", CHANGED_FORMS, ids=lambda c: ",".join(c) or "default")
def test_preview_is_what_llamaboards_code_builds(llamaboard_code, changes):
    args, command, written = llamaboard_code(changes)
    mine = train_args({**default_form(), **changes})
    assert mine == args
    assert list(mine) == list(args)  # the command lists the keys in this order
    assert f"```bash\n{preview_command(mine)}\n```" == command
    assert training_yaml(mine) == written


def test_default_preview_matches_the_recorded_one():
    """Without the wheel: the default form's YAML as LlamaBoard's code wrote it (tests/data/llamaboard/)."""
    expected = (DATA / "default_training_args.yaml").read_text(encoding="utf-8")
    body = "".join(line for line in expected.splitlines(keepends=True) if not line.startswith("#"))
    assert training_yaml(train_args(default_form())) == body


# --- the engine's own behaviour --------------------------------------------------------------------------------


def test_default_form_gives_the_steps_of_the_demo_datasets():
    run = board_run(default_form())
    plan = make_plan(run.setup)
    assert run.setup.num_samples == 91 + 999  # identity + alpaca_en_demo, the catalogue's demo sizes
    assert (run.setup.per_device_train_batch_size, run.setup.gradient_accumulation_steps) == (2, 8)
    assert (run.setup.logging_steps, run.setup.save_steps, run.setup.world_size) == (5, 100, 1)
    assert plan.micro_batches_per_epoch == 545
    assert plan.max_steps == 3 * plan.num_update_steps_per_epoch
    assert all(note.key != "config_io.note.no_world_size" for note in run.notes)


def test_val_size_and_devices_change_the_steps():
    base = make_plan(board_run(default_form()).setup)
    split = board_run({**default_form(), "val_size": 0.1, "device_count": 2})
    assert split.args["eval_steps"] == split.args["save_steps"] == 100
    assert split.setup.world_size == 2 and split.setup.num_samples < 1090
    assert make_plan(split.setup).max_steps < base.max_steps


def test_unknown_dataset_needs_rows_then_counts():
    form = {**default_form(), "dataset": ["my_data"]}
    assert board_run(form).setup is None
    assert board_run(form, {"my_data": 400}).setup.num_samples == 400


@pytest.mark.parametrize(("changes", "code", "field"), [
    ({"dataset": []}, "llamaboard.err_no_dataset", "dataset"),
    ({"model_path": ""}, "llamaboard.err_no_path", "model_path"),
    ({"extra_args": "{optim: adamw}"}, "llamaboard.err_json_schema", "extra_args"),
    ({"extra_args": "[1]"}, "llamaboard.extra_args_not_object", "extra_args"),
    ({"learning_rate": "fast"}, "llamaboard.not_a_number", "learning_rate"),
    ({"max_samples": "1e5"}, "llamaboard.not_whole", "max_samples"),
    ({"batch_size": 5000}, "llamaboard.out_of_range", "batch_size"),
    ({"training_stage": "PPO"}, "llamaboard.err_no_reward_model", "training_stage"),
])
def test_what_llamaboard_would_refuse(changes, code, field):
    with pytest.raises(LlamaBoardError) as caught:
        train_args({**default_form(), **changes})
    assert (caught.value.code, caught.value.field) == (code, field)
    assert caught.value.message("zh") != caught.value.message("en")


# --- the page ------------------------------------------------------------------------------------------------


def _page(**params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "llamaboard.py"), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _total(at: AppTest, lang: str) -> str:
    return {m.label: m.value for m in at.metric}[catalogue(lang)["card.total_steps"]]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_renders_llamaboards_labels(lang):
    at = _page(lang=lang)
    labels = {widget.label for kind in (at.number_input, at.text_input, at.selectbox, at.multiselect, at.checkbox)
              for widget in kind}
    fields = board().fields
    for name in ("batch_size", "gradient_accumulation_steps", "max_samples", "val_size", "logging_steps",
                 "save_steps", "warmup_steps", "cutoff_len", "learning_rate"):
        assert fields[name].label[lang] in labels, name
    assert any(block.value.startswith("llamafactory-cli train") for block in at.code)
    assert any(board().preview_button["label"][lang] in header.value for header in at.subheader)
    assert _total(at, lang) == f"{make_plan(board_run(default_form()).setup).max_steps:,}"


def test_batch_size_changes_the_preview_and_the_steps():
    at = _page(lang="en")
    before_code, before_total = at.code[0].value, _total(at, "en")
    at.number_input(key="lb_batch_size").set_value(4).run()
    assert "--per_device_train_batch_size 4 " in at.code[0].value and at.code[0].value != before_code
    assert "per_device_train_batch_size: 4\n" in at.code[1].value
    expected = make_plan(board_run({**default_form(), "batch_size": 4}).setup).max_steps
    assert _total(at, "en") == f"{expected:,}" != before_total


def test_use_this_setup_reaches_the_shared_setup():
    at = _page(lang="en")
    at.number_input(key="lb_gradient_accumulation_steps").set_value(4).run()
    button = next(b for b in at.button if b.label == catalogue("en")["llamaboard.apply"])
    button.click().run()
    assert not at.exception
    assert at.session_state["gradient_accumulation_steps"] == 4
    assert at.session_state["per_device_train_batch_size"] == 2
    assert at.session_state["num_samples"] == 1090
    assert at.session_state["save_steps"] == 100
    assert at.query_params["gradient_accumulation_steps"] == "4"


def test_bad_values_get_a_message_not_a_traceback():
    at = _page(lang="zh")
    at.text_input(key="lb_learning_rate").set_value("fast").run()
    assert not at.exception
    assert any("float()" in error.value and "学习率" in error.value for error in at.error)
    at.text_input(key="lb_learning_rate").set_value("5e-5").run()
    at.multiselect(key="lb_dataset").set_value([]).run()
    assert any("请选择数据集。" in error.value for error in at.error)


def test_pretraining_asks_for_the_sample_count():
    """Packed pre-training blocks cannot be counted from rows: the page says so and takes the count instead."""
    at = _page(lang="en")
    at.selectbox(key="lb_training_stage").set_value("Pre-Training").run()
    assert at.checkbox(key="lb_packing").value  # LlamaBoard's change_stage turns packing on for pt
    at.multiselect(key="lb_dataset").set_value(["c4_demo"]).run()
    assert any(w.value == catalogue("en")["llamaboard.cannot_count"] for w in at.warning)
    at.number_input(key="lb_num_samples").set_value(3000).run()
    expected = make_plan(board_run({**default_form(), "training_stage": "Pre-Training", "dataset": ["c4_demo"],
                                    "packing": True}, num_samples=3000).setup).max_steps
    assert _total(at, "en") == f"{expected:,}"


def test_a_yaml_steplab_cannot_read_names_the_extra_arguments():
    at = _page(lang="en")
    at.text_input(key="lb_extra_args").set_value('{"val_size": "x"}').run()
    assert not at.exception
    assert any(e.value.startswith("StepLab cannot read the YAML LlamaBoard would write") for e in at.error)
