"""Record `tests/data/golden/<profile>.json` from the real Trainer of the profile's release.

Each profile's runs are trained by `tests/oracle.py` (`run_trainer`: `TinyRegressor` on CPU over generated rows;
`run_lightning` for `lightning-2`) in that release's own environment: the suite's Python when it has the release
(transformers 5.24.0 for `hf-5`), else a venv built once into `.cache/<package>-<release>` from
`tests/data/<package>-<release>-env/constraints.txt` (`tests/cached_env.py`: the release and the few packages it
needs that the suite has not, or has newer; the suite's torch 2.13.0 and everything else seen through it). A case
with `world_size` N > 1 is trained by N processes (`torchrun --nproc-per-node N`, gloo on CPU); every rank must
report the same run, and rank 0's is kept.

`python scripts/record-golden.py PROFILE` re-records the cases of the profile's file (and adds the
`ADDED_CASES` below that it lacks), says, case by case and field by field, where the new recording differs
from the committed one, and writes it; `--check` writes nothing and exits 1 on a difference; `--only ID` records
those cases alone (the file's other cases stay); `--cases-from PROFILE` starts a new profile's file from another
profile's cases.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

try:
    from tests.cached_env import ROOT, CachedEnv
except ImportError:  # imported as a top-level module, with tests/ on the path
    from cached_env import ROOT, CachedEnv  # type: ignore[no-redef]

TESTS = ROOT / "tests"
GOLDEN = TESTS / "data" / "golden"
ORACLE = TESTS / "oracle.py"
RELEASES = {"hf-5": "5.24.0", "hf-4.57": "4.57.6", "hf-4.51": "4.51.3", "hf-4.46": "4.46.3", "lightning-2": "2.6.6"}
"""The release each profile's golden file is recorded with (of transformers, or of lightning for `lightning-2`)."""


def package(profile: str) -> str:
    """The package a profile's release is of."""
    return "lightning" if profile.startswith("lightning") else "transformers"


def _multi(case_id: str, world_size: int, note: str, **setup: Any) -> dict[str, Any]:
    """A case as the golden files write one (`world_size` only when more than one process)."""
    base: dict[str, Any] = {
        "num_samples": 100, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 1, "num_train_epochs": 3,
        "max_steps": -1, "learning_rate": 5e-05, "lr_scheduler_type": "linear", "lr_scheduler_kwargs": None,
        "warmup_ratio": 0.0, "warmup_steps": 0, "eval_strategy": "no", "eval_steps": None, "save_strategy": "steps",
        "save_steps": 500, "logging_steps": 500, "dataloader_drop_last": False, "num_eval_samples": 16,
    }
    return {"id": case_id, "note": note, **base, **setup, **({"world_size": world_size} if world_size > 1 else {})}


MULTI_PROCESS_CASES = [
    _multi("ws2_n100_bs4_ga3", 2, "2 processes: 100 rows in rounds of 8 are 13 micro-batches each (the last "
           "round padded), 13 not a multiple of GA=3", gradient_accumulation_steps=3),
    _multi("ws2_n101_bs4_ga4_droplast", 2, "2 processes, drop_last: 101 rows give 12 full micro-batches each; "
           "101 % GA = 1", num_samples=101, gradient_accumulation_steps=4, dataloader_drop_last=True),
    _multi("ws2_n10_bs4_ga4", 2, "2 processes, fewer micro-batches per epoch (2) than GA=4",
           num_samples=10, gradient_accumulation_steps=4),
    _multi("ws2_n97_bs4_ga8", 2, "2 processes: 13 micro-batches each per epoch, 97 % GA = 1 (4.46 and 4.51 size "
           "an epoch's last group by rows, not micro-batches)", num_samples=97, gradient_accumulation_steps=8),
    _multi("ws2_n60_bs3_ga2_max_steps_13", 2, "2 processes, max_steps=13 over 10 micro-batches per epoch",
           num_samples=60, per_device_train_batch_size=3, gradient_accumulation_steps=2, max_steps=13),
    _multi("ws2_n100_bs4_ga3_events", 2, "2 processes: eval, save and log every 2 updates, cosine with 3 warmup "
           "steps, 1.5 epochs", gradient_accumulation_steps=3, num_train_epochs=1.5, lr_scheduler_type="cosine",
           warmup_steps=3, eval_strategy="steps", eval_steps=2, save_steps=2, logging_steps=2),
    _multi("ws3_n100_bs4_ga2", 3, "3 processes: 100 rows in rounds of 12 are 9 micro-batches each (the last "
           "round padded), 9 odd against GA=2", gradient_accumulation_steps=2),
    _multi("ws3_n50_bs2_ga4_droplast", 3, "3 processes, drop_last: 50 rows give 8 full micro-batches each; "
           "50 % GA = 2", num_samples=50, per_device_train_batch_size=2, gradient_accumulation_steps=4,
           dataloader_drop_last=True),
]
"""Multi-process runs (`world_size` processes of `per_device_train_batch_size` rows each per micro-batch): the
same setups for every profile, where releases shard, pad, round and accumulate differently."""

