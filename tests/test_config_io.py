"""Config import/export: LLaMA-Factory's own examples, edge case 20, hostile input, and the round trip."""

from __future__ import annotations

import codecs
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from golden import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wheels import unpacked

import steplab.io.safe_yaml as config_io
from steplab.dataset.catalog import KNOWN_DATASET_ROWS
from steplab.errors import SetupError
from steplab.io.config_read import ConfigImport, read_config
from steplab.io.config_write import write_config
from steplab.io.safe_yaml import MAX_BYTES, ConfigError
from steplab.trainer.fields import TRAINING_ARGUMENT_FIELDS
from steplab.trainer.schedules import SCHEDULER_TYPES
from steplab.trainer.setup import DEFAULTS, PROFILE_IDS, STRATEGIES, setup_from_mapping

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))
SFT = EXAMPLES / "train_lora__qwen3_lora_sft.yaml"
CJK = re.compile(r"[\u4e00-\u9fff]")


def sft_text(**extra: object) -> str:
    """The LLaMA-Factory SFT example, with `max_samples` replaced or keys appended (as YAML text)."""
    text = SFT.read_text(encoding="utf-8")
    if "max_samples" in extra:
        text = text.replace("max_samples: 1000", f"max_samples: {extra.pop('max_samples')}")
    for key, value in extra.items():
        text += f"\n{key}: {value}\n"
    return text


def assert_bilingual(error: ConfigError) -> None:
    en, zh = error.message("en"), error.message("zh")
    assert en and zh and en != zh
    assert CJK.search(zh), zh
    assert "Traceback" not in en and "Traceback" not in zh


# --------------------------------------------------------------------------- the 54 real examples

def test_all_54_examples_are_there():
    assert len(EXAMPLE_FILES) == 54


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_imports_and_makes_a_valid_setup(path):
    result = read_config(path.read_text(encoding="utf-8"), num_samples=1000)
    assert isinstance(result, ConfigImport)
    assert result.flavour == "llamafactory"
    assert result.values["num_samples"] == 1000
    assert not result.needs_num_samples
    setup, unknown = setup_from_mapping(result.values)
    assert unknown == []
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert setup.per_device_train_batch_size == raw["per_device_train_batch_size"]
    assert setup.gradient_accumulation_steps == raw.get("gradient_accumulation_steps", 1)
    assert setup.learning_rate == float(raw["learning_rate"])
    # every key is accounted for, once
    assert sorted(result.used + result.ignored) == sorted(str(k) for k in raw)
    assert "model_name_or_path" in result.ignored


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_example_imports_without_a_sample_count(path):
    result = read_config(path.read_text(encoding="utf-8"))
    if result.needs_num_samples:
        assert "num_samples" not in result.values
        assert result.notes
    else:
        assert result.sample_source == "datasets"
        assert result.values["num_samples"] > 0
        assert result.sample_lines


def test_ray_example_gives_world_size():
    result = read_config((EXAMPLES / "train_lora__qwen3_lora_sft_ray.yaml").read_text(encoding="utf-8"))
    assert result.values["world_size"] == 4
    assert "ray_num_workers" in result.used


def test_deepspeed_and_commented_eval_notes():
    result = read_config((EXAMPLES / "train_lora__qwen3_lora_sft_ds3.yaml").read_text(encoding="utf-8"))
    notes = " ".join(note.en for note in result.notes)
    assert "explicit values that disagree make the Trainer refuse at start" in notes
    assert "Evaluation is commented out" in notes
    assert "deepspeed" in result.ignored
    assert "world_size" not in result.values


# --------------------------------------------------------------------------- edge case 20


