"""The dataset stage against real LLaMA-Factory runs, the real `datasets` split, and LLaMA-Factory's own code."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.dataset.errors import DatasetError
from steplab.dataset.files import MAX_DISK_FILE_BYTES
from steplab.dataset.funnel import dataset_funnel
from steplab.dataset.load import funnel_from_files, funnel_from_rows
from steplab.dataset.settings import data_settings
from steplab.dataset.split import held_out, split_order
from steplab.dataset.tokens import Tokenizer, greedy_packs, infer_seqlen, templates
from tests.wheels import unpacked

RUNS = Path(__file__).parent / "data" / "llamafactory-runs"
REAL = {run["case"]: run for run in json.loads((RUNS / "real-runs.json").read_text())["runs"]}
CASES = sorted(path.stem for path in (RUNS / "configs").glob("*.yaml"))


def config(case: str) -> dict:
    return yaml.safe_load((RUNS / "configs" / f"{case}.yaml").read_text())


@pytest.mark.parametrize("case", CASES)
def test_each_real_run_gives_the_logged_example_counts(case):
    funnel = funnel_from_files(config(case), RUNS)
    real = REAL[case]["real"]
    assert funnel.train_examples == real["num_examples"]
    assert funnel.eval_examples == real["eval_num_examples"]
    dropped = sum(s.rows_in - s.rows_out for s in funnel.stages if s.code == "invalid")
    assert dropped == real["dropped_invalid"]
    assert funnel.stages[0].rows_in == REAL[case]["raw_rows"]


def test_every_stage_is_said_with_its_numbers_in_both_languages():
    funnel = funnel_from_files(config("b_val01"), RUNS)
    split = next(s for s in funnel.stages if s.code == "split")
    assert (split.rows_in, split.rows_out) == (1000, 900)
    for lang in ("zh", "en"):
        assert "100" in split.note.get(lang) and "900" in split.note.get(lang) and "1,000" in split.note.get(lang)
    assert funnel.assumptions and "42" in funnel.assumptions[0].en and "42" in funnel.assumptions[0].zh
    record = funnel.record()
    assert [r["stage"] for r in record] == ["rows", "split"] and record[1]["rows_out"] == 900


def test_split_and_drop_fall_on_both_sides_as_in_the_real_split():
    """100 rows with 10 null outputs and val_size 0.2: the reference says 72 train and 18 eval."""
    values = {**config("e_filter"), "val_size": 0.2}
    funnel = funnel_from_files(values, RUNS)
    assert (funnel.train_examples, funnel.eval_examples) == (72, 18)


def test_max_samples_cuts_each_dataset_on_its_own():
    values = {**config("a_course"), "dataset": "alp1000, alp100", "max_samples": 500}
    funnel = funnel_from_files(values, RUNS)
    assert funnel.train_examples == 600
    assert [s.code for s in funnel.stages] == ["rows", "max_samples", "rows", "merge"]


def test_row_counts_alone_follow_the_row_rules_and_say_what_they_cannot_know():
    funnel = funnel_from_rows({"dataset": "a,b", "max_samples": 700, "val_size": 0.07}, {"a": 1000, "b": 100})
    assert (funnel.train_examples, funnel.eval_examples) == (743, 57)  # 0.07 × 800 = 56.00000000000001: ceil 57
    assert any(m.key == "dataset.assume.rows_valid" for m in funnel.assumptions)
    packed = funnel_from_rows({"dataset": "a", "packing": True}, {"a": 10})
    assert packed.estimate is not None and packed.estimate.train == (1, 10)  # ten rows fit one pack, or ten
    with pytest.raises(DatasetError) as caught:
        funnel_from_rows({"dataset": "a", "stage": "pt"}, {"a": 10})
    assert caught.value.code == "dataset.needs_tokens" and "token" in caught.value.message("en")
    with pytest.raises(DatasetError, match="--dataset-rows b=ROWS"):
        funnel_from_rows({"dataset": "a,b"}, {"a": 10})


def test_floating_point_fraction_rounds_up_like_datasets():
    assert held_out(0.07, 100) == 8  # 0.07 × 100 = 7.000000000000001
    assert held_out(0.1, 1000) == 100 and held_out(250, 1000) == 250 and held_out(0, 10) == 0
    for bad in (1.0, 1000):
        with pytest.raises(DatasetError):
            held_out(bad, 1000)


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(3, 400), data=st.data())
def test_split_counts_and_order_are_those_of_datasets_train_test_split(rows, data):
    datasets = pytest.importorskip("datasets", reason="the real `datasets` library is the oracle for the split")
    fraction = data.draw(st.floats(0.001, 0.999) | st.integers(2, rows - 1).map(float), label="val_size")
    test_size = int(fraction) if fraction > 1 else fraction
    try:
        real = datasets.Dataset.from_dict({"i": list(range(rows))}).train_test_split(test_size=test_size, seed=42)
    except ValueError:
        with pytest.raises(DatasetError):
            held_out(fraction, rows)
        return
    n_test = held_out(fraction, rows)
    assert n_test == len(real["test"])
    train, evaluation = split_order(rows, n_test, 42)
    assert list(train) == real["train"]["i"] and list(evaluation) == real["test"]["i"]


def _llamafactory_functions(*names: str) -> dict:
    """Functions of LLaMA-Factory 0.9.5's own `processor_utils.py`, read from the real wheel and run as they are."""
    source = (unpacked("llamafactory==0.9.5") / "llamafactory/data/processor/processor_utils.py").read_text()
    tree = ast.parse(source)
    wanted = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    namespace: dict = {"bisect": __import__("bisect")}
    exec(compile(ast.Module(wanted, []), "processor_utils.py", "exec"), namespace)  # noqa: S102 - the oracle's code
    return namespace


