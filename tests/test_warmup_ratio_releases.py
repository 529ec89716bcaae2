"""`warmup_ratio` release by release, against the real releases: which 5.x take it, what LLaMA-Factory pins, and
the whole run of `hf-5.6` against the real transformers 5.6.0 (the release LLaMA-Factory 0.9.5's own runs used).

transformers 5.6.0 runs in LLaMA-Factory's environment (`tests/llamafactory_env.py`); 5.14.1 and 5.15.0 are wheels
(`tests/wheels.py`) put in front of it; 5.24.0 is the suite's own.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from llamafactory_env import python as llamafactory_python
from oracle import plan_or_same_refusal
from wheels import unpacked

from steplab.errors import TrainerRefusal
from steplab.teaching.warnings import plan_warnings
from steplab.trainer import arguments
from steplab.trainer.events import events
from steplab.trainer.plan import make_plan
from steplab.trainer.profiles import (
    LLAMA_FACTORY_PROFILE,
    LLAMA_FACTORY_TRANSFORMERS,
    LLAMA_FACTORY_VERSION,
    PROFILES,
    covers,
)
from steplab.trainer.setup import TrainingSetup, setup_from_mapping

pytestmark = pytest.mark.oracle
TESTS = Path(__file__).resolve().parent

# (warmup_ratio, warmup_steps, max_steps): the LLaMA-Factory example, a float product, both set, a ratio above 1
WARMUP_CASES = [(0.1, 0, 411), (0.07, 0, 100), (0.1, 20, 411), (0.03, 0.2, 150), (1.5, 0, 411), (None, 0.1, 411)]

ASK_ARGUMENTS = """
import json, sys
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
import transformers
from transformers import TrainingArguments
answers = []
for ratio, steps, max_steps in json.loads(sys.argv[2]):
    kwargs = {} if ratio is None else {"warmup_ratio": ratio}
    try:
        args = TrainingArguments(output_dir="out", report_to="none", warmup_steps=steps, **kwargs)
        answers.append({"warmup_steps": args.get_warmup_steps(max_steps)})
    except (TypeError, ValueError) as error:
        answers.append({"error": [type(error).__name__, str(error)]})