def test_edge_20_sample_count_1090():
    result = read_config(sft_text())
    assert result.values["num_samples"] == 1090
    assert result.sample_source == "datasets"
    assert not result.needs_num_samples
    setup, _ = setup_from_mapping(result.values)
    assert (setup.per_device_train_batch_size, setup.gradient_accumulation_steps) == (1, 8)
    assert (setup.num_train_epochs, setup.learning_rate, setup.lr_scheduler_type) == (3.0, 1e-4, "cosine")
    assert setup.warmup_ratio == 0.1
    assert (setup.logging_steps, setup.save_steps) == (10, 500)
    lines = [line.en for line in result.sample_lines]
    assert lines[:2] == ["`identity`: 91 rows (the count given; its rows were not read).",
                         "`alpaca_en_demo`: 999 rows (the count given; its rows were not read)."]
    assert "91 + 999 = 1,090 rows: the 2 datasets are concatenated." in lines  # max_samples 1,000 cuts neither
    assert lines[-1] == "N = 1,090 training samples"
    assert result.funnel is not None and result.funnel.train_examples == 1090
    assert any("built-in" in note.en.lower() for note in result.notes)
    assert all(CJK.search(line.zh) for line in result.sample_lines)
    for key in ("dataset", "max_samples", "per_device_train_batch_size", "warmup_ratio"):
        assert key in result.used
    for key in ("model_name_or_path", "lora_rank", "bf16", "template", "output_dir"):
        assert key in result.ignored


def test_edge_20_max_samples_500():
    result = read_config(sft_text(max_samples=500))
    assert result.values["num_samples"] == 591


def test_edge_20_val_size_ratio():
    result = read_config(sft_text(val_size=0.1))
    assert result.values["num_samples"] == 981
    assert any("⌈0.1 × 1,090⌉ = 109" in line.en and "981" in line.en for line in result.sample_lines)


def test_edge_20_val_size_absolute():
    assert read_config(sft_text(val_size=100)).values["num_samples"] == 990
    assert read_config(sft_text(val_size=100.0)).values["num_samples"] == 990  # > 1 → int(val_size)
    assert read_config(sft_text(val_size=100.7)).values["num_samples"] == 990


def test_edge_20_val_size_float_one_is_an_error():
    with pytest.raises(ConfigError) as info:
        read_config(sft_text(val_size="1.0"))
    assert info.value.code == "config_io.data_key" and dict(info.value.text.values)["problem"].key == "dataset.val_fraction"
    assert "a fraction must be below `1`" in info.value.message("en")
    assert info.value.line == len(sft_text().splitlines()) + 2
    assert_bilingual(info.value)


def test_edge_20_val_size_integer_one_holds_out_one_row():
    # Reading of the code: 1 is not > 1, so LLaMA-Factory passes the int 1 to train_test_split,
    # where an int test_size is an absolute count.
    result = read_config(sft_text(val_size=1))
    assert result.values["num_samples"] == 1089
    assert any("whole number, so it counts rows" in line.en for line in result.sample_lines)


def test_val_size_with_eval_dataset_is_an_error():
    with pytest.raises(ConfigError) as info:
        read_config(sft_text(val_size=0.1, eval_dataset="alpaca_en_demo"))
    assert info.value.code == "config_io.val_size_with_eval_dataset"
    assert "Cannot specify `val_size` if `eval_dataset` is not None." in info.value.message("en")


def test_val_size_too_large_for_the_data():
    with pytest.raises(ConfigError) as info:
        read_config(sft_text(val_size=5000))
    assert info.value.code == "config_io.data_key" and "no training row out of 1,090" in info.value.message("en")
    assert info.value.line == len(sft_text().splitlines()) + 2  # the val_size line


def test_val_size_rounding_is_ceil_of_the_float_product():
    rows = {"a": 1001}
    text = "dataset: a\nval_size: 0.07\n"
    # 0.07 * 1001 = 70.07 → ceil → 71 validation rows
    assert read_config(text, dataset_rows=rows).values["num_samples"] == 1001 - 71


# --------------------------------------------------------------------------- sample count sources


def test_dataset_rows_override_builtin_sizes_and_names_are_stripped():
    result = read_config("dataset: identity , mine\nmax_samples: 50\n", dataset_rows={"identity": 40, "mine": 70})
    assert result.values["num_samples"] == 40 + 50
    assert not any("built-in" in note.en.lower() for note in result.notes)