def test_packing_and_truncation_match_llamafactorys_own_functions():
    real = _llamafactory_functions("search_for_fit", "greedy_knapsack", "infer_seqlen")
    rng = random.Random(7)
    for _ in range(300):
        capacity = rng.randint(8, 300)
        lengths = [rng.randint(1, capacity) for _ in range(rng.randint(0, 60))]
        assert greedy_packs(list(lengths), capacity) == len(real["greedy_knapsack"](list(lengths), capacity))
        source, target, cutoff = rng.randint(0, 400), rng.randint(0, 400), rng.randint(1, 300)
        assert infer_seqlen(source, target, cutoff) == real["infer_seqlen"](source, target, cutoff)


def test_token_counts_are_those_of_the_transformers_tokenizer():
    transformers = pytest.importorskip("transformers", reason="transformers' own tokenizer is the oracle")
    folder = RUNS / "assets" / "tiny-qwen2"
    # the class its tokenizer_config.json names (AutoTokenizer of 5.24 would pick Qwen2Tokenizer by model type)
    reference = transformers.TokenizersBackend.from_pretrained(str(folder))
    ours = Tokenizer.from_folder(folder, templates()["qwen"])
    words = [f"w{i}" for i in range(0, 240, 7)] + ["<|im_start|>", "<|im_end|>", "\n", "system", "user", ",", "!"]
    rng = random.Random(3)
    for _ in range(200):
        text = "".join(rng.choice(words) + rng.choice(["", " ", "\n"]) for _ in range(rng.randint(0, 30)))
        assert ours.count(text) == len(reference.encode(text, add_special_tokens=False)), text
    assert ours.eos_token == "<|im_end|>"  # the qwen template replaces the eos token with its stop word


def test_hostile_dataset_files_get_a_clear_message(tmp_path):
    (tmp_path / "data").mkdir()
    info = {"s": {"file_name": "s.json"}, "shape": {"file_name": "shape.json"}, "big": {"file_name": "big.json"},
            "gone": {"file_name": "gone.json"}, "hub": {"hf_hub_url": "org/set"}, "odd": {"file_name": "x.xlsx"},
            "lines": {"file_name": "lines.jsonl"}}
    (tmp_path / "data" / "dataset_info.json").write_text(json.dumps(info))
    (tmp_path / "data" / "s.json").write_text('"just a string"')
    (tmp_path / "data" / "shape.json").write_text(json.dumps([{"instruction": "a", "output": "b"}, 3, ["x"],
                                                              {"instruction": "c", "output": None}]))
    with open(tmp_path / "data" / "big.json", "wb") as handle:
        handle.truncate(MAX_DISK_FILE_BYTES + 1)  # sparse: refused by its size, never read
    (tmp_path / "data" / "x.xlsx").write_text("")
    (tmp_path / "data" / "lines.jsonl").write_text('{"instruction": "a", "output": "b"}\n{oops\n')

    def fails(name: str) -> DatasetError:
        with pytest.raises(DatasetError) as caught:
            funnel_from_files({"dataset": name, "dataset_dir": "data"}, tmp_path)
        for lang in ("zh", "en"):
            assert caught.value.message(lang)
        return caught.value

    assert fails("s").code == "dataset.not_rows"
    big = fails("big")
    assert big.code == "dataset.too_large" and f"{MAX_DISK_FILE_BYTES + 1:,}" in big.message("en")
    assert fails("gone").code == "dataset.missing_file" and "gone.json" in fails("gone").message("zh")
    assert fails("hub").code == "dataset.remote"
    assert fails("odd").code == "dataset.file_type"
    assert fails("nope").code == "dataset.undefined"
    assert fails("lines").values["line"] == 2
    assert fails("shape").code == "dataset.not_rows"  # `datasets` cannot read rows that are not objects