print(json.dumps({"version": transformers.__version__, "answers": answers}))
"""


def _ask(interpreter: str, wheel_folder: str, payload: list) -> dict:
    done = subprocess.run([interpreter, "-c", ASK_ARGUMENTS, wheel_folder, json.dumps(payload)], cwd=TESTS.parent,
                          capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _profile_for(release: str) -> str:
    (profile,) = [pid for pid, profile in PROFILES.items() if covers(profile, release)]
    return profile


def _engine(profile: str, ratio: float | None, steps: float, max_steps: int) -> dict:
    setup = TrainingSetup(warmup_ratio=ratio, warmup_steps=steps, trainer=profile)
    try:
        arguments.check_arguments(setup, PROFILES[profile])
    except TrainerRefusal as refusal:
        return {"error": [refusal.error_type, refusal.message]}
    return {"warmup_steps": arguments.warmup_steps(setup, PROFILES[profile], max_steps)}


@pytest.mark.parametrize("release", ["5.6.0", "5.14.1", "5.15.0", "5.24.0"])
def test_warmup_ratio_as_each_real_release_takes_it(release: str) -> None:
    """5.0 – 5.14 copy `warmup_ratio` into `warmup_steps`; 5.15 and later refuse it; the profile covering the
    release says the same, case by case."""
    if release == "5.24.0":  # the suite's own transformers
        real = _ask(sys.executable, "", WARMUP_CASES)
    else:
        folder = "" if release == "5.6.0" else str(unpacked(f"transformers=={release}"))
        real = _ask(str(llamafactory_python()), folder, WARMUP_CASES)
    assert real["version"] == release
    profile = _profile_for(release)
    assert real["answers"] == [_engine(profile, *case) for case in WARMUP_CASES]
    assert ("error" in real["answers"][0]) == (PROFILES[profile].warmup_ratio == "refused")


def test_llamafactory_pins_the_releases_the_profiles_say() -> None:
    """LLaMA-Factory 0.9.5's own requirement of transformers, read from its installed metadata, is the range the
    warnings name, and its newest allowed release is the one `hf-5.6` matches (what its environment installs)."""
    probe = ("import json, importlib.metadata as m; "
             "print(json.dumps([m.version('llamafactory'), m.version('transformers'), m.requires('llamafactory')]))")
    done = subprocess.run([str(llamafactory_python()), "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    version, installed, requires = json.loads(done.stdout)
    (requirement,) = [line for line in requires if line.split(";")[0].replace(" ", "").startswith("transformers")]
    bounds = {part[:2]: part[2:] for part in requirement.split(";")[0].removeprefix("transformers").split(",")}
    assert version == LLAMA_FACTORY_VERSION
    assert (bounds[">="], bounds["<="]) == tuple(f"{release}.0" for release in LLAMA_FACTORY_TRANSFORMERS)
    assert PROFILES[LLAMA_FACTORY_PROFILE].matched == f"transformers {installed}" == f"transformers {bounds['<=']}"
    assert covers(PROFILES[LLAMA_FACTORY_PROFILE], installed)


def _random_configs(count: int, seed: int) -> list[dict]:
    """Setups drawn as tests/test_oracle.py draws them, with warmup_ratio (the one difference from 5.24) often set."""
    rng = random.Random(seed)
    schedules = [("linear", {}), ("cosine", {}), ("cosine_with_restarts", {"num_cycles": 2}), ("constant", {}),
                 ("constant_with_warmup", {}), ("cosine_with_min_lr", {"min_lr_rate": 0.1}),
                 ("warmup_stable_decay", {"num_decay_steps": 3})]
    interval = [1, 3, 5, 12, 25, 0.1, 0.25, 0.5]
    configs = []
    for _ in range(count):
        schedule, kwargs = rng.choice(schedules)
        configs.append({
            "num_samples": rng.randint(1, 160), "per_device_train_batch_size": rng.randint(1, 9),
            "gradient_accumulation_steps": rng.randint(1, 9),
            "num_train_epochs": rng.choice([0.3, 0.5, 1, 1.1, 1.5, 2, 2.7, 3]),
            "max_steps": rng.choice([-1, -1, -1, 1, 7, 30]), "dataloader_drop_last": rng.random() < 0.3,
            "lr_scheduler_type": schedule, "lr_scheduler_kwargs": kwargs,
            "warmup_steps": rng.choice([0, 0, 3, 0.1]), "warmup_ratio": rng.choice([None, 0.05, 0.1, 0.5]),
            "eval_strategy": rng.choice(["no", "steps", "epoch"]), "eval_steps": rng.choice(interval),
            "save_strategy": rng.choice(["no", "steps", "epoch"]), "save_steps": rng.choice(interval),
            "logging_strategy": rng.choice(["steps", "epoch", "no"]), "logging_steps": rng.choice(interval),
            "logging_first_step": rng.random() < 0.5, "eval_on_start": rng.random() < 0.3,
        })
    return configs


RUN_ALL = """
import json, sys
sys.path.insert(0, sys.argv[1])
from oracle import run_trainer
print(json.dumps([run_trainer(config) for config in json.loads(sys.stdin.read())]))
"""


def test_hf_5_6_plans_every_run_as_the_real_5_6_0_runs_it() -> None:
    """The real Trainer of transformers 5.6.0 on 24 generated setups: steps, epochs, micro-batches per update,
    evaluations, checkpoints, logs and every learning rate, or its refusal, word for word."""
    configs = _random_configs(24, seed=56)
    done = subprocess.run([str(llamafactory_python()), "-c", RUN_ALL, str(TESTS)], input=json.dumps(configs),
                          capture_output=True, text=True, timeout=1800,
                          env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"})
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert any(c["warmup_ratio"] is not None and r["status"] == "ok" for c, r in zip(configs, results, strict=True))
    for config, real in zip(configs, results, strict=True):
        setup, unknown = setup_from_mapping({**config, "trainer": "hf-5.6"})
        assert unknown == []
        plan = plan_or_same_refusal(setup, real, config)
        if plan is None:
            continue
        assert (plan.max_steps, plan.optimizer_steps) == (real["state_max_steps"], real["optimizer_steps"]), config
        assert plan.final_epoch == pytest.approx(real["final_epoch"], rel=1e-12, abs=0), config
        assert plan.micro_batches_per_step_rle() == real["micro_batches_per_step_rle"], config
        assert [events(plan, kind).steps() for kind in ("eval", "save", "log")] == [
            real["eval_at_steps"], real["save_at_steps"], real["log_at_steps"]], config
        np.testing.assert_allclose(plan.learning_rates(), real["lr_per_step"], rtol=1e-12, atol=1e-300)


def test_the_calculator_never_prints_a_run_its_release_refuses() -> None:
    """The LLaMA-Factory example's `warmup_ratio`: planned as 5.6.0 runs it (with the deprecation said), refused
    as 5.24.0 refuses it, with what to change."""
    from steplab.teaching.presets import presets

    example = presets()["llamafactory_qwen3_lora_sft"].setup()
    assert example.trainer == LLAMA_FACTORY_PROFILE and example.warmup_ratio is not None
    plan = make_plan(example)
    assert "warmup_ratio_deprecated" in [warning.code for warning in plan_warnings(plan)]
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(example.replace(trainer="hf-5"))
    assert refusal.value.fix is not None
    for lang in ("zh", "en"):
        fix = refusal.value.fix.get(lang)
        assert LLAMA_FACTORY_PROFILE in fix and "warmup_steps: 0.1" in fix
    same = make_plan(example.replace(trainer="hf-5", warmup_ratio=None, warmup_steps=example.warmup_ratio))
    assert (same.max_steps, same.warmup_steps) == (plan.max_steps, plan.warmup_steps)


def test_the_help_and_the_export_name_the_releases_the_profiles_say() -> None:
    from steplab.i18n import t
    from steplab.teaching.warnings import WARMUP_RATIO_ALIAS
    from steplab.trainer.profiles import release_range

    first, last = WARMUP_RATIO_ALIAS
    assert (first, last) == ("5.0", "5.14")
    removed = release_range(PROFILES["hf-5"])[0]
    for lang in ("zh", "en"):
        for key in ("help.warmup_ratio", "export.warmup_ratio"):
            text = t(lang, key)
            assert all(f"`{release}`" in text for release in (first, last, removed)), (lang, key, text)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_calculator_says_which_release_prints_a_warmup_ratio_run(lang: str) -> None:
    """The LLaMA-Factory example's setup as a URL: by default printed as transformers 5.6.0 prints it (42 warmup
    steps, the deprecation said); under `hf-5` the Trainer's own refusal and what to change, no steps at all."""
    from streamlit.testing.v1 import AppTest

    from steplab.i18n import t
    from steplab.teaching.presets import presets

    example = presets()["llamafactory_qwen3_lora_sft"].setup()
    params = {"lang": lang, "num_samples": "1090", "per_device_train_batch_size": "1",
              "gradient_accumulation_steps": "8", "num_train_epochs": "3", "warmup_ratio": "0.1",
              "lr_scheduler_type": "cosine"}

    def calculator(**more: str) -> AppTest:
        at = AppTest.from_file(str(TESTS.parent / "app_pages" / "calculator.py"), default_timeout=60)
        for key, value in {**params, **more}.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    at = calculator()
    captions = " ".join(c.value for c in at.caption)
    assert t(lang, "calc.log_hint", trainer=PROFILES[LLAMA_FACTORY_PROFILE].matched) in captions
    assert make_plan(example).warmup_steps == 42 and any("warmup_ratio" in w.value for w in at.warning)
    refused = calculator(trainer="hf-5")
    assert not refused.metric and any(arguments.WARMUP_RATIO_REMOVED in c.value for c in refused.code)
    with pytest.raises(TrainerRefusal) as refusal:
        make_plan(example.replace(trainer="hf-5"))
    assert refusal.value.fix.get(lang) in [c.value for c in refused.caption]
