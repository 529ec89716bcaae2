"""Which trainer class ran a run, from its files: the config's `trainer_class` (StepLab's key), the keys only one
TRL config has (a `trl grpo|dpo|sft --config` file), else the keys only that trainer logs (TRL 1.16.0:
`GRPOTrainer` logs `reward` and `completions/…`, `DPOTrainer` `rewards/chosen` and `logps/…`, `SFTTrainer`
`mean_token_accuracy`, which `DPOTrainer` logs too, so DPO's keys are looked at first). None: a plain Trainer run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from steplab.runfiles.read import RunFiles
from steplab.runfiles.sources import Found, Source
from steplab.trainer.fields import FIELDS

CONFIG_KEYS: dict[str, frozenset[str]] = {
    # keys of one TRL 1.16.0 config class only (`trainer/grpo_config.py`, `dpo_config.py`, `sft_config.py`)
    "GRPOTrainer": frozenset({"num_generations", "steps_per_generation", "generation_batch_size", "num_iterations",
                              "max_completion_length", "use_vllm", "vllm_mode", "reward_weights", "scale_rewards",
                              "epsilon_high", "top_entropy_quantile", "mask_truncated_completions"}),
    "DPOTrainer": frozenset({"rpo_alpha", "precompute_ref_log_probs", "ref_model_init_kwargs", "reference_free",
                             "f_divergence_type", "use_weighting", "ld_alpha", "sync_ref_model"}),
    "SFTTrainer": frozenset({"dataset_text_field", "completion_only_loss", "assistant_only_loss",
                             "packing_strategy", "padding_free"}),
}
LOG_KEYS: tuple[tuple[str, frozenset[str]], ...] = (
    ("GRPOTrainer", frozenset({"reward", "reward_std", "frac_reward_zero_std", "completions/mean_length"})),
    ("DPOTrainer", frozenset({"rewards/chosen", "rewards/margins", "logps/chosen", "logps/rejected"})),
    ("SFTTrainer", frozenset({"mean_token_accuracy"})),
)
CLASSES = FIELDS["trainer_class"].choices


def _from_config(document: Mapping[str, Any], path: str, key_lines: Mapping[str, int]) -> Found | None:
    named = document.get("trainer_class")
    if isinstance(named, str) and named in CLASSES:
        return Found(named, Source(path, key_lines.get("trainer_class"), None if "trainer_class" in key_lines
                                   else "trainer_class"))
    if "stage" in document:  # a LLaMA-Factory YAML: its own trainers, counted as the Trainer counts
        return None
    for trainer_class, keys in CONFIG_KEYS.items():
        hit = sorted(keys & set(map(str, document)))
        if hit:
            return Found(trainer_class, Source(path, key_lines.get(hit[0]), None if hit[0] in key_lines else hit[0]))
    return None


def _from_logs(files: RunFiles) -> Found | None:
    sources = [files.state, *files.checkpoint_states.values()]
    rows = [(s.rows, s.path) for s in sources if s is not None]
    if files.trainer_log is not None:
        rows.append((files.trainer_log.rows, files.trainer_log.path))
    if files.console is not None:
        rows.append((files.console.rows, files.console.path))
    for trainer_class, keys in LOG_KEYS:
        for logged, path in rows:
            hit = sorted(keys & logged.keys)
            if hit:
                return Found(trainer_class, Source(path, key=hit[0]))
    return None


def trainer_class(files: RunFiles, document: Mapping[str, Any] | None, config_path: str | None,
                  key_lines: Mapping[str, int]) -> Found | None:
    """The trainer class the files name (with the key or line that names it), or None for the plain Trainer."""
    if document is not None and config_path is not None:
        found = _from_config(document, config_path, key_lines)
        if found is not None:
            return found
    return _from_logs(files)