def test_unknown_dataset_needs_num_samples():
    result = read_config("dataset: mllm_demo,identity\nper_device_train_batch_size: 2\n")
    assert result.needs_num_samples
    assert "num_samples" not in result.values
    assert any("mllm_demo" in note.en for note in result.notes)


def test_num_samples_precedence():
    text = "dataset: identity\nnum_samples: 500\n"
    assert read_config(text, num_samples=7).values["num_samples"] == 7
    result = read_config(text)
    assert result.values["num_samples"] == 500
    assert result.sample_source == "yaml"
    assert read_config("dataset: identity\n").values["num_samples"] == 91


def test_known_rows_only_from_the_reference():
    assert KNOWN_DATASET_ROWS == {"identity": 91, "alpaca_en_demo": 999, "dpo_en_demo": 300, "c4_demo": 300}


def test_bad_dataset_rows():
    with pytest.raises(ConfigError) as info:
        read_config("dataset: a\n", dataset_rows={"a": -3})
    assert info.value.code == "config_io.bad_dataset_rows"


def test_interleaving_without_probabilities_is_counted_like_datasets_interleaves():
    """One row of each dataset in turn: under stops with the shorter (identity, 91 rows), over goes to the longer."""
    under = read_config("dataset: identity,alpaca_en_demo\nmix_strategy: interleave_under\n")
    over = read_config("dataset: identity,alpaca_en_demo\nmix_strategy: interleave_over\n")
    assert not under.needs_num_samples and under.values["num_samples"] == 2 * 91
    assert over.values["num_samples"] == 2 * 999


def test_streaming_rules():
    with pytest.raises(ConfigError) as info:
        read_config("dataset: identity\nstreaming: true\n")
    assert info.value.code == "config_io.streaming_max_steps"
    assert "Please specify max_steps in streaming mode." in info.value.message("en")
    with pytest.raises(ConfigError):
        read_config("dataset: identity\nstreaming: true\nmax_steps: 100\nmax_samples: 10\n")
    result = read_config("dataset: identity\nstreaming: true\nmax_steps: 100\n")
    assert not result.needs_num_samples and result.sample_source == "streaming"  # max_steps × the batch (the plan)
    assert result.values["streaming"] is True
    assert any("streaming" in note.en for note in result.notes)


# --------------------------------------------------------------------------- packing


def test_pretrain_from_row_counts_alone_needs_the_sample_count_and_says_why():
    result = read_config((EXAMPLES / "train_lora__qwen3_lora_pretrain.yaml").read_text(encoding="utf-8"))
    assert result.needs_num_samples and "num_samples" not in result.values
    assert any(note.key == "dataset.needs_tokens" for note in result.notes)


def test_sft_packing_from_row_counts_is_the_labelled_upper_end():
    text = "stage: sft\ndataset: identity\npacking: true\ncutoff_len: 1025\n"
    result = read_config(text)
    assert result.values["num_samples"] == 91 and result.funnel.estimate.train == (1, 91)
    assert result.sample_lines[-1].en.startswith("N ≤ 91")
    assert any(note.key == "dataset.assume.estimate" for note in result.notes)


def test_a_stage_the_dataset_stage_does_not_model_needs_the_sample_count():
    result = read_config("stage: kto\ndataset: identity\n")
    assert result.needs_num_samples and any(note.key == "dataset.stage_unmodelled" for note in result.notes)
    assert read_config("stage: kto\ndataset: identity\n", num_samples=50).values["num_samples"] == 50


# --------------------------------------------------------------------------- plain HF YAML


