"""The dataset stage for a YAML on disk: find `dataset_info.json`, read the files and the tokenizer, run the funnel."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from steplab.dataset.catalog import (
    INFO_FILE,
    KNOWN_DATASET_ROWS,
    LLAMAFACTORY_RELEASE,
    DatasetAttr,
    dataset_paths,
    read_info,
)
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

    None when the folder has no `tokenizer.json` or the YAML names no model: the funnel then estimates
    (`_said_why` says why). Without `template:` the tokenizer's own chat template is read, as LLaMA-Factory does.
    """
    template = _template(settings)
    if not settings.model_name_or_path or (template is not None and not settings.needs_tokens):
        return None  # (without `template:` the tokenizer says which template every row is written with)
    folder = base / settings.model_name_or_path
    if not all((folder / name).is_file() for name in TOKENIZER_FILES):
        return None
    return Tokenizer.from_folder(folder, template, settings.template_options)


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
"""What token lengths need, together: `tokenizer_config.json` says the special tokens (`bos_token`, which templates
such as llama3 write) and how `transformers` loads the tokenizer, so `tokenizer.json` alone gives no sure count."""


def _said_why(funnel: Funnel, settings: DataSettings, path: str, present: tuple[str, ...] = ()) -> Funnel:
    """An estimated funnel also says why there were no token lengths: no tokenizer there, or one of its two files
    missing (`present`: the files that were there)."""
    if funnel.estimate is None:
        return funnel
    missing = [name for name in TOKENIZER_FILES if name not in present]
    why = (msg("dataset.no_tokenizer_file", path=path, missing=missing[0], given=present[0])
           if present and missing else msg("dataset.no_tokenizer", path=path))
    return replace(funnel, assumptions=(*funnel.assumptions, why))


PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")
"""What makes `AutoProcessor` find a processor in a model folder (a multimodal template cannot work without one)."""


def _writing(settings: DataSettings, tokenizer: Tokenizer | None, folder: Path | None = None) -> Template | None:
    """The template every kept row is written with (to find the rows LLaMA-Factory cannot write): the tokenizer's
    when there is one, else the named one as the options leave it; None when only a tokenizer could say which.

    What `get_template_and_fix_tokenizer` and the multimodal plugin refuse before any row is read is refused here:
    `train_on_prompt` with an `efficient_eos` template, a multimodal template whose local model folder has no
    processor ("Processor was not found").
    """
    template = tokenizer.template if tokenizer is not None else _template(settings)
    if template is None:
        return None
    template = template.configured(settings.template_options) if tokenizer is None else template
    if settings.train_on_prompt and template.efficient_eos:
        raise DatasetError("dataset.train_on_prompt_template", template=template.name or "-")
    if (template.multimodal is not None and folder is not None and folder.is_dir()
            and not any((folder / name).is_file() for name in PROCESSOR_FILES)):
        raise DatasetError("dataset.no_processor", template=template.name or "-", path=str(folder))
    return template


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
    tokenizer = tokenizer_for(settings, base)
    folder = base / settings.model_name_or_path if settings.model_name_or_path else None
    funnel = dataset_funnel(settings, tables, {attr.name: attr for attr in attrs}, tokenizer,
                            _writing(settings, tokenizer, folder))
    model = settings.model_name_or_path
    present = tuple(name for name in TOKENIZER_FILES if model and (base / model / name).is_file())
    return _said_why(funnel, settings, str(base / model) if model else "model_name_or_path", present)


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
    """The YAML's chat template from StepLab's table (LLaMA-Factory 0.9.5's); None when the YAML names none.

    A name 0.9.5 does not register stops its run ("Template X does not exist"), so StepLab refuses it too.
    """
    if settings.template is None:
        return None
    found = templates().get(settings.template)
    if found is None:
        raise DatasetError("dataset.template_missing", template=settings.template, count=len(templates()),
                           release=LLAMAFACTORY_RELEASE)
    return found


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
    template = _template(settings)
    if ((settings.needs_tokens or template is None) and all(name in files for name in TOKENIZER_FILES)
            and not any(isinstance(table, int) for table in tables.values())):
        config = read_config(files.get("tokenizer_config.json", b"{}"))
        try:
            text = files["tokenizer.json"].decode("utf-8")
        except UnicodeDecodeError:
            raise DatasetError("dataset.bad_tokenizer", path="tokenizer.json") from None
        tokenizer = Tokenizer(text, config, template, settings.template_options)
    funnel = dataset_funnel(settings, tables, attrs, tokenizer, _writing(settings, tokenizer))
    return _said_why(funnel, settings, "tokenizer.json, tokenizer_config.json",
                     tuple(name for name in TOKENIZER_FILES if name in files))
