"""`all_results.json`, `train_results.json`, `eval_results.json`: the metrics `Trainer.save_metrics` writes."""

from __future__ import annotations

from dataclasses import dataclass

from steplab.runfiles.errors import RunFileError
from steplab.runfiles.json_text import load_json
from steplab.runfiles.rows import number
from steplab.runfiles.text import decode_text


@dataclass(frozen=True)
class ResultsFile:
    """One results file's numbers by key (`train_loss`, `epoch`, `eval_loss`, ...)."""

    path: str
    values: dict[str, float]


def read_results(data: bytes, path: str) -> ResultsFile:
    document = load_json(decode_text(data, path), path)
    if not isinstance(document, dict):
        raise RunFileError("runfiles.results_not_object", path=path)
    values = {str(key): number(value) for key, value in document.items() if number(value) == number(value)}
    return ResultsFile(path, values)