def test_settings_are_checked_by_the_field_rules():
    from steplab.errors import SetupError

    with pytest.raises(SetupError) as caught:
        data_settings({"cutoff_len": 0})
    assert caught.value.field == "cutoff_len"
    assert data_settings({"stage": "pt"}).packs and data_settings({"stage": "pt"}).sequence_cap == 2048
    assert data_settings({"packing": True, "cutoff_len": 128}).sequence_cap == 127
    assert data_settings({"neat_packing": True}).processor == "packed"
    with pytest.raises(SetupError):
        data_settings({"stage": "kto"})


def test_a_dataset_for_another_stage_is_refused_as_llamafactory_does():
    with pytest.raises(DatasetError) as caught:
        funnel_from_files({**config("a_course"), "dataset": "pair200"}, RUNS)
    assert caught.value.code == "dataset.ranking_mismatch"


def test_no_examples_left_is_an_error_not_a_zero():
    with pytest.raises(DatasetError) as caught:
        dataset_funnel(data_settings({"dataset": "a"}), {"a": [{"instruction": "x", "input": "", "output": None}]})
    assert caught.value.code == "dataset.no_examples"


def uploads(case: str) -> dict[str, bytes]:
    """What a user uploads on the page for one run: the YAML's datasets, dataset_info.json and the tokenizer."""
    data, model = RUNS / "assets" / "data", RUNS / "assets" / "tiny-qwen2"
    files = {path.name: path.read_bytes() for path in data.iterdir()}
    files.update({name: (model / name).read_bytes() for name in ("tokenizer.json", "tokenizer_config.json")})
    return files


@pytest.mark.parametrize("case", CASES)
def test_uploaded_files_give_the_same_counts_as_the_folder(case):
    from steplab.dataset.load import funnel_from_uploads

    funnel = funnel_from_uploads(config(case), uploads(case))
    assert (funnel.train_examples, funnel.eval_examples) == (REAL[case]["real"]["num_examples"],
                                                             REAL[case]["real"]["eval_num_examples"])


def test_uploads_say_which_file_is_missing_and_typed_rows_fill_in():
    from steplab.dataset.load import funnel_from_uploads

    files = uploads("b_val01")
    del files["alp1000.json"]
    with pytest.raises(DatasetError) as caught:
        funnel_from_uploads(config("b_val01"), files)
    assert caught.value.code == "dataset.upload_missing" and "alp1000.json" in caught.value.message("zh")
    typed = funnel_from_uploads(config("b_val01"), {}, {"alp1000": 1000})
    assert (typed.train_examples, typed.eval_examples) == (900, 100)
    with pytest.raises(DatasetError) as caught:
        funnel_from_uploads(config("b_val01"), {})
    assert caught.value.code == "dataset.upload_info"
    estimated = funnel_from_uploads(config("d_packing"), {k: v for k, v in uploads("d_packing").items()
                                                          if k != "tokenizer.json"})
    assert estimated.estimate is not None and estimated.train_examples == estimated.estimate.train[1]
    assert any(m.key == "dataset.no_tokenizer_file" and "`tokenizer.json`" in m.en for m in estimated.assumptions)
    # tokenizer.json alone (no tokenizer_config.json, which says bos_token): a range that names the missing file
    alone = funnel_from_uploads(config("d_packing"), {k: v for k, v in uploads("d_packing").items()
                                                      if k != "tokenizer_config.json"})
    assert alone.estimate is not None and alone.estimate.train[0] < alone.estimate.train[1]
    assert any(m.key == "dataset.no_tokenizer_file" and "`tokenizer_config.json` is not" in m.en
               for m in alone.assumptions)
    full = funnel_from_uploads(config("d_packing"), uploads("d_packing"))
    assert full.estimate is None and alone.estimate.train[0] <= full.train_examples <= alone.estimate.train[1]