def test_plain_hf_yaml_with_old_eval_name():
    text = (
        "output_dir: out\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 8\n"
        "evaluation_strategy: steps\neval_steps: 0.2\nnum_train_epochs: 2\nbf16: true\n"
        "per_device_eval_batch_size: 16\n"
    )
    result = read_config(text, num_samples=1600)
    assert result.flavour == "hf"
    assert result.values["eval_strategy"] == "steps"
    assert "evaluation_strategy" in result.used
    assert "per_device_eval_batch_size" in result.used  # a field: GRPO checks it; it counts nothing here
    notes = " ".join(note.en for note in result.notes)
    assert "per_device_eval_batch_size does not affect training steps" in notes
    assert "evaluation_strategy" in notes
    setup, _ = setup_from_mapping(result.values)
    assert (setup.eval_strategy, setup.eval_steps, setup.num_train_epochs) == ("steps", 0.2, 2.0)


def test_missing_keys_get_trainer_defaults():
    result = read_config("per_device_train_batch_size: 2\n", num_samples=10)
    for name in TRAINING_ARGUMENT_FIELDS:
        assert name in result.values
    setup, _ = setup_from_mapping(result.values)
    assert setup.learning_rate == DEFAULTS.learning_rate
    assert setup.lr_scheduler_type == DEFAULTS.lr_scheduler_type


def test_wrong_type_is_the_setup_error_naming_the_field():
    result = read_config('per_device_train_batch_size: "four"\n', num_samples=100)
    with pytest.raises(SetupError) as info:
        setup_from_mapping(result.values)
    assert info.value.field == "per_device_train_batch_size"
    assert info.value.message("zh") != info.value.message("en")


# --------------------------------------------------------------------------- hostile input


def test_malformed_yaml_names_the_line():
    with pytest.raises(ConfigError) as info:
        read_config("stage: sft\nper_device_train_batch_size: 4\nlearning_rate: 1e-4: oops\nnum_train_epochs: 3\n")
    assert info.value.code == "config_io.syntax"
    assert info.value.line == 3
    assert "line 3" in info.value.message("en")
    assert "第 3 行" in info.value.message("zh")
    assert_bilingual(info.value)


def test_unclosed_bracket_names_a_line():
    with pytest.raises(ConfigError) as info:
        read_config("a: 1\nb: [1, 2\n")
    assert info.value.code == "config_io.syntax"
    assert info.value.line in (2, 3)


def test_python_tags_are_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    for text in (
        f'!!python/object/apply:os.system ["touch {marker}"]',
        f'learning_rate: !!python/object/apply:os.system ["touch {marker}"]\n',
        'x: !!python/name:os.system ""\n',
    ):
        with pytest.raises(ConfigError) as info:
            read_config(text)
        assert info.value.code == "config_io.unsafe_tag"
        assert "!!python/" in info.value.message("en")
        assert_bilingual(info.value)
    assert not marker.exists()


def refuse_building(monkeypatch) -> None:
    """Make building the document fail the test: a limit must fire in the event scan, before anything
    is expanded or constructed."""
    def no_building(*args, **kwargs):
        raise AssertionError("the limit must fire before the document is built")

    monkeypatch.setattr(config_io.yaml, "safe_load", no_building)


def test_billion_laughs_is_rejected_before_it_is_expanded(monkeypatch):
    refuse_building(monkeypatch)
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        name, prev = chr(97 + i), chr(96 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(ConfigError) as info:
        read_config("\n".join(lines) + "\n")
    assert info.value.code in ("config_io.too_many_nodes", "config_io.too_many_aliases")
    assert_bilingual(info.value)


def test_many_aliases_are_rejected():
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * 500) + "]\n"
    with pytest.raises(ConfigError) as info:
        read_config(text)
    assert info.value.code == "config_io.too_many_aliases"


def test_self_referencing_alias_is_rejected():
    with pytest.raises(ConfigError) as info:
        read_config("a: &a [1, *a]\n")
    assert info.value.code == "config_io.recursive_alias"


# The scan's parser: libyaml where PyYAML has it (6.0.4's stops by itself at 1,000 levels, 6.0.3's and
# older do not) and the pure-Python one (every release, and what PyYAML uses without libyaml).
SCAN_LOADERS = [pytest.param(yaml.SafeLoader, id="pure-python")] + (
    [pytest.param(yaml.CSafeLoader, id="libyaml")] if getattr(yaml, "__with_libyaml__", False) else [])
