"""The dataset stage's rules one by one, each against the real code that has it where one runs here.

The whole pipeline is held to LLaMA-Factory's own in `test_dataset_vs_llamafactory.py`; these tests pin each
rule to a small example, so a regression names the rule it broke, and they run without LLaMA-Factory's env.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steplab.dataset.catalog import DatasetAttr, read_info
from steplab.dataset.errors import DatasetError
from steplab.dataset.funnel import dataset_funnel
from steplab.dataset.load import funnel_from_files
from steplab.dataset.mixing import mix
from steplab.dataset.settings import data_settings
from steplab.dataset.shapes import fast_shapes, slow_shapes
from steplab.errors import TrainerRefusal
from steplab.i18n import fmt_int
from tests.dataset_cases import ROLES, alpaca_row, conversation_row

DATA = Path(__file__).parent / "data"
COURSE = DATA / "course-qwen3"


def sharegpt(*turns: str, system: str | None = None) -> dict:
    roles = {"h": "human", "g": "gpt", "o": "observation", "f": "function_call", "s": "system", "x": "bot"}
    messages = [{"from": "system", "value": system}] if system is not None else []
    call = json.dumps({"name": "f", "arguments": {}})
    return {"conversations": messages + [{"from": roles[t], "value": call if t == "f" else f"{t}{i}"}
                                         for i, t in enumerate(turns)]}


def attr(name: str = "d", **entry) -> DatasetAttr:
    return read_info(json.dumps({name: {"file_name": f"{name}.json", **entry}}), [name])[0]


SHAREGPT = {"formatting": "sharegpt", "columns": {"messages": "conversations"}}


def funnel(rows: list, values: dict | None = None, **entry):
    settings = data_settings({"dataset": "d", **(values or {})})
    return dataset_funnel(settings, {"d": pa.Table.from_pylist(rows)}, {"d": attr(**entry)})


def test_a_sharegpt_conversation_is_kept_when_it_ends_on_the_assistant():
    """LLaMA-Factory's converter drops an odd count of turns for sft ("Invalid message count"), keeps an even one."""
    rows = [sharegpt("h", "g"), sharegpt("h", "g", "h", "g", system="s"), sharegpt("h"), sharegpt("h", "g", "h"),
            sharegpt("g", "h"), sharegpt("h", "x"), sharegpt("h", "o"), sharegpt("h", "f", "o", "g")]
    result = funnel(rows, {"preprocessing_batch_size": 100}, **SHAREGPT)
    assert result.train_examples == 3  # h g; system + h g h g; h f o g (a function call answered by a tool)
    with pytest.raises(DatasetError) as caught:  # a function call that is not JSON stops LLaMA-Factory
        funnel([sharegpt("h", "g"), {"conversations": [{"from": "human", "value": "q"},
                                                       {"from": "function_call", "value": "f(1)"}]}], **SHAREGPT)
    assert caught.value.code == "dataset.would_fail" and caught.value.values["row"] == 2


def test_a_sharegpt_eval_dataset_is_counted_by_the_same_rule():
    rows = [sharegpt("h", "g")] * 5 + [sharegpt("h")]
    settings = data_settings({"dataset": "d", "eval_dataset": "e", "max_samples": 4})
    entry = {"formatting": "sharegpt", "columns": {"messages": "conversations"}}
    info = json.dumps({"d": {"file_name": "d.json", **entry}, "e": {"file_name": "e.json", **entry}})
    attrs = {a.name: a for a in read_info(info, ["d", "e"])}
    tables = {"d": pa.Table.from_pylist(rows[:5]), "e": pa.Table.from_pylist(rows[-3:])}
    result = dataset_funnel(settings, tables, attrs)
    assert (result.train_examples, result.eval_examples) == (4, 2)  # max_samples cuts the eval dataset too


