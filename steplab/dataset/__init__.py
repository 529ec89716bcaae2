"""The dataset stage: from a LLaMA-Factory YAML's datasets to the example count the Trainer counts.

`catalog` finds the datasets the way LLaMA-Factory does (`dataset_info.json` in `dataset_dir`), `files` reads
their rows, `examples` applies the row rules (which rows LLaMA-Factory drops), `tokens` measures rows with
the model's tokenizer under the chat template (packing, `stage: pt`), `split` holds out the validation rows
as `datasets` does, and `funnel` runs the stages in LLaMA-Factory's order and explains each one.
"""