BLOCK_NESTING = "".join(" " * level + f"k{level}:\n" for level in range(200)) + " " * 200 + "1\n"


DEEP = {
    "flow-sequences": ("[" * 10_000 + "]" * 10_000, 1),
    "flow-mappings": ("a: " + "{b: " * 10_000 + "1" + "}" * 10_000, 1),
    "block-mappings": (BLOCK_NESTING, config_io.MAX_DEPTH + 1),
}
# The lowest PyYAML release pyproject.toml allows, the last whose libyaml has no nesting limit, the first with one.
PYYAML_RELEASES = ["6.0.1", "6.0.3", "6.0.4"]
_CODES_UNDER_ANOTHER_PYYAML = """
import json, sys, yaml
from steplab.io.config_read import read_config\nfrom steplab.io.safe_yaml import ConfigError
texts = json.load(sys.stdin)
found = {}
for name, text in texts.items():
    try:
        read_config(text)
        found[name] = None
    except ConfigError as error:
        found[name] = [error.code, error.line]
print(json.dumps({"version": yaml.__version__, "libyaml": yaml.__with_libyaml__, "found": found}))
"""


@pytest.mark.parametrize("release", PYYAML_RELEASES)
def test_the_same_refusals_under_every_pyyaml_release_allowed(release):
    """Run the hostile texts under that release of PyYAML (its wheel on sys.path, libyaml included)."""
    root = Path(__file__).resolve().parents[1]
    texts = {name: text for name, (text, _) in DEEP.items()} | {"syntax": "a: 1\nb: [1, 2\n"}
    done = subprocess.run([sys.executable, "-c", _CODES_UNDER_ANOTHER_PYYAML], input=json.dumps(texts),
                          capture_output=True, text=True, check=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(unpacked(f"PyYAML=={release}")),
                                                                             str(root)])})
    result = json.loads(done.stdout)
    assert (result["version"], result["libyaml"]) == (release, True)
    assert result["found"] == {**{name: ["config_io.too_deep", line] for name, (_, line) in DEEP.items()},
                               "syntax": ["config_io.syntax", result["found"]["syntax"][1]]}


@pytest.mark.parametrize("loader", SCAN_LOADERS)
@pytest.mark.parametrize("text, line", list(DEEP.values()), ids=list(DEEP))
def test_deep_nesting_is_refused_by_steplabs_own_limit(text, line, loader, monkeypatch):
    """StepLab's `too_deep` (with the line where nesting passed the limit), whichever parser or layer of
    PyYAML noticed first; and before the document is built."""
    monkeypatch.setattr(config_io, "_SCAN_LOADER", loader)
    refuse_building(monkeypatch)
    with pytest.raises(ConfigError) as info:
        read_config(text)
    assert info.value.code == "config_io.too_deep"
    assert info.value.line == line
    assert f"line {line}" in info.value.message("en") and f"第 {line} 行" in info.value.message("zh")
    assert_bilingual(info.value)


@pytest.mark.parametrize("loader", SCAN_LOADERS)
def test_a_syntax_error_is_still_a_syntax_error_with_either_parser(loader, monkeypatch):
    monkeypatch.setattr(config_io, "_SCAN_LOADER", loader)
    with pytest.raises(ConfigError) as info:
        read_config("a: 1\nb: [1, 2\n")
    assert info.value.code == "config_io.syntax"


