"""Generated LLaMA-Factory data setups: dataset files, `dataset_info.json` and the YAML's data keys (hypothesis).

A case is what a user hands `llamafactory-cli train`: one to three datasets of alpaca, sharegpt or OpenAI-style
rows (with system, tools and history columns, odd and even turn counts, wrong roles, nulls, empty strings,
numbers where text belongs, ranking rows), written as JSON, JSON Lines, CSV or Parquet, and the data keys of a
YAML (`max_samples`, `val_size`, `eval_dataset`, `num_samples`, `mix_strategy`, stages sft / rm / dpo / pt,
packing, `cutoff_len`, `preprocessing_batch_size`, `preprocessing_num_workers`). `write_case` puts it in a folder
the way `llamafactory-cli` finds it; `tests/test_dataset_vs_llamafactory.py` runs both pipelines on it.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

try:
    from tests.census_cases import seeded_census_keys
except ImportError:  # imported as a top-level module, with tests/ on the path
    from census_cases import seeded_census_keys  # type: ignore[no-redef]

TINY_MODEL = Path(__file__).parent / "data" / "llamafactory-runs" / "assets" / "tiny-qwen2"
COMMON_TEMPLATES = ["qwen", "qwen3", "qwen3_nothink", "llama3", "chatml", "empty", "default", "alpaca", "mistral",
                    "gemma", "glm4", "deepseek3", "llama2", "qwen3_5", "qwen2_vl"]
"""Templates the course and LLaMA-Factory's examples use; any other of the 121 is drawn now and then."""

WORDS = [f"w{i}" for i in range(0, 200, 7)] + ["hello", "世界", "a\nb", "  ", "<|im_end|>", "x,y"]
text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
maybe_text = st.one_of(text, text, text, st.just(""), st.none())


@dataclass
class Dataset:
    name: str
    formatting: str  # alpaca, sharegpt, openai
    ranking: bool
    file_type: str  # json, jsonl, csv, parquet
    rows: list[dict[str, Any]]
    entry: dict[str, Any] = field(default_factory=dict)
    parts: int = 1  # several files in a folder: the rows split in this many files


@dataclass
class Case:
    datasets: list[Dataset]
    config: dict[str, Any]

    def describe(self) -> str:
        lines = [json.dumps(self.config)]
        for d in self.datasets:
            lines.append(f"{d.name}: {d.formatting} ranking={d.ranking} {d.file_type} entry={json.dumps(d.entry)}")
            lines += ["  " + json.dumps(row, ensure_ascii=False) for row in d.rows[:40]]
        return "\n".join(lines)


@st.composite
def alpaca_row(draw, ranking: bool, flat: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"instruction": draw(maybe_text)}
    if draw(st.integers(0, 9)):
        row["input"] = draw(maybe_text)
    if ranking:
        row["chosen"] = draw(st.one_of(text, text, st.none()))
        row["rejected"] = draw(st.one_of(text, text, st.none()))
    else:
        row["output"] = draw(st.one_of(text, text, text, st.just(""), st.none()))
    if draw(st.integers(0, 4)) == 0:
        row["system"] = draw(maybe_text)
    if not flat and draw(st.integers(0, 5)) == 0:
        turns = draw(st.lists(st.tuples(text, text).map(list), max_size=2))
        row["history"] = turns if draw(st.integers(0, 3)) else None
    return row


ROLES = {"sharegpt": ("human", "gpt", "observation", "function_call", "system"),
         "openai": ("user", "assistant", "tool", "assistant", "system")}


@st.composite
def messages(draw, formatting: str, ranking: bool) -> list[dict[str, Any]]:
    user, assistant, observation, function, system = ROLES[formatting]
    role_key, content_key = ("from", "value") if formatting == "sharegpt" else ("role", "content")
    turns = draw(st.integers(0, 6))
    out = []
    if draw(st.integers(0, 3)) == 0:
        out.append({role_key: system, content_key: draw(text)})
    for index in range(turns):
        if draw(st.integers(0, 12)) == 0:
            role = draw(st.sampled_from([system, "bot", user, assistant]))  # sometimes wrong
        elif index % 2 == 0:
            role = observation if (draw(st.integers(0, 5)) == 0 and index) else user
        else:
            role = function if (formatting == "sharegpt" and draw(st.integers(0, 6)) == 0) else assistant
        content = draw(text) if draw(st.integers(0, 15)) else None
        if role == function and draw(st.integers(0, 4)):
            content = json.dumps({"name": draw(st.sampled_from(["get", "set"])), "arguments": {"x": draw(text)}})
        out.append({role_key: role, content_key: content})
    if ranking and out and draw(st.integers(0, 2)):
        out = out[: len(out) - (len(out) % 2 == 0)]  # mostly end on a user turn
    return out


