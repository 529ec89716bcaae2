"""The dataset stage for a YAML on disk: find `dataset_info.json`, read the files and the tokenizer, run the funnel."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from steplab.dataset.catalog import INFO_FILE, KNOWN_DATASET_ROWS, DatasetAttr, dataset_paths, read_info
from steplab.dataset.errors import DatasetError
from steplab.dataset.files import (
    MAX_DISK_FILE_BYTES,
    MAX_FILE_BYTES,
    check_size,
    read_dataset,
    table_from_bytes,
)
from steplab.dataset.funnel import Funnel, dataset_funnel
from steplab.dataset.settings import DataSettings, data_settings
from steplab.dataset.tokens import Template, Tokenizer, read_config, templates
from steplab.i18n import msg


def _check_stage(settings: DataSettings, attrs: list[DatasetAttr]) -> None:
    """LLaMA-Factory refuses a ranking dataset outside rm/dpo and a plain one inside them."""
    pairwise = settings.processor == "pairwise"
    for attr in attrs:
        if attr.ranking != pairwise:
            raise DatasetError("dataset.ranking_mismatch", dataset=attr.name, stage=settings.stage,
                               stage_kind=msg("dataset.kind.ranking" if attr.ranking else "dataset.kind.plain"))


def tokenizer_for(settings: DataSettings, base: Path) -> Tokenizer | None:
    """The model folder's tokenizer under the YAML's template, when the processor needs token lengths.

    None when the folder has no `tokenizer.json`, the YAML names no model or StepLab lacks its template:
    the funnel then estimates (`_said_why` says which).
    """
    template = _template(settings)
    if not settings.needs_tokens or not settings.model_name_or_path or template is None:
        return None
    folder = base / settings.model_name_or_path
    return Tokenizer.from_folder(folder, template) if (folder / "tokenizer.json").is_file() else None


def _said_why(funnel: Funnel, settings: DataSettings, path: str) -> Funnel:
    """An estimated funnel also says why there were no token lengths: no tokenizer there, or no such template."""
    if funnel.estimate is None:
        return funnel
    if _template(settings) is None:
        why = msg("dataset.template_unknown", template=settings.template, known=", ".join(templates()))
    else:
        why = msg("dataset.no_tokenizer", path=path)
    return replace(funnel, assumptions=(*funnel.assumptions, why))


def funnel_from_files(values: Mapping[str, Any], base: Path, max_bytes: int = MAX_DISK_FILE_BYTES) -> Funnel:
    """Run the dataset stage on the files a YAML names, paths relative to `base` (where `llamafactory-cli` runs)."""
    settings = data_settings(values)
    if settings.tokenized_path:
        raise DatasetError("dataset.tokenized_unmodelled", path=settings.tokenized_path)
    names = list(settings.names)
    if not names:
        raise DatasetError("dataset.none_named")
    dataset_dir = base / settings.dataset_dir
    info_path = dataset_dir / INFO_FILE
    try:
        info = info_path.read_bytes()
    except OSError:
        raise DatasetError("dataset.no_info", path=str(info_path)) from None
    attrs = read_info(info, names, str(info_path))
    _check_stage(settings, attrs)
    tables = {attr.name: read_dataset(dataset_paths(attr, dataset_dir), attr.name, max_bytes) for attr in attrs}
    funnel = dataset_funnel(settings, tables, {attr.name: attr for attr in attrs}, tokenizer_for(settings, base))
    model = settings.model_name_or_path
    return _said_why(funnel, settings, str(base / model / "tokenizer.json") if model else "model_name_or_path")


def known_rows(values: Mapping[str, Any]) -> dict[str, int]:
    """The row counts StepLab knows (LLaMA-Factory's demo datasets) of the datasets a YAML mapping names."""
    return {name: KNOWN_DATASET_ROWS[name] for name in data_settings(values).names if name in KNOWN_DATASET_ROWS}


def funnel_from_rows(values: Mapping[str, Any], rows: Mapping[str, int]) -> Funnel:
    """Run the row rules on row counts alone (`--dataset-rows NAME=ROWS`): rows are assumed valid."""
    settings = data_settings(values)
    missing = [name for name in settings.names if name not in rows]
    if missing:
        raise DatasetError("dataset.rows_missing", dataset=", ".join(missing))
    return dataset_funnel(settings, dict(rows))


def _template(settings: DataSettings) -> Template | None:
    """The YAML's chat template from StepLab's table (none given: `empty`); None for one it does not have."""
    return templates().get(settings.template or "empty")


def funnel_from_uploads(values: Mapping[str, Any], files: Mapping[str, bytes], rows: Mapping[str, int] | None = None,
                        max_bytes: int = MAX_FILE_BYTES) -> Funnel:
    """Run the dataset stage on uploaded files (by file name) and typed row counts, as the web page gets them.

    `dataset_info.json` maps each dataset to its file (matched by its base name); a dataset with no
    uploaded file uses its typed row count; `tokenizer.json` (and `tokenizer_config.json`) give the tokens.
    """
    settings = data_settings(values)
    rows = dict(rows or {})
    names = list(settings.names)
    if not names:
        raise DatasetError("dataset.none_named")
    attrs: dict[str, DatasetAttr | None] = dict.fromkeys(names)
    if INFO_FILE in files:
        found = read_info(files[INFO_FILE], [name for name in names if name not in rows], INFO_FILE)
        _check_stage(settings, found)
        attrs.update({attr.name: attr for attr in found})
    tables: dict[str, Any] = {}
    for name in names:
        attr = attrs[name]
        if name in rows:
            tables[name] = rows[name]
            continue
        if attr is None:
            raise DatasetError("dataset.upload_info", dataset=name)
        if attr.remote is not None:
            raise DatasetError("dataset.remote", dataset=name, source=attr.remote)
        file_name = Path(str(attr.file_name)).name
        if file_name not in files:
            raise DatasetError("dataset.upload_missing", dataset=name, file=file_name)
        check_size(len(files[file_name]), name, file_name, max_bytes)
        tables[name] = table_from_bytes(files[file_name], file_name, name, file_name)
    tokenizer = None
    if (settings.needs_tokens and "tokenizer.json" in files and _template(settings) is not None
            and not any(isinstance(table, int) for table in tables.values())):
        config = read_config(files.get("tokenizer_config.json", b"{}"))
        try:
            text = files["tokenizer.json"].decode("utf-8")
        except UnicodeDecodeError:
            raise DatasetError("dataset.bad_tokenizer", path="tokenizer.json") from None
        tokenizer = Tokenizer(text, config, _template(settings))
    return _said_why(dataset_funnel(settings, tables, attrs, tokenizer), settings, "tokenizer.json")