def test_ten_megabytes_is_rejected_before_parsing(monkeypatch):
    def no_parsing(*args, **kwargs):
        raise AssertionError("the size cap must come before any YAML parsing")

    monkeypatch.setattr(config_io.yaml, "parse", no_parsing)
    monkeypatch.setattr(config_io.yaml, "safe_load", no_parsing)
    huge = 'a: "' + "x" * (10 * 1024 * 1024) + '"\n'
    for payload in (huge, huge.encode("utf-8")):
        with pytest.raises(ConfigError) as info:
            read_config(payload)
        assert info.value.code == "config_io.too_large"
        assert_bilingual(info.value)
        mb, size = MAX_BYTES // 2**20, f"{MAX_BYTES:,}"  # the limit, in the uploader's unit and in bytes
        assert f"{mb} MB ({size} bytes)" in info.value.message("en")
        assert f"{mb} MB（{size} 字节）" in info.value.message("zh")


def test_size_cap_is_in_bytes():
    text = "a: " + "é" * (MAX_BYTES // 2)  # fewer characters than the cap, more bytes
    with pytest.raises(ConfigError) as info:
        read_config(text)
    assert info.value.code == "config_io.too_large"


def test_random_binary_bytes():
    data = random.Random(20).randbytes(64 * 1024)
    with pytest.raises(ConfigError) as info:
        read_config(data)
    assert info.value.code == "config_io.not_utf8"
    assert_bilingual(info.value)


UNICODE_FILES = {  # how an editor may save the same YAML: with a byte-order mark, or none
    "utf-16-bom-le": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-bom-be": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-16-le": lambda text: text.encode("utf-16-le"),
    "utf-16-be": lambda text: text.encode("utf-16-be"),
    "utf-32-bom-le": lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
    "utf-32-bom-be": lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
    "utf-32-le": lambda text: text.encode("utf-32-le"),
    "utf-32-be": lambda text: text.encode("utf-32-be"),
    "utf-8-bom": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
}


@pytest.mark.parametrize("saved", list(UNICODE_FILES))
def test_utf16_and_utf32_files_are_read_like_utf8(saved):
    """Windows editors save "Unicode" as UTF-16 (with a byte-order mark, or none), some tools UTF-32: the same
    config, Chinese comments included (without a mark, the NUL bytes around the first character tell the encoding,
    as the YAML spec says)."""
    text = "# 学习率：余弦退火，预热一成\n" + SFT.read_text(encoding="utf-8")
    raw = UNICODE_FILES[saved](text)
    assert "学习" not in raw.decode("latin-1") and raw != text.encode("utf-8")  # really another encoding
    assert read_config(raw).values == read_config(text).values
    assert read_config(raw).values["per_device_train_batch_size"] == 1


def test_a_damaged_utf16_file_is_named_as_utf16_not_binary():
    """A UTF-16 file cut in the middle of a character: say it is UTF-16 and damaged, and to save it as UTF-8."""
    raw = codecs.BOM_UTF16_LE + "per_device_train_batch_size: 4\n".encode("utf-16-le")[:-1]
    with pytest.raises(ConfigError) as info:
        read_config(raw)
    assert info.value.code == "config_io.not_utf8"
    assert_bilingual(info.value)
    for lang in ("en", "zh"):
        said = info.value.message(lang)
        assert "UTF-16" in said and "UTF-8" in said and "binary" not in said and "二进制" not in said


def test_a_gbk_file_is_told_to_be_saved_as_utf8():
    """A Chinese Windows editor's default encoding (GBK) is neither UTF-8, UTF-16 nor UTF-32: say so and what to do."""
    with pytest.raises(ConfigError) as info:
        read_config("# 学习率\nper_device_train_batch_size: 4\n".encode("gbk"))
    assert info.value.code == "config_io.not_utf8"
    assert_bilingual(info.value)
    for lang in ("en", "zh"):
        said = info.value.message(lang)
        assert "GBK" in said and "UTF-8" in said and "UTF-16" in said and "UTF-32" in said


def test_utf8_bytes_and_bom_are_fine():
    result = read_config("\ufeffper_device_train_batch_size: 4\n".encode(), num_samples=8)
    assert result.values["per_device_train_batch_size"] == 4


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("- per_device_train_batch_size: 4\n- gradient_accumulation_steps: 2\n", "config_io.not_mapping"),
        ("just text\n", "config_io.not_mapping"),
        ("", "config_io.empty"),
        ("# only a comment\n", "config_io.empty"),
        ("a: 1\n---\nb: 2\n", "config_io.syntax"),
        ("a: *nowhere\n", "config_io.syntax"),
        ("a: 1\nb: \x00\n", "config_io.syntax"),
        ("a: " + "9" * 5000 + "\n", "config_io.bad_value"),
    ],
)
def test_other_bad_documents(text, code):
    with pytest.raises(ConfigError) as info:
        read_config(text)
    assert info.value.code == code
    assert_bilingual(info.value)


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