@st.composite
def conversation_row(draw, formatting: str, ranking: bool) -> dict[str, Any]:
    column = "conversations" if formatting == "sharegpt" else "messages"
    row: dict[str, Any] = {column: draw(messages(formatting, ranking))}
    if ranking:
        role_key, content_key = ("from", "value") if formatting == "sharegpt" else ("role", "content")
        answer = ROLES[formatting][1]
        row["chosen"] = {role_key: answer, content_key: draw(text)}
        row["rejected"] = {role_key: draw(st.sampled_from([answer, answer, ROLES[formatting][0]])),
                           content_key: draw(text)}
    if draw(st.integers(0, 4)) == 0:
        row["system"] = draw(text)
    if draw(st.integers(0, 5)) == 0:
        row["tools"] = draw(st.sampled_from(TOOLS))
    return row


TOOLS = ["", json.dumps([{"name": "get", "description": "read", "parameters": {"type": "object", "properties": {
    "x": {"type": "string", "description": "what"}}, "required": ["x"]}}]), "[]", "not json"]


def _entry(formatting: str, ranking: bool, rows: list[dict[str, Any]], stage: str) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    present = set().union(*(row.keys() for row in rows)) if rows else set()
    if formatting != "alpaca":
        entry["formatting"] = formatting
    if ranking:
        entry["ranking"] = True
    if formatting == "alpaca":
        columns = {"prompt": "instruction", "query": "input"}
        if ranking:
            columns.update(chosen="chosen", rejected="rejected")
        else:
            columns["response"] = "output"
        if stage == "pt":
            columns = {"prompt": "instruction"}
        for extra in ("system", "history"):
            if extra in present:
                columns[extra] = extra
        entry["columns"] = columns
    else:
        column = "conversations" if formatting == "sharegpt" else "messages"
        columns = {"messages": column}
        if ranking:
            columns.update(chosen="chosen", rejected="rejected")
        for extra in ("system", "tools"):
            if extra in present:
                columns[extra] = extra
        entry["columns"] = columns
        if formatting == "openai":
            entry["tags"] = {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                             "assistant_tag": "assistant", "observation_tag": "tool", "function_tag": "function_call",
                             "system_tag": "system"}
    return entry


@st.composite
def dataset(draw, index: int, stage: str) -> Dataset:
    ranking = stage in ("rm", "dpo")
    formatting = draw(st.sampled_from(["alpaca", "alpaca", "sharegpt", "sharegpt", "openai"] if not ranking
                                      else ["alpaca", "sharegpt"]))
    file_type = draw(st.sampled_from(["json", "jsonl", "jsonl", "csv", "parquet"] if formatting == "alpaca"
                                     else ["json", "jsonl", "jsonl", "parquet"]))
    flat = file_type == "csv"
    size = draw(st.integers(1, 40))
    if formatting == "alpaca":
        rows = draw(st.lists(alpaca_row(ranking, flat), min_size=size, max_size=size))
    else:
        rows = draw(st.lists(conversation_row(formatting, ranking), min_size=size, max_size=size))
    entry = _entry(formatting, ranking, rows, stage)
    if draw(st.integers(0, 6)) == 0:
        entry["num_samples"] = draw(st.integers(1, 50))
    parts = draw(st.integers(2, 3)) if len(rows) > 3 and draw(st.integers(0, 7)) == 0 else 1
    return Dataset(f"ds{index}", formatting, ranking, file_type, rows, entry, parts)