def test_a_pairwise_sharegpt_conversation_ends_on_the_user():
    chosen, rejected = {"from": "gpt", "value": "yes"}, {"from": "gpt", "value": "no"}
    rows = [{**sharegpt("h"), "chosen": chosen, "rejected": rejected},
            {**sharegpt("h", "g", "h"), "chosen": chosen, "rejected": rejected},
            {**sharegpt("h", "g"), "chosen": chosen, "rejected": rejected}]
    entry = {**SHAREGPT, "ranking": True, "columns": {"messages": "conversations", "chosen": "chosen",
                                                      "rejected": "rejected"}}
    assert funnel(rows, {"stage": "dpo", "preprocessing_batch_size": 100}, **entry).train_examples == 2


def test_openai_messages_merge_tool_answers_and_count_like_llamafactory():
    tags = {"role_tag": "role", "content_tag": "content", "user_tag": "user", "assistant_tag": "assistant",
            "observation_tag": "tool", "system_tag": "system"}
    call = [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]
    rows = [{"messages": [{"role": "user", "content": "q", "tool_calls": None},
                          {"role": "assistant", "content": "", "tool_calls": call},
                          {"role": "tool", "content": "1", "tool_calls": None},
                          {"role": "tool", "content": "2", "tool_calls": None},
                          {"role": "assistant", "content": "a", "tool_calls": None}]},
            {"messages": [{"role": "user", "content": "q", "tool_calls": None}]}]
    result = funnel(rows, {"preprocessing_batch_size": 100}, formatting="openai", columns={"messages": "messages"},
                    tags=tags)
    assert result.train_examples == 1  # user, function call, the two tool answers as one, assistant


def test_a_missing_input_column_stops_llamafactory_and_steplab_says_which():
    with pytest.raises(DatasetError) as caught:
        funnel([{"instruction": "a", "output": "b"}])
    assert caught.value.code == "dataset.would_fail"
    assert "`input`" in caught.value.message("en") and "`input`" in caught.value.message("zh")


def test_a_map_batch_left_empty_stops_llamafactory():
    rows = [{"instruction": "a", "input": "", "output": "b"}] * 3 + [{"instruction": "a", "input": "", "output": None}]
    assert funnel(rows, {"preprocessing_batch_size": 2}).train_examples == 3
    with pytest.raises(DatasetError) as caught:
        funnel(rows, {"preprocessing_batch_size": 3})  # batches of 3 and 1: the second keeps nothing
    assert caught.value.code == "dataset.empty_batch" and caught.value.values["batch"] == 2
    from steplab.dataset.funnel import (
        _check_batches,  # the rule alone: a worker's shard may keep nothing at all
    )

    valid = np.array([False, False, True, True])
    _check_batches("train", valid, data_settings({"preprocessing_batch_size": 1, "preprocessing_num_workers": 2}))
    with pytest.raises(DatasetError):  # one worker: its batches 1 and 2 are emptied, 3 and 4 are not
        _check_batches("train", valid, data_settings({"preprocessing_batch_size": 1}))


def test_converter_shards_whose_columns_cannot_be_joined_stop_llamafactory():
    """`preprocessing_num_workers` splits the converter's map too: a share with no response beside one with."""
    rows = [{"instruction": "a", "input": "", "output": None}] * 2 + [{"instruction": "a", "input": "", "output": "b"}] * 2
    assert funnel(rows, {"preprocessing_num_workers": 1, "preprocessing_batch_size": 100}).train_examples == 2
    with pytest.raises(DatasetError) as caught:
        funnel(rows, {"preprocessing_num_workers": 2, "preprocessing_batch_size": 100})
    assert caught.value.code == "dataset.shards_differ" and caught.value.values["column"] == "_response"


def test_datasets_whose_converted_columns_cannot_be_aligned_are_refused():
    settings = data_settings({"dataset": "a,b", "preprocessing_batch_size": 100})
    good = pa.Table.from_pylist([{"instruction": "x", "input": "", "output": "y"}])
    answerless = pa.Table.from_pylist([{"instruction": "x", "input": "", "output": None}])
    with pytest.raises(DatasetError) as caught:
        dataset_funnel(settings, {"a": good, "b": answerless})
    assert caught.value.code == "dataset.features_differ" and caught.value.values["column"] == "_response"