# --------------------------------------------------------------------------- write


def test_write_llamafactory_layout():
    setup, _ = setup_from_mapping({
        "num_samples": 1090, "per_device_train_batch_size": 1, "gradient_accumulation_steps": 8,
        "learning_rate": 1e-4, "lr_scheduler_type": "cosine", "warmup_ratio": 0.1, "logging_steps": 10,
        "world_size": 2, "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
    })
    text = write_config(setup.to_dict())
    assert "# num_samples: 1090  (StepLab:" in text
    assert "# world_size: 2  (StepLab:" in text
    assert "max_steps" not in text  # -1 is left out
    assert "save_steps" not in text  # equal to the Trainer default
    assert "num_train_epochs: 3.0" in text  # core keys always written
    doc = yaml.safe_load(text)
    assert set(doc) <= set(TRAINING_ARGUMENT_FIELDS)
    for name in ("num_samples", "world_size", "trainer", "limit_train_batches"):
        assert name not in doc
    assert doc["lr_scheduler_kwargs"] == {"min_lr_rate": 0.1}
    again = read_config(text)
    assert again.values["num_samples"] == 1090 and again.values["world_size"] == 2


def test_write_hf_flavour_is_flat_training_arguments():
    text = write_config({"num_samples": 100, "max_steps": 50, "eval_strategy": "steps", "eval_steps": 10},
                        flavour="hf")
    doc = yaml.safe_load(text)
    assert doc["max_steps"] == 50 and doc["eval_strategy"] == "steps"
    assert "###" not in text
    with pytest.raises(ValueError):
        write_config({}, flavour="toml")


def test_write_rejects_invalid_setups():
    with pytest.raises(SetupError):
        write_config({"per_device_train_batch_size": 0})


kwarg_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
)
positive_float = st.floats(min_value=0, max_value=1e5, allow_nan=False, allow_infinity=False)
interval = st.one_of(st.integers(min_value=0, max_value=10_000),
                     st.floats(min_value=0, max_value=1, exclude_max=True, allow_nan=False))
setups = st.fixed_dictionaries(
    {},
    optional={
        "num_samples": st.integers(min_value=0, max_value=10**9),
        "per_device_train_batch_size": st.integers(min_value=1, max_value=4096),
        "gradient_accumulation_steps": st.integers(min_value=1, max_value=1024),
        "world_size": st.integers(min_value=1, max_value=512),
        "num_train_epochs": positive_float,
        "max_steps": st.integers(min_value=-5, max_value=10**6),
        "learning_rate": st.floats(min_value=0, max_value=1, allow_nan=False),
        "lr_scheduler_type": st.sampled_from(SCHEDULER_TYPES),
        "lr_scheduler_kwargs": st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True), kwarg_values,
                                               max_size=3),
        "warmup_steps": interval,
        "warmup_ratio": st.one_of(st.none(), st.floats(min_value=0, max_value=1, allow_nan=False)),
        "eval_strategy": st.sampled_from(STRATEGIES),
        "eval_steps": st.one_of(st.none(), interval),
        "save_strategy": st.sampled_from(STRATEGIES),
        "save_steps": interval,
        "logging_strategy": st.sampled_from(STRATEGIES),
        "logging_steps": interval,
        "dataloader_drop_last": st.booleans(),
        "limit_train_batches": st.one_of(st.none(), st.floats(min_value=0, max_value=1, allow_nan=False),
                                         st.integers(min_value=2, max_value=10**6)),
        "trainer": st.sampled_from(PROFILE_IDS),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=setups, flavour=st.sampled_from(["llamafactory", "hf"]), lang=st.sampled_from(["en", "zh"]))