EMPTY_LOADER_CASES = [
    _multi("bs_gt_n_droplast_ga4", 1, "empty dataloader (drop_last, 3 rows, micro-batch 8) with GA=4: 4.46.3 "
           "asks it for 3 micro-batches (3 % GA), and accelerate 1.1.1 fails on the second", num_samples=3,
           per_device_train_batch_size=8, gradient_accumulation_steps=4, dataloader_drop_last=True,
           num_eval_samples=64),
    _multi("ws2_n7_bs5_ga4_droplast", 2, "2 processes, drop_last: 7 rows fill no round of 10, every process's "
           "dataloader is empty; GA=4", num_samples=7, per_device_train_batch_size=5, gradient_accumulation_steps=4,
           dataloader_drop_last=True, num_eval_samples=128),
]
"""Empty training dataloaders the generated two-process runs found 4.46.3 refusing otherwise than with GA=1."""

ADDED_CASES = MULTI_PROCESS_CASES + EMPTY_LOADER_CASES
"""The cases added to every transformers profile's file since it was first recorded (the recorder adds those a file
lacks)."""


def _suite_has(name: str, release: str) -> bool:
    try:
        return metadata.version(name) == release
    except metadata.PackageNotFoundError:
        return False


def environment(profile: str) -> CachedEnv:
    """The environment that imports the profile's release (the suite's own Python when it has it)."""
    name, release = package(profile), RELEASES[profile]
    return CachedEnv(f"{name} {release}", TESTS / "data" / f"{name}-{release}-env" / "constraints.txt",
                     ROOT / ".cache" / f"{name}-{release}", lambda: _suite_has(name, release))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(profile: str, configs: list[dict[str, Any]], processes: int = 1, timeout: float = 3600) -> list[dict]:
    """Each config trained by the real Trainer of the profile's release in `processes` processes: the run every
    rank saw."""
    release = f"{package(profile)} {RELEASES[profile]}"
    python = environment(profile).python()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "HF_", "STEPLAB"))}
    env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TRANSFORMERS_VERBOSITY="error", PYTHONPATH=str(TESTS))
    launcher = [] if processes == 1 else ["-m", "torch.distributed.run", "--nproc-per-node", str(processes),
                                          "--master-port", str(_free_port())]
    with tempfile.TemporaryDirectory(prefix="golden-recorder-") as scratch:
        request = Path(scratch) / "request.json"
        request.write_text(json.dumps(configs), encoding="utf-8")
        done = subprocess.run([str(python), *launcher, str(ORACLE), str(request), scratch, package(profile)],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=scratch)
        if done.returncode != 0:
            raise RuntimeError(f"{release} ({processes} processes) failed:\n{done.stderr[-4000:]}")
        ranks = [json.loads((Path(scratch) / f"rank-{rank}.json").read_text()) for rank in range(processes)]
    for rank, results in enumerate(ranks[1:], start=1):
        if results != ranks[0]:
            raise RuntimeError(f"{release}: rank {rank} saw another run than rank 0")
    return ranks[0]


