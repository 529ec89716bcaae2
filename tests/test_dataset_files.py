"""Dataset files read as `datasets.load_dataset` 4.0 (LLaMA-Factory 0.9.5's) reads them: the same rows, the same nulls.

The oracle is the real `datasets` 4.0.0 in LLaMA-Factory's own environment (`tests/llamafactory_env.py`), on
generated JSON, JSON Lines, CSV and text files: empty CSV cells and "NA" / "null" / "None" become nulls, a
column of numbers becomes numbers, a key missing from some JSON rows is a null there, a file `datasets`
cannot read is refused.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steplab.dataset.errors import DatasetError
from steplab.dataset.files import table_from_bytes
from tests.llamafactory_env import Oracle

SETTINGS = settings(max_examples=int(os.environ.get("STEPLAB_FILE_CASES", "40")), deadline=None,
                    derandomize=not os.environ.get("STEPLAB_LF_RANDOM"), suppress_health_check=list(HealthCheck),
                    database=None)

CELLS = st.sampled_from(["w1 w2", "hello, world", "", "NA", "null", "None", "nan", "N/A", "42", "3.5", "-1",
                         "line\nbreak", '"quoted"', "世界", " ", "True", "#N/A"])
VALUES = st.one_of(st.sampled_from(["a b", "", "世界", "42"]), st.none(), st.integers(-3, 99),
                   st.lists(st.sampled_from(["x", "y"]), max_size=2))


@pytest.fixture(scope="module")
def oracle(llamafactory_oracle):
    return llamafactory_oracle


def _plain(rows: list) -> list:
    return json.loads(json.dumps(rows, default=str))


def _compare(oracle: Oracle, tmp_path: Path, name: str, data: bytes, kind: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    real = oracle.load(kind, path)
    try:
        ours = _plain(table_from_bytes(data, name, "d", name).to_pylist())
    except DatasetError as error:
        assert "error" in real, f"StepLab refused a file datasets reads: {error.message('en')}\n{data[:400]!r}"
        return
    assert "error" not in real, f"datasets refuses this file, StepLab read it: {real}\n{data[:400]!r}"
    assert ours == real["rows"], f"{data[:400]!r}\ntypes: {real['types']}"


@SETTINGS
@given(rows=st.lists(st.lists(CELLS, min_size=3, max_size=3), min_size=1, max_size=12))
def test_csv_reads_as_datasets_reads_it(oracle, tmp_path_factory, rows):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["instruction", "input", "output"])
    writer.writerows(rows)
    _compare(oracle, tmp_path_factory.mktemp("csv"), "d.csv", out.getvalue().encode(), "csv")


@SETTINGS
@given(rows=st.lists(st.dictionaries(st.sampled_from(["instruction", "input", "output"]), VALUES, max_size=3),
                     min_size=1, max_size=8), lines=st.booleans())
def test_json_and_json_lines_read_as_datasets_reads_them(oracle, tmp_path_factory, rows, lines):
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) if lines else json.dumps(rows, ensure_ascii=False)
    _compare(oracle, tmp_path_factory.mktemp("json"), "d.jsonl" if lines else "d.json", data.encode(), "json")


@SETTINGS
@given(lines=st.lists(st.sampled_from(["a b", "", "世界", " x ", "\t"]), min_size=1, max_size=8),
       ending=st.sampled_from(["\n", "\r\n", "\r"]), last=st.booleans())
def test_text_reads_as_datasets_reads_it(oracle, tmp_path_factory, lines, ending, last):
    data = ending.join(lines) + (ending if last else "")
    _compare(oracle, tmp_path_factory.mktemp("text"), "d.txt", data.encode(), "text")


def test_empty_csv_cells_are_nulls_and_a_column_of_numbers_is_numbers():
    table = table_from_bytes(b"instruction,input,output\na,,yes\nb,c,\n", "d.csv", "d", "d.csv")
    assert table.to_pylist() == [{"instruction": "a", "input": None, "output": "yes"},
                                 {"instruction": "b", "input": "c", "output": None}]
    mixed = table_from_bytes(b"instruction,output\na,42\nb,\n", "d.csv", "d", "d.csv")
    assert mixed.column("output").to_pylist() == [42.0, None]  # numbers and a gap: floats, not text
    numbers = table_from_bytes(b"instruction,output\na,1\nb,2\n", "d.csv", "d", "d.csv")
    assert numbers.column("output").to_pylist() == [1, 2]  # not text: LLaMA-Factory drops every row


def test_a_json_array_with_a_key_missing_in_some_rows_gives_nulls_there():
    table = table_from_bytes(json.dumps([{"a": "x"}, {"b": "y"}]).encode(), "d.json", "d", "d.json")
    assert table.to_pylist() == [{"a": "x", "b": None}, {"a": None, "b": "y"}]


def test_a_later_file_of_a_folder_may_lack_columns_but_not_add_one(tmp_path):
    """As `datasets` 4.0 builds a dataset of several files: the first file's columns, nulls where a later one
    lacks a column, and a refusal when a later one brings a new column."""
    from steplab.dataset.files import read_dataset

    first = tmp_path / "a.json"
    first.write_text(json.dumps([{"x": "1", "h": [["a", "b"]]}, {"x": "2", "h": None}]))
    lacking = tmp_path / "b.json"
    lacking.write_text(json.dumps([{"x": "3"}]))
    assert read_dataset([first, lacking], "d").to_pylist() == [{"x": "1", "h": [["a", "b"]]}, {"x": "2", "h": None},
                                                                {"x": "3", "h": None}]
    with pytest.raises(DatasetError) as caught:
        read_dataset([lacking, first], "d")
    assert caught.value.code == "dataset.columns_differ"