def test_round_trip(values, flavour, lang):
    setup, unknown = setup_from_mapping(values)
    assert unknown == []
    text = write_config(setup.to_dict(), flavour=flavour, lang=lang)
    result = read_config(text)
    assert not result.needs_num_samples
    again, unknown = setup_from_mapping(result.values)
    assert unknown == []
    assert again == setup
    assert write_config(again.to_dict(), flavour=flavour, lang=lang) == text


@pytest.mark.parametrize("flavour", ["llamafactory", "hf"])
def test_export_comments_follow_the_language(flavour):
    values = {"num_samples": 1600, "world_size": 2, "warmup_ratio": 0.1}
    english, chinese = (write_config(values, flavour=flavour, lang=lang) for lang in ("en", "zh"))
    comments = [[line for line in text.splitlines() if line.startswith("#")] for text in (english, chinese)]
    assert all(line.isascii() for line in comments[0])
    assert all(not line.isascii() for line in comments[1] if not line.startswith("###"))
    strip = [[line for line in text.splitlines() if not line.startswith("#")] for text in (english, chinese)]
    assert strip[0] == strip[1]  # keys and values do not depend on the language
    assert read_config(chinese).values == read_config(english).values


SCALARS = ["yes", "no", "on", "off", "~", "null", "1e5", "1.0e-5", "5e-5", "0o17", "017", "0x1f", "1_000", ".inf",
           "-.inf", ".nan", "2024-01-02", "2024-01-02 03:04:05", "'quoted'", '"a\\tb"', "+12", "-0", "1:30", "中文",
           "!!str 1", "!!float 3", "[1, {a: b}]", "{}", "|\n  kept\n  lines", ">\n  folded\n  text"]


@pytest.mark.parametrize("scalar", SCALARS)
def test_the_document_is_the_data_yaml_safe_load_reads(scalar):
    """The document is built with libyaml when PyYAML has it (8x faster on 1 MiB): the same data as
    `yaml.safe_load`, value for value, for YAML 1.1's odd scalars too (`yes`, `0o17`, `1e5`, `1:30`, dates)."""
    in_list = scalar.replace("\n", "\n  ")  # a block scalar's lines indented under the list item
    text = f"value: {scalar}\nlist:\n  - {in_list}\n"
    expected = yaml.safe_load(text)
    document, _ = config_io.load(text)
    if scalar == ".nan":
        assert all(v != v for v in (document["value"], document["list"][0]))
    else:
        assert document == expected and [type(v) for v in document.values()] == [type(v) for v in expected.values()]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=12), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12), min_size=1, max_size=8))
def test_any_plain_data_reads_as_yaml_safe_load_reads_it(data):
    """Dumped plain data, in Unicode and escaped: libyaml's build and `yaml.safe_load` read the same (a raw NEL,
    which PyYAML's dumper writes unescaped, reads back as a space in both)."""
    for unicode in (True, False):
        text = yaml.safe_dump(data, allow_unicode=unicode)
        document, key_lines = config_io.load(text)
        assert document == yaml.safe_load(text)
        assert set(key_lines) == {str(key) for key in document}


def test_steplab_fields_at_their_default_are_not_exported_and_others_are_said():
    from steplab.i18n import t

    plain = write_config({"num_samples": 100})
    assert "has_eval_dataset" not in plain and "streaming" not in plain and "# num_samples: 100" in plain
    for lang in ("en", "zh"):
        said = write_config({"num_samples": 100, "has_eval_dataset": False}, lang=lang)
        assert f"# has_eval_dataset: False  (StepLab{t(lang, 'export.colon')}" in said
        assert t(lang, "export.comment.has_eval_dataset") in said