def torch_version(profile: str) -> str:
    python = environment(profile).python()
    done = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True,
                          text=True, check=True, timeout=300)
    return done.stdout.strip()


def record(profile: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The golden file of `profile` for `cases`, each trained afresh (grouped by `world_size`)."""
    results: dict[str, dict] = {}
    for processes in sorted({case.get("world_size", 1) for case in cases}):
        group = [case for case in cases if case.get("world_size", 1) == processes]
        for case, result in zip(group, run(profile, group, processes), strict=True):
            results[case["id"]] = result
    return {"profile": profile, "recorded_with": f"{package(profile)} {RELEASES[profile]}",
            "torch": torch_version(profile),
            "cases": [{"case": case, "result": results[case["id"]]} for case in cases]}


def golden_text(data: dict[str, Any]) -> str:
    """A golden file's text as committed (one-space indent, no final newline)."""
    return json.dumps(data, indent=1)


def _short(value: Any, width: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= width else f"{text[:width]}… ({len(text)} characters)"


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Where two golden files disagree, case by case and field by field."""
    found = [f"{key}: {old.get(key)!r} -> {new.get(key)!r}" for key in ("profile", "recorded_with", "torch")
             if old.get(key) != new.get(key)]
    before = {item["case"]["id"]: item for item in old["cases"]}
    for item in new["cases"]:
        case_id, was = item["case"]["id"], before.pop(item["case"]["id"], None)
        if was is None:
            continue
        fields = sorted(set(was["result"]) | set(item["result"]))
        changed = [f for f in fields if was["result"].get(f, "<absent>") != item["result"].get(f, "<absent>")]
        found += [f"{case_id}.{f}: {_short(was['result'].get(f, '<absent>'))} -> "
                  f"{_short(item['result'].get(f, '<absent>'))}" for f in changed]
    found += [f"{case_id}: no longer recorded" for case_id in before]
    return found


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="record-golden", description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="*", default=list(RELEASES), choices=list(RELEASES))
    parser.add_argument("--check", action="store_true", help="write nothing; print where a new recording differs")
    parser.add_argument("--cases-from", metavar="PROFILE", help="take the cases of another profile's file "
                        "(a new profile's first recording)")
    parser.add_argument("--only", metavar="ID", action="append",
                        help="record only these cases (the file's others stay as they are)")
    options = parser.parse_args(argv)
    status = 0
    for profile in options.profiles:
        path = GOLDEN / f"{profile}.json"
        committed = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        source = GOLDEN / f"{options.cases_from}.json" if options.cases_from else path
        cases = [item["case"] for item in json.loads(source.read_text(encoding="utf-8"))["cases"]]
        if package(profile) == "transformers":
            cases += [case for case in ADDED_CASES if case["id"] not in {c["id"] for c in cases}]
        if options.only:
            cases = [case for case in cases if case["id"] in options.only]
        new = record(profile, cases)
        old = committed or {"cases": []}
        if options.only:
            old = {**old, "cases": [item for item in old["cases"] if item["case"]["id"] in options.only]}
        found = differences(old, new)
        added = [item["case"]["id"] for item in new["cases"]
                 if item["case"]["id"] not in {was["case"]["id"] for was in old["cases"]}]
        print(f"{profile}: {len(new['cases'])} cases recorded, {len(found)} differences from the committed file"
              + (f", {len(added)} not in it ({', '.join(added)})" if added else ""), flush=True)
        print("\n".join(f"  {line}" for line in found), flush=True)
        if options.check:
            status |= bool(found)
        else:
            if options.only and committed:  # the other cases stay as committed
                fresh = {item["case"]["id"]: item for item in new["cases"]}
                kept = [fresh.pop(item["case"]["id"], item) for item in committed["cases"]]
                new = {**new, "cases": kept + list(fresh.values())}
            path.write_text(golden_text(new), encoding="utf-8")
            print(f"{profile}: written to {path.relative_to(ROOT)}", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