def test_pt_without_packing_keeps_one_example_per_row():
    funnel = funnel_from_files({**config("h_pt"), "packing": False}, RUNS)
    assert funnel.train_examples == 1600 and not data_settings({"stage": "pt", "packing": False}).needs_tokens


def test_pt_with_packing_said_in_the_yaml_cuts_blocks_one_token_shorter():
    default = funnel_from_files(config("h_pt"), RUNS)
    explicit = funnel_from_files({**config("h_pt"), "packing": True}, RUNS)
    blocks = next(s for s in explicit.stages if s.code == "pt_blocks")
    assert "63" in blocks.note.en and explicit.train_examples >= default.train_examples


def test_the_integer_one_holds_out_one_row_and_one_point_zero_is_refused():
    assert funnel_from_rows({"dataset": "a", "val_size": 1}, {"a": 10}).eval_examples == 1
    with pytest.raises(DatasetError) as caught:
        funnel_from_rows({"dataset": "a", "val_size": 1.0}, {"a": 10})
    assert "1.0" in caught.value.message("en")


@pytest.mark.parametrize("case", ["d_packing", "h_pt"])
def test_without_a_tokenizer_the_estimate_is_a_range_that_holds_the_real_count(case):
    """The model folder gone: an upper-end estimate, labelled, whose range holds what LLaMA-Factory made."""
    funnel = funnel_from_files({**config(case), "model_name_or_path": "no-model-here"}, RUNS)
    real = REAL[case]["real"]["num_examples"]
    low, high = funnel.estimate.train
    assert low <= real <= high and funnel.train_examples == high and low < high
    for lang in ("zh", "en"):
        note = funnel.estimate.note.get(lang)
        assert f"{low:,}" in note and f"{high:,}" in note
    assert funnel.stages[-1].code.endswith(("packing", "pt_blocks")) and funnel.stages[-1].rows_out == high
    exact = funnel_from_files(config(case), RUNS)
    assert exact.estimate is None and low <= exact.train_examples <= high


def test_the_pt_upper_bound_rests_on_no_row_having_more_tokens_than_bytes_plus_two():
    """The bound's premise, checked with the real tokenizer on every row the runs used."""
    from steplab.dataset.catalog import DatasetAttr
    from steplab.dataset.examples import convert
    from steplab.dataset.tokens import pretrain_tokens

    tokenizer = Tokenizer.from_folder(RUNS / "assets" / "tiny-qwen2", templates()["qwen"])
    rows = json.loads((RUNS / "assets" / "data" / "alp1600.json").read_text())
    for row in rows:
        example = convert(row, DatasetAttr("alp1600", None))
        assert pretrain_tokens(tokenizer, example) <= len(example.prompt[0][1].encode("utf-8")) + 2
        assert pretrain_tokens(tokenizer, example) >= 1


def test_a_template_llamafactory_lacks_is_refused_as_its_run_stops():
    # moss_vl: named by LLaMA-Factory's newer examples, absent from 0.9.5 (StepLab's table is all of 0.9.5's)
    for values in ({**config("d_packing"), "template": "moss_vl"}, {**config("a_course"), "template": "moss_vl"}):
        with pytest.raises(DatasetError) as caught:
            funnel_from_files(values, RUNS)
        assert caught.value.code == "dataset.template_missing" and "moss_vl" in caught.value.message("zh")


def test_a_model_folder_zip_counts_as_its_files():
    """/config takes a zip of the model folder: its tokenizer.json and tokenizer_config.json count as if uploaded."""
    import io
    import zipfile

    from steplab.dataset.load import funnel_from_uploads
    from steplab_ui.views.funnel import data_files

    files = uploads("d_packing")
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        for name in ("tokenizer.json", "tokenizer_config.json"):
            archive.writestr(f"tiny-qwen2/{name}", files.pop(name))
    given = data_files([*files.items(), ("tiny-qwen2.zip", packed.getvalue())], 10**8)
    assert funnel_from_uploads(config("d_packing"), given).train_examples == \
        funnel_from_uploads(config("d_packing"), uploads("d_packing")).train_examples