@st.composite
def cases(draw, stages: tuple[str, ...] = ("sft", "sft", "sft", "rm", "dpo", "pt"), packing: bool | None = None) -> Case:
    stage = draw(st.sampled_from(stages))
    count = draw(st.integers(1, 3))
    sets = [draw(dataset(i, stage)) for i in range(count)]
    from steplab.dataset.templates import templates

    template = draw(st.one_of(st.sampled_from(COMMON_TEMPLATES), st.sampled_from(COMMON_TEMPLATES),
                              st.sampled_from(sorted(templates())), st.none()))
    config: dict[str, Any] = {"stage": stage, "cutoff_len": draw(st.integers(8, 160)),
                              "tokenizer": draw(st.sampled_from(["word", "byte"]))}
    if template is not None:
        config["template"] = template
    if draw(st.integers(0, 3)) == 0:
        config["enable_thinking"] = draw(st.sampled_from([True, False, None]))
    if draw(st.integers(0, 5)) == 0:
        config["mask_history"] = True
    if draw(st.integers(0, 7)) == 0:
        config["default_system"] = draw(st.sampled_from(["", "Be brief.", "你好\n"]))
    if draw(st.integers(0, 9)) == 0:
        config["tool_format"] = draw(st.sampled_from(["default", "qwen", "llama3", "glm4", "mistral"]))
    eval_sets: list[Dataset] = []
    if count > 1 and draw(st.integers(0, 3)) == 0:
        eval_sets, sets = sets[-1:], sets[:-1]
    config["dataset"] = ",".join(d.name for d in sets)
    if eval_sets:
        config["eval_dataset"] = eval_sets[0].name
        if draw(st.integers(0, 3)) == 0:
            config["eval_on_each_dataset"] = True
    elif draw(st.integers(0, 2)) == 0:
        config["val_size"] = draw(st.one_of(st.floats(0.01, 0.5).map(lambda v: round(v, 3)), st.integers(2, 6)))
    if draw(st.integers(0, 2)) == 0:
        config["max_samples"] = draw(st.integers(1, 30))
    if len(sets) > 1 and draw(st.integers(0, 2)) == 0:
        config["mix_strategy"] = draw(st.sampled_from(["interleave_under", "interleave_over"]))
        if draw(st.integers(0, 2)) == 0:
            weights = [draw(st.integers(1, 4)) for _ in sets]
            config["interleave_probs"] = ",".join(f"{w / sum(weights)!r}" for w in weights)
    wants_packing = packing if packing is not None else draw(st.integers(0, 3)) == 0
    if stage == "sft" and wants_packing:
        config["packing"] = True
        if draw(st.integers(0, 2)) == 0:
            config["neat_packing"] = True
    if stage == "pt" and draw(st.integers(0, 3)) == 0:
        config["packing"] = False
    if draw(st.integers(0, 1)):
        config["preprocessing_batch_size"] = draw(st.integers(2, 16))
    if draw(st.integers(0, 15)) == 0:
        config["preprocessing_num_workers"] = 2
    config.update(seeded_census_keys(repr(sorted(config.items())), llamafactory=True))  # LLaMA-Factory parses them
    return Case(sets + eval_sets, config)


def _write_rows(path: Path, rows: list[dict[str, Any]], file_type: str) -> None:
    if file_type == "json":
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    elif file_type == "jsonl":
        path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    elif file_type == "csv":
        import csv

        columns = list(dict.fromkeys(key for row in rows for key in row))
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if row.get(c) is None else row[c] for c in columns])
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)


def tokenizer_folders(root: Path) -> dict[str, Path]:
    """The two tokenizer folders cases name: tiny-qwen2's word-level one and a byte-level BPE (newlines count)."""
    from tests.tiny_tokenizers import byte_level, word_level

    folders = {"word": root / "word", "byte": root / "byte"}
    if not (folders["word"] / "tokenizer.json").is_file():
        word_level(folders["word"])
        byte_level(folders["byte"])
    return folders


def write_case(case: Case, folder: Path, models: dict[str, Path] | None = None) -> dict[str, Any]:
    """The case's files under `folder` (data/, model/); returns the YAML mapping, paths relative to `folder`.

    `models` maps the case's tokenizer kind to a shared folder; without it tiny-qwen2's files are copied."""
    data = folder / "data"
    data.mkdir(parents=True)
    info = {}
    for d in case.datasets:
        if d.parts > 1:  # a folder of files: LLaMA-Factory reads every file in it, in os.listdir order
            file_name = d.name
            (data / file_name).mkdir()
            size = -(-len(d.rows) // d.parts)
            for part in range(d.parts):
                _write_rows(data / file_name / f"part{part}.{d.file_type}", d.rows[part * size:(part + 1) * size],
                            d.file_type)
        else:
            file_name = f"{d.name}.{d.file_type}"
            _write_rows(data / file_name, d.rows, d.file_type)
        info[d.name] = {"file_name": file_name, **d.entry}
    (data / "dataset_info.json").write_text(json.dumps(info), encoding="utf-8")
    config = dict(case.config)
    kind = config.pop("tokenizer", "word")
    if models is not None:
        model = str(models[kind])
    else:
        model = "model"
        (folder / "model").mkdir()
        for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
            shutil.copy(TINY_MODEL / name, folder / "model" / name)
    return {"model_name_or_path": model, "dataset_dir": "data", "do_train": True, "finetuning_type": "lora",
            "use_cpu": True, "report_to": "none", "overwrite_cache": True, **config}
