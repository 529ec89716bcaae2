"""Real runs of every transformers release StepLab has a profile for, written as a user's run leaves them.

Each case trains `oracle.TinyRegressor` with the real `transformers.Trainer` of one release, the way LLaMA-Factory
and the Hugging Face example scripts drive it (INFO logging, `train` → `save_model` → `log_metrics` /
`save_metrics` → `save_state`), and keeps what a learner would upload: the console, `trainer_state.json` (the
output folder's and each checkpoint's), `all_results.json` / `train_results.json` and the training YAML. Resumed
cases train part 1, then resume from one of its checkpoints with the same, more-epoch or changed arguments.

`python tests/release_runs.py [PROFILE ...]` records them into `tests/data/release-runs/<profile>/<case>/`; the
tests read the recording (`tests/test_runfiles_releases.py`), and one oracle test runs the installed release live.
hf-5 is the installed transformers; older releases come from their wheels (`tests/wheels.py`), imported with
the release's import-time dependency pin check switched off (it pins tokenizers; the Trainer never calls it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "data" / "release-runs"
RELEASES = {"hf-5": None, "hf-4.57": "4.57.6", "hf-4.51": "4.51.3", "hf-4.46": "4.46.3"}

BASE: dict[str, Any] = {
    "num_samples": 50, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 3, "num_train_epochs": 2,
    "learning_rate": 0.001, "lr_scheduler_type": "cosine", "warmup_steps": 2, "logging_steps": 2,
    "save_steps": 3, "eval_strategy": "steps", "eval_steps": 4,
}
"""50 samples in micro-batches of 4 are 13 per epoch: not a multiple of 3, so releases round the updates per epoch
differently (4.46 and 4.51 down, 4.57 and 5.x up)."""

CASES: dict[str, dict[str, Any]] = {
    "plain": {"run": BASE},
    "max_steps": {"run": {**BASE, "max_steps": 7, "eval_strategy": "no"}},
    "resume_same": {"part1": BASE, "resume_at": 3, "run": BASE},
    "resume_more_epochs": {"part1": BASE, "resume_at": 3, "run": {**BASE, "num_train_epochs": 3}},
    "resume_changed": {"part1": BASE, "resume_at": 3,
                       "run": {**BASE, "gradient_accumulation_steps": 2, "save_steps": 5}},
    "resume_finished": {"part1": {**BASE, "eval_strategy": "no"}, "resume_at": "last",
                        "run": {**BASE, "eval_strategy": "no"}},
}

RUNNER = textwrap.dedent('''
    import json, sys, types
    if len(sys.argv) > 3 and sys.argv[3] == "unpin":
        check = types.ModuleType("transformers.dependency_versions_check")
        check.dep_version_check = lambda pkg, hint=None: None
        sys.modules["transformers.dependency_versions_check"] = check
    sys.path.insert(0, sys.argv[2])
    import transformers
    from oracle import RowDataset, TinyRegressor
    from transformers import Trainer, TrainingArguments
    transformers.logging.set_verbosity_info()
    config = json.loads(sys.argv[1])
    resume = config.pop("resume_from_checkpoint", None)
    rows = config.pop("num_samples")
    args = TrainingArguments(output_dir="out", report_to="none", use_cpu=True, seed=0,
                             per_device_eval_batch_size=8, dataloader_num_workers=0, **config)
    trainer = Trainer(model=TinyRegressor(), args=args, train_dataset=RowDataset(rows),
                      eval_dataset=RowDataset(8, seed=1))
    result = trainer.train(resume_from_checkpoint=resume)
    trainer.save_model()
    trainer.log_metrics("train", result.metrics)
    trainer.save_metrics("train", result.metrics)
    trainer.save_state()
''')


def _python_path(release: str | None) -> tuple[str, str]:
    """The folder to put first on `sys.path` (the release's unpacked wheel, or nothing) and the runner's flag."""
    if release is None:
        return "", "installed"
    from wheels import unpacked

    return str(unpacked(f"transformers=={release}")), "unpin"


def _yaml(config: dict[str, Any], resume: str | None) -> str:
    lines = [f"{key}: {json.dumps(value)}" for key, value in config.items()]
    if resume:
        lines.append(f"resume_from_checkpoint: {resume}")
    return "\n".join(["output_dir: out", *lines]) + "\n"


def _train(workdir: Path, release: str | None, config: dict[str, Any], resume: str | None, log: Path) -> None:
    first, flag = _python_path(release)
    payload = json.dumps({**config, "resume_from_checkpoint": resume})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (first, str(HERE)) if p),
           "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1",  # old releases load their own RNG pickles with torch.load
           "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with log.open("wb") as out:
        done = subprocess.run([sys.executable, "-c", RUNNER, payload, first or str(HERE), flag], cwd=workdir,
                              stdout=out, stderr=subprocess.STDOUT, env=env, timeout=600)
    if done.returncode:
        raise RuntimeError(f"training failed ({release or 'installed'}): see {log}")
    _relative_paths(log, first)


def _relative_paths(log: Path, wheel: str) -> None:
    """The machine's folders in warnings and tracebacks made relative, as the shared runs' README did."""
    import site

    text = log.read_text(encoding="utf-8", errors="replace")
    for folder, short in [(wheel, "transformers-wheel"), *((p, ".venv") for p in site.getsitepackages()),
                          (str(HERE), "tests")]:
        if folder:
            text = text.replace(folder.rstrip("/") + "/", short + "/")
    log.write_text(text, encoding="utf-8")


def _keep(workdir: Path, target: Path) -> None:
    """The small files a learner uploads: results, trainer states (output folder and checkpoints)."""
    out = workdir / "out"
    for name in ("trainer_state.json", "all_results.json", "train_results.json", "eval_results.json"):
        if (out / name).is_file():
            shutil.copy(out / name, target / name)
    for checkpoint in sorted(out.glob("checkpoint-*")):
        (target / checkpoint.name).mkdir(exist_ok=True)
        shutil.copy(checkpoint / "trainer_state.json", target / checkpoint.name / "trainer_state.json")


def record_case(profile: str, case: str, target: Path) -> Path:
    """Train one case under one release and write its files into `target` (made afresh)."""
    release = RELEASES[profile]
    spec = CASES[case]
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        resume = None
        if "part1" in spec:
            _train(workdir, release, dict(spec["part1"]), None, target / "console-part1.log")
            steps = sorted(int(p.name.split("-")[1]) for p in (workdir / "out").glob("checkpoint-*"))
            at = steps[-1] if spec["resume_at"] == "last" else spec["resume_at"]
            resume = f"out/checkpoint-{at}"
            for later in steps:  # the new run writes its own checkpoints after the one it resumes from
                if later != at:
                    shutil.rmtree(workdir / "out" / f"checkpoint-{later}")
            for name in ("trainer_state.json", "all_results.json", "train_results.json"):
                (workdir / "out" / name).unlink(missing_ok=True)
        (target / "config.yaml").write_text(_yaml(spec["run"], resume))
        _train(workdir, release, dict(spec["run"]), resume, target / "console.log")
        _keep(workdir, target)
    return target


def main(profiles: list[str]) -> None:
    for profile in profiles or list(RELEASES):
        for case in CASES:
            print(profile, case, record_case(profile, case, RECORDED / profile / case), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