def test_a_csv_with_empty_cells_drops_the_rows_whose_answer_is_empty(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "d.csv").write_text("instruction,input,output\na,,yes\nb,c,\nc,,\"\"\nd,,no\n")
    (tmp_path / "data" / "dataset_info.json").write_text(json.dumps({"d": {"file_name": "d.csv"}}))
    result = funnel_from_files({"dataset": "d", "dataset_dir": "data", "preprocessing_batch_size": 100}, tmp_path)
    assert result.train_examples == 2  # an empty cell and "" are both nulls to pandas, so no answer


def test_the_course_run_plans_as_the_real_run_logged():
    """The course's own YAML (qwen3 template, sharegpt files, a separate eval file) through the CLI."""
    done = subprocess.run([sys.executable, "-m", "steplab", "plan", "course.yaml"], cwd=COURSE, capture_output=True,
                          text=True, check=True)
    plan = json.loads(done.stdout)
    assert (plan["num_samples"], plan["num_eval_samples"], plan["max_steps"]) == (1600, 200, 150)
    assert plan["eval_at_steps"] == [50, 100, 150] and plan["save_at_steps"] == [50, 100, 150]
    assert plan["world_size"] == 1 and plan["world_size_source"] == "assumed"
    assert "world_size_assumed" in [w["code"] for w in plan["warnings"]]
    two = json.loads(subprocess.run([sys.executable, "-m", "steplab", "plan", "course.yaml", "--set", "world_size=2"],
                                    cwd=COURSE, capture_output=True, text=True, check=True).stdout)
    assert (two["world_size_source"], two["max_steps"]) == ("given", 75)
    assert "world_size_assumed" not in [w["code"] for w in two["warnings"]]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(lengths=st.lists(st.integers(1, 9), min_size=2, max_size=4), strategy=st.sampled_from(
    ["first_exhausted", "all_exhausted"]), weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_interleaving_takes_the_rows_datasets_takes(lengths, strategy, weighted, seed):
    datasets = pytest.importorskip("datasets", reason="`datasets` is the oracle for interleaving")
    probs = None
    if weighted:
        weights = np.arange(1, len(lengths) + 1, dtype=float)
        probs = list(weights / weights.sum())
    parts = [datasets.Dataset.from_dict({"s": [i] * n, "r": list(range(n))}) for i, n in enumerate(lengths)]
    real = datasets.interleave_datasets(parts, probabilities=probs, seed=seed, stopping_strategy=strategy)
    sources, rows = mix(lengths, strategy, probs, seed)
    assert sources.tolist() == real["s"] and rows.tolist() == real["r"]


def test_interleave_once_is_refused_as_datasets_refuses_it():
    with pytest.raises(DatasetError) as caught:
        mix([3, 4], "all_exhausted_without_replacement", None, 42)
    assert caught.value.code == "dataset.interleave_once"


@settings(max_examples=int(os.environ.get("STEPLAB_SHAPE_CASES", "150")), deadline=None,
          derandomize=not os.environ.get("STEPLAB_LF_RANDOM"))
@given(data=st.data(), formatting=st.sampled_from(["alpaca", "sharegpt"]), ranking=st.booleans())
def test_the_column_wise_count_equals_the_converter_row_by_row(data, formatting, ranking):
    """The fast shapes (Arrow and numpy) give the converter's shapes, suspect rows aside, on any table they take."""
    if formatting == "alpaca":
        rows = data.draw(st.lists(alpaca_row(ranking, flat=data.draw(st.booleans())), min_size=1, max_size=20))
        columns = {"prompt": "instruction", "query": "input", **({"chosen": "chosen", "rejected": "rejected"}
                                                                    if ranking else {"response": "output"})}
        if any("system" in row for row in rows):
            columns["system"] = "system"
        entry = {"columns": columns, "ranking": ranking}
    else:
        ranking = False  # pairwise sharegpt takes the converter's road
        rows = data.draw(st.lists(conversation_row("sharegpt", False), min_size=1, max_size=20))
        entry = {**SHAREGPT}
        if any("system" in row for row in rows):
            entry["columns"] = {"messages": "conversations", "system": "system"}
    table = pa.Table.from_pylist(rows)
    dataset = attr(**entry)
    fast = fast_shapes(table, dataset)
    try:
        slow = slow_shapes(table, dataset)
    except DatasetError:
        assert fast is None or formatting == "sharegpt"  # the converter fails: the fast count must not vouch for it
        return
    if fast is None:
        return
    assert fast.prompt.tolist() == slow.prompt.tolist() and fast.response.tolist() == slow.response.tolist()
    for column in ("_prompt", "_response", "_system", "_tools"):
        assert fast.features[column] == slow.features[column], column


def test_roles_table_of_the_generator_is_llamafactorys():
    assert ROLES["sharegpt"] == ("human", "gpt", "observation", "function_call", "system")  # DatasetAttr's defaults
    assert set(attr(**SHAREGPT).tags.values()) >= set(ROLES["sharegpt"])


def test_interleaving_counts_from_row_counts_alone():
    from steplab.dataset.load import funnel_from_rows

    under = funnel_from_rows({"dataset": "a,b", "mix_strategy": "interleave_under"}, {"a": 30, "b": 7})
    over = funnel_from_rows({"dataset": "a,b", "mix_strategy": "interleave_over"}, {"a": 30, "b": 7})
    assert (under.train_examples, over.train_examples) == (14, 60)
    drawn = funnel_from_rows({"dataset": "a,b", "mix_strategy": "interleave_under", "interleave_probs": "0.5,0.5"},
                             {"a": 30, "b": 7})
    assert drawn.train_examples == len(mix([30, 7], "first_exhausted", [0.5, 0.5], 42)[0])
    note = next(s for s in drawn.stages if s.code == "merge").note
    assert "42" in note.en and fmt_int(7) in note.zh and fmt_int(36) in note.en  # the range another seed gives


@settings(max_examples=120, deadline=None, derandomize=True)
@given(samples=st.integers(1, 300), batch=st.integers(1, 9), processes=st.integers(1, 4), drop_last=st.booleans())
def test_draws_per_epoch_are_what_accelerates_sampler_deals_out(samples, batch, processes, drop_last):
    """Samples drawn, drawn twice and never drawn per epoch, against accelerate's own `BatchSamplerShard`."""
    import torch
    from accelerate.data_loader import BatchSamplerShard

    from steplab.trainer.plan import make_plan
    from steplab.trainer.setup import setup_from_mapping

    sampler = torch.utils.data.BatchSampler(range(samples), batch, drop_last)
    if processes == 1:  # one process: accelerate hands the Trainer the plain batches, the last one short
        drawn = [i for batch_ in sampler for i in batch_]
    else:
        drawn = [i for rank in range(processes) for batch_ in BatchSamplerShard(sampler, processes, rank) for i in batch_]
    setup, _ = setup_from_mapping({"num_samples": samples, "per_device_train_batch_size": batch,
                                   "world_size": processes, "dataloader_drop_last": drop_last, "trainer": "hf-5"})
    try:
        facts = make_plan(setup).draws_per_epoch()
    except TrainerRefusal:  # no batch at all on a process: the Trainer refuses to start (its own test elsewhere)
        assert len(drawn) < processes * batch
        return
    assert facts["draws_per_epoch"] == len(drawn)
    assert facts["repeated_draws_per_epoch"] == len(drawn) - len(set(drawn))
    assert facts["never_drawn_per_epoch"] == samples - len(set(drawn))
