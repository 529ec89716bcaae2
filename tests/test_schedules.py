"""steplab.trainer.schedules against the real schedulers.

* 5.24 (installed): every curve equals `transformers.get_scheduler(...)` stepped step by step, and
  every refusal equals the exception the real call raises.
* 4.46.3 / 4.51.3 / 4.57.6: the same, against the real `optimization.py` of those releases, read from
  their wheels (fetched once from the package index, `tests/wheels.py`) and run with the package imports
  it needs stubbed.
* The golden runs of the real Trainer (tests/data/golden): every LR of every step.
* Property tests with hypothesis, and the worked values of trainer-math.md section 7.
"""

from __future__ import annotations

import ast
import enum
import inspect
import json
import logging
import math
import subprocess
import sys
import types
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from golden import GOLDEN
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from wheels import wheel

from steplab.errors import SetupError, TrainerRefusal
from steplab.trainer import profiles
from steplab.trainer import schedules as S

OLD_RELEASES = {"hf-4.57": "4.57.6", "hf-4.51": "4.51.3", "hf-4.46": "4.46.3"}
LR = 2e-4

# (name, warmup_steps W, max_steps T, lr_scheduler_kwargs): edge cases included (W = 0, W >= T, T = 1)
GRID = [
    ("linear", 0, 1, {}),
    ("linear", 1, 1, {}),
    ("linear", 0, 40, {}),
    ("linear", 10, 100, {}),
    ("linear", 40, 40, {}),
    ("linear", 60, 40, {}),
    ("cosine", 0, 1, {}),
    ("cosine", 5, 50, {}),
    ("cosine", 0, 100, {"num_cycles": 1.5}),
    ("cosine", 3, 30, {"num_cycles": 0.25}),
    ("cosine", 30, 30, {}),
    ("cosine", 45, 30, {}),
    ("cosine_with_restarts", 5, 50, {}),
    ("cosine_with_restarts", 5, 50, {"num_cycles": 2}),
    ("cosine_with_restarts", 0, 60, {"num_cycles": 3}),
    ("cosine_with_restarts", 0, 1, {"num_cycles": 2}),
    ("polynomial", 10, 100, {}),
    ("polynomial", 0, 40, {"power": 2.0}),
    ("polynomial", 5, 40, {"power": 0.5, "lr_end": 1e-5}),
    ("polynomial", 5, 40, {"power": 3, "lr_end": 0.0}),
    ("polynomial", 50, 40, {}),
    ("polynomial", 0, 1, {}),
    ("constant", 0, 30, {}),
    ("constant", 20, 30, {}),
    ("constant_with_warmup", 0, 30, {}),
    ("constant_with_warmup", 7, 30, {}),
    ("constant_with_warmup", 40, 30, {}),
    ("inverse_sqrt", 0, 50, {}),
    ("inverse_sqrt", 10, 60, {}),
    ("inverse_sqrt", 10, 60, {"timescale": 7}),
    ("inverse_sqrt", 0, 50, {"timescale": 3}),
    ("inverse_sqrt", 80, 60, {}),
    ("cosine_with_min_lr", 5, 50, {"min_lr": 1e-6}),
    ("cosine_with_min_lr", 0, 50, {"min_lr_rate": 0.1}),
    ("cosine_with_min_lr", 5, 50, {"min_lr_rate": 0.05, "num_cycles": 1.0}),
    ("cosine_with_min_lr", 60, 50, {"min_lr_rate": 0.1}),
    ("cosine_warmup_with_min_lr", 10, 100, {"min_lr_rate": 0.1}),
    ("cosine_warmup_with_min_lr", 0, 50, {"min_lr": 1e-5}),
    ("cosine_warmup_with_min_lr", 1, 50, {"min_lr_rate": 0.1}),
    ("cosine_warmup_with_min_lr", 8, 50, {"min_lr_rate": 0.1, "warmup_lr_rate": 0.05}),
    ("cosine_warmup_with_min_lr", 1, 50, {"min_lr_rate": 0.2, "warmup_lr_rate": 0.5}),
    ("cosine_warmup_with_min_lr", 60, 50, {"min_lr_rate": 0.1}),
    ("cosine_warmup_with_min_lr", 50, 50, {"min_lr_rate": 0.1, "num_cycles": 0.25}),
    ("warmup_stable_decay", 10, 100, {"num_decay_steps": 60}),
    ("warmup_stable_decay", 10, 100, {"num_decay_steps": 20, "num_stable_steps": 30}),
    ("warmup_stable_decay", 10, 100, {"num_decay_steps": 80, "num_stable_steps": 30}),
    ("warmup_stable_decay", 0, 50, {"num_decay_steps": 0}),
    ("warmup_stable_decay", 10, 30, {"num_decay_steps": 40}),
    ("warmup_stable_decay", 5, 50, {"num_decay_steps": 20, "num_cycles": 1.0, "min_lr_ratio": 0.2}),
    *[("warmup_stable_decay", 10, 60, {"num_decay_steps": 30, "warmup_type": w, "decay_type": d, "min_lr_ratio": 0.1})
      for w in ("linear", "cosine", "1-sqrt") for d in ("linear", "cosine", "1-sqrt")],
]

# 4.46's warmup_stable_decay takes num_stable_steps and num_decay_steps, nothing about warmup/decay shape
GRID_446 = [
    ("warmup_stable_decay", 10, 100, {"num_stable_steps": 30, "num_decay_steps": 60}),
    ("warmup_stable_decay", 10, 100, {"num_stable_steps": 20, "num_decay_steps": 30, "min_lr_ratio": 0.1}),
    ("warmup_stable_decay", 0, 40, {"num_stable_steps": 0, "num_decay_steps": 20, "num_cycles": 1.0}),
    ("warmup_stable_decay", 5, 30, {"num_stable_steps": 50, "num_decay_steps": 0}),
]

# (name, kwargs, W, T, learning_rate): configurations the real code refuses, at build or while stepping to T
REFUSALS = [
    ("cosine_warmup_with_min_lr_typo", {}, 2, 10, LR),
    ("greedy_lr", {}, 2, 10, LR),
    ("cosine_with_min_lr", {}, 2, 10, LR),
    ("cosine_with_min_lr", {"min_lr": 1e-6, "min_lr_rate": 0.1}, 2, 10, LR),
    ("cosine_with_min_lr", {"min_lr": None, "min_lr_rate": None}, 2, 10, LR),
    ("cosine_with_min_lr", {"min_lr": 1e-6}, 2, 10, 0.0),
    ("cosine_with_min_lr", {"min_lr": 0}, 2, 10, 0),
    ("cosine_warmup_with_min_lr", {}, 2, 10, LR),
    ("cosine_warmup_with_min_lr", {"min_lr": 1e-6, "min_lr_rate": 0.5}, 2, 10, LR),
    ("warmup_stable_decay", {}, 2, 10, LR),
    ("warmup_stable_decay", {"num_stable_steps": 3}, 2, 10, LR),
    ("warmup_stable_decay", {"foo": 1}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "warmup_type": "exp"}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "decay_type": "step"}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "warmup_type": "exp", "decay_type": "step"}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_training_steps": 3}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_warmup_steps": 3}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": None}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": None, "num_stable_steps": 3}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": None, "num_stable_steps": 2.5}, 2, 10, LR),
    ("linear", {"foo": 1}, 2, 10, LR),
    ("linear", {"foo": 1, "bar": 2}, 2, 10, LR),
    ("linear", {"num_warmup_steps": 1}, 2, 10, LR),
    ("linear", {"num_training_steps": 1, "num_warmup_steps": 1}, 2, 10, LR),
    ("linear", {"optimizer": 1}, 2, 10, LR),
    ("linear", {"foo": 1, "optimizer": 2}, 2, 10, LR),
    ("linear", {"optimizer": 2, "foo": 1}, 2, 10, LR),
    ("linear", {"last_epoch": 3}, 2, 10, LR),
    ("cosine", {"num_cycles": 2, "cycles": 1}, 2, 10, LR),
    ("cosine_with_restarts", {"num_warmup_steps": 4}, 2, 10, LR),
    ("inverse_sqrt", {"foo": 1}, 2, 10, LR),
    ("inverse_sqrt", {"timescale": 0}, 2, 10, LR),
    ("inverse_sqrt", {"timescale": 0.0}, 0, 10, LR),
    ("inverse_sqrt", {"timescale": -3}, 2, 10, LR),
    ("inverse_sqrt", {"timescale": -2.5}, 2, 10, LR),
    ("polynomial", {"lr_end": 1e-3}, 2, 10, LR),
    ("polynomial", {"lr_end": LR}, 2, 10, LR),
    ("polynomial", {"lr_end": 1e-3, "foo": 1}, 2, 10, LR),
    ("polynomial", {}, 10, 10, LR),
    ("polynomial", {}, 0, 0, LR),
    ("polynomial", {"power": -1.0}, 2, 10, LR),
    ("polynomial", {"lr_end": -1e-3}, 2, 10, 0.0),
    ("reduce_lr_on_plateau", {"foo": 1}, 0, 10, LR),
    ("reduce_lr_on_plateau", {"factor": 1.0}, 0, 10, LR),
    ("reduce_lr_on_plateau", {"mode": "lowest"}, 0, 10, LR),
    ("reduce_lr_on_plateau", {"threshold_mode": "relative"}, 0, 10, LR),
    ("reduce_lr_on_plateau", {"optimizer": 1}, 0, 10, LR),
    ("reduce_lr_on_plateau", {"last_epoch": 1}, 0, 10, LR),
]

# configurations the real code takes although they look odd
ACCEPTED = [
    ("constant", {"foo": 1, "last_epoch": 5}, 2, 10, LR),
    ("constant_with_warmup", {"timescale": 3, "last_epoch": 5}, 2, 10, LR),
    ("linear", {"last_epoch": -1}, 2, 10, LR),
    ("cosine_with_min_lr", {"min_lr": None, "min_lr_rate": 0.1}, 2, 10, LR),
    ("cosine_warmup_with_min_lr", {"min_lr": 1e-6, "warmup_lr_rate": None}, 2, 10, LR),
    ("polynomial", {}, 12, 10, LR),
    ("inverse_sqrt", {"timescale": -30}, 2, 10, LR),
    ("inverse_sqrt", {"timescale": None}, 0, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_stable_steps": None}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_stable_steps": 1}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": None, "num_stable_steps": 20}, 2, 10, LR),
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_stable_steps": None}, 2, 10, LR),  # 4.46: refused
    ("warmup_stable_decay", {"num_decay_steps": 5, "num_stable_steps": None}, 12, 10, LR),
    ("reduce_lr_on_plateau", {"factor": 0.5, "patience": 2, "mode": "max", "threshold_mode": "abs"}, 0, 10, LR),
]


def _optimizer(lr: float) -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def _stepped(optimizer: torch.optim.Optimizer, scheduler, n: int) -> np.ndarray:
    """The LR each of n updates uses: read before `scheduler.step()`, as the Trainer's optimizer sees it.

    NaN from the update whose `scheduler.step()` raised (steplab's curves hold NaN there).
    """
    lrs = np.full(n, np.nan)
    for k in range(n):
        lrs[k] = optimizer.param_groups[0]["lr"]
        optimizer.step()
        try:
            scheduler.step()
        except (ZeroDivisionError, TypeError, ValueError):
            break
    return lrs


def _real_curve(get_scheduler, name: str, W: int, T: int, kwargs: dict, n: int, lr: float = LR) -> np.ndarray:
    optimizer = _optimizer(lr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # wsd: "Both num_training_steps and num_stable_steps are specified"
        scheduler = get_scheduler(name, optimizer, num_warmup_steps=W, num_training_steps=T,
                                  scheduler_specific_kwargs=dict(kwargs))
    return _stepped(optimizer, scheduler, n)


def _run_real(get_scheduler, name: str, kwargs: dict, W: int, T: int, lr: float) -> None:
    """Build the real scheduler as the Trainer does and step it after each of the T updates."""
    optimizer = _optimizer(lr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = get_scheduler(name, optimizer, num_warmup_steps=W, num_training_steps=T,
                                  scheduler_specific_kwargs=dict(kwargs))
    if not isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
        for _ in range(T):
            optimizer.step()
            scheduler.step()


def _assert_same(ours: np.ndarray, expected: np.ndarray) -> None:
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=0)


def _horizon(T: int) -> int:
    """Updates to compare: past the horizon too."""
    return T + max(5, T // 2)


def _case_id(case) -> str:
    name, W, T, kwargs = case
    return f"{name}-W{W}-T{T}-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


def _refusal_id(case) -> str:
    name, kwargs, W, T, lr = case
    return f"{name}-W{W}-T{T}-lr{lr}-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


# --------------------------------------------------------------------------- 5.24 (installed)


@pytest.fixture(scope="module")
def hf5():
    import transformers
    from transformers import get_scheduler

    assert transformers.__version__ == "5.24.0"
    return get_scheduler


@pytest.mark.parametrize("case", GRID, ids=_case_id)
def test_curve_equals_real_5_and_own_torch_scheduler(hf5, case):
    name, W, T, kwargs = case
    n = _horizon(T)
    S.check_scheduler(name, kwargs, profile="hf-5", learning_rate=LR, warmup_steps=W, total_steps=T)
    ours = S.learning_rates(name, n, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
    _assert_same(ours, _real_curve(hf5, name, W, T, kwargs, n))
    optimizer = _optimizer(LR)
    own = S.torch_scheduler(optimizer, name, warmup_steps=W, total_steps=T, kwargs=kwargs)
    assert type(own) is torch.optim.lr_scheduler.LambdaLR
    _assert_same(ours, _stepped(optimizer, own, n))


@pytest.mark.parametrize("case", REFUSALS, ids=_refusal_id)
def test_refusal_equals_real_5(hf5, case):
    name, kwargs, W, T, lr = case
    with pytest.raises(Exception) as real:
        _run_real(hf5, name, kwargs, W, T, lr)
    with pytest.raises(TrainerRefusal) as ours:
        S.check_scheduler(name, kwargs, profile="hf-5", learning_rate=lr, warmup_steps=W, total_steps=T)
    assert ours.value.error_type == type(real.value).__name__
    assert ours.value.message == real.value.args[0]


@pytest.mark.parametrize("case", ACCEPTED, ids=_refusal_id)
def test_accepted_like_real_5(hf5, case):
    name, kwargs, W, T, lr = case
    _run_real(hf5, name, kwargs, W, T, lr)
    S.check_scheduler(name, kwargs, profile="hf-5", learning_rate=lr, warmup_steps=W, total_steps=T)


def test_lightning_profile_uses_the_5x_code(hf5):
    assert S.available_schedulers("lightning-2") == S.available_schedulers("hf-5")
    for name, W, T, kwargs in GRID:
        n = _horizon(T)
        a = S.learning_rates(name, n, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR,
                             profile="lightning-2")
        _assert_same(a, S.learning_rates(name, n, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR))


def test_types_and_kwargs_follow_the_real_5_signatures(hf5):
    from transformers import optimization
    from transformers.trainer_utils import SchedulerType

    assert S.available_schedulers("hf-5") == tuple(t.value for t in SchedulerType if t.value != "greedy")
    assert S.SCHEDULER_TYPES == S.available_schedulers("hf-5")
    assert all(isinstance(S.scheduler_kwargs(name), dict) for name in S.SCHEDULER_TYPES)
    explicit = {"optimizer", "num_warmup_steps", "num_training_steps", "last_epoch"}
    forwarded = {"constant": False, "constant_with_warmup": False}  # get_scheduler drops their kwargs
    for name in S.SCHEDULER_TYPES:
        function = optimization.TYPE_TO_SCHEDULER_FUNCTION[SchedulerType(name)]
        if name == "reduce_lr_on_plateau":
            function = torch.optim.lr_scheduler.ReduceLROnPlateau.__init__
        params = inspect.signature(function).parameters.values()
        expected = {p.name: (None if p.default is inspect.Parameter.empty else p.default)
                    for p in params if p.name not in explicit | {"self", "kwargs"}}
        assert S.scheduler_kwargs(name) == (expected if forwarded.get(name, True) else {}), name
    assert S.scheduler_kwargs("warmup_stable_decay")["num_decay_steps"] is None  # required
    assert S.scheduler_kwargs("cosine_with_restarts") == {"num_cycles": 1}


# --------------------------------------------------------------------------- older releases


def _load_old_optimization(version: str) -> types.ModuleType:
    """The real optimization.py of an old release, run with stubs for the package modules it imports.

    `SchedulerType` (and its `ExplicitEnum` base) are taken from the same wheel; the module is named
    transformers.optimization so that Python's TypeError texts name functions as they really do.
    """
    path = wheel(f"transformers=={version}")
    with zipfile.ZipFile(path) as archive:
        generic = archive.read("transformers/utils/generic.py").decode()
        trainer_utils = archive.read("transformers/trainer_utils.py").decode()
        source = archive.read("transformers/optimization.py").decode()

    def class_source(source: str, name: str) -> str:
        node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == name)
        return ast.get_source_segment(source, node)

    package = "_steplab_old_transformers_" + version.replace(".", "_")

    def module(name: str, **attributes) -> types.ModuleType:
        created = types.ModuleType(name)
        created.__dict__.update(attributes)
        sys.modules[name] = created
        return created

    namespace = {"Enum": enum.Enum}
    exec(class_source(generic, "ExplicitEnum") + "\n\n" + class_source(trainer_utils, "SchedulerType"), namespace)

    class Dummy:
        pass

    module(package, __path__=[])
    module(f"{package}.trainer_utils", SchedulerType=namespace["SchedulerType"])
    module(f"{package}.trainer_pt_utils", LayerWiseDummyOptimizer=Dummy, LayerWiseDummyScheduler=Dummy)
    module(f"{package}.utils", __path__=[], logging=types.SimpleNamespace(get_logger=logging.getLogger),
           versions=module(f"{package}.utils.versions", require_version=lambda *args, **kwargs: None))
    optimization = types.ModuleType("transformers.optimization")
    optimization.__package__ = package
    exec(compile(source, f"{path}/transformers/optimization.py", "exec"), optimization.__dict__)
    return optimization


@pytest.fixture(scope="module", params=list(OLD_RELEASES))
def old(request):
    return request.param, _load_old_optimization(OLD_RELEASES[request.param])


def test_old_release_scheduler_types(old):
    profile, optimization = old
    assert S.available_schedulers(profile) == tuple(t.value for t in optimization.SchedulerType)


def test_old_release_curves_and_refusals(old):
    """Every grid case, REFUSALS and ACCEPTED: where the old code builds and steps, the same curve;
    where it raises, the same TrainerRefusal."""
    profile, optimization = old
    cases = [(name, kwargs, W, T, LR) for name, W, T, kwargs in GRID + GRID_446] + REFUSALS + ACCEPTED
    compared = refused = 0
    for name, kwargs, W, T, lr in cases:
        try:
            _run_real(optimization.get_scheduler, name, kwargs, W, T, lr)
        except Exception as real:  # noqa: BLE001 - any exception the real code raises is the expectation
            with pytest.raises(TrainerRefusal) as ours:
                S.check_scheduler(name, kwargs, profile=profile, learning_rate=lr, warmup_steps=W, total_steps=T)
            assert (ours.value.error_type, ours.value.message) == (type(real).__name__, real.args[0]), (name, kwargs)
            refused += 1
            continue
        S.check_scheduler(name, kwargs, profile=profile, learning_rate=lr, warmup_steps=W, total_steps=T)
        if name in S.METRIC_DRIVEN:
            continue
        n = _horizon(T)
        ours = S.learning_rates(name, n, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=lr,
                                profile=profile)
        _assert_same(ours, _real_curve(optimization.get_scheduler, name, W, T, kwargs, n, lr))
        own_optimizer = _optimizer(lr)
        own = S.torch_scheduler(own_optimizer, name, warmup_steps=W, total_steps=T, kwargs=kwargs, profile=profile)
        _assert_same(ours, _stepped(own_optimizer, own, n))
        compared += 1
    assert compared > 40 and refused > 30


def test_version_differences_are_real():
    """The differences the profiles encode, stated directly."""
    wsd = {"num_decay_steps": 30, "num_stable_steps": 50, "min_lr_ratio": 0.2}
    new = S.learning_rates("warmup_stable_decay", 100, warmup_steps=10, total_steps=100, kwargs=wsd, learning_rate=LR)
    old = S.learning_rates("warmup_stable_decay", 100, warmup_steps=10, total_steps=100, kwargs=wsd, learning_rate=LR,
                           profile="hf-4.46")
    assert new[0] == pytest.approx(0.2 * LR, rel=1e-12)  # 4.51+: warmup starts at min_lr_ratio
    assert old[0] == 0.0  # 4.46: from 0
    assert np.array_equal(new[10:], old[10:])
    with pytest.raises(TrainerRefusal, match="unexpected keyword argument 'warmup_type'"):
        S.check_scheduler("warmup_stable_decay", {**wsd, "warmup_type": "linear"}, profile="hf-4.46",
                          learning_rate=LR, warmup_steps=10, total_steps=100)
    # timescale reaches the schedule only in 5.x; before, get_scheduler drops the kwargs
    args = {"warmup_steps": 10, "total_steps": 100, "kwargs": {"timescale": 40}, "learning_rate": LR}
    assert S.learning_rates("inverse_sqrt", 60, **args)[50] == pytest.approx(LR / math.sqrt((50 - 10 + 40) / 40))
    assert S.learning_rates("inverse_sqrt", 60, profile="hf-4.57", **args)[50] == pytest.approx(LR * math.sqrt(10 / 50))
    assert S.available_schedulers("hf-4.51") == tuple(n for n in S.SCHEDULER_TYPES if n != "cosine_warmup_with_min_lr")
    assert S.available_schedulers("hf-4.57") == S.SCHEDULER_TYPES


# --------------------------------------------------------------------------- golden Trainer runs


def _golden_cases():
    for path in sorted(GOLDEN.glob("hf-*.json")):
        data = json.loads(path.read_text())
        for item in data["cases"]:
            if item["result"]["status"] == "ok":
                yield pytest.param(data["profile"], item["case"], item["result"],
                                   id=f"{data['profile']}:{item['case']['id']}")


GOLDEN_CASES = list(_golden_cases())


def test_golden_files_present():
    profiles = {case.values[0] for case in GOLDEN_CASES}
    assert profiles == {"hf-5", "hf-4.57", "hf-4.51", "hf-4.46"}, f"golden runs missing under {GOLDEN}"
    assert len(GOLDEN_CASES) > 100


@pytest.mark.parametrize("profile, case, result", GOLDEN_CASES)
def test_golden_lr_per_step(profile, case, result):
    expected = np.array(result["lr_per_step"], dtype=np.float64)
    ours = S.learning_rates(case["lr_scheduler_type"], len(expected), warmup_steps=result["warmup_steps_computed"],
                            total_steps=result["state_max_steps"], kwargs=case["lr_scheduler_kwargs"] or {},
                            learning_rate=case["learning_rate"], profile=profile)
    _assert_same(ours, expected)


# --------------------------------------------------------------------------- worked values (trainer-math.md §7)


def _lrs(name, n, W, T, kwargs=None, lr=2e-4, **extra):
    return S.learning_rates(name, n, warmup_steps=W, total_steps=T, kwargs=kwargs or {}, learning_rate=lr, **extra)


def test_edge_case_11_linear_first_and_last_update():
    lr = _lrs("linear", 101, 10, 100)
    assert lr[0] == 0.0
    assert lr[1] == pytest.approx(2e-5, rel=1e-12)
    assert lr[10] == pytest.approx(2e-4, rel=1e-12)
    assert lr[99] == pytest.approx(2e-4 / 90, rel=1e-12)
    assert np.count_nonzero(lr[:100] == 0) == 1  # LR 0 is used once, by the first update
    assert lr[100] == 0.0  # λ(100), never used by the Trainer


def test_edge_case_12_cosine_last_update_and_cosine_warmup_with_min_lr():
    lr = _lrs("cosine", 100, 0, 100)
    assert lr[99] / 2e-4 == pytest.approx(0.5 * (1 + math.cos(0.99 * math.pi)), rel=1e-12)
    assert lr[99] / 2e-4 == pytest.approx(2.47e-4, rel=1e-2)
    assert lr[99] == pytest.approx(4.9e-8, rel=1e-2)
    lr = _lrs("cosine_warmup_with_min_lr", 100, 10, 100, {"min_lr_rate": 0.1})
    assert lr[0] == pytest.approx(0.1 * 2e-4, rel=1e-12)
    assert lr[9] == 2e-4
    assert lr[10] / 2e-4 == pytest.approx(0.9997, abs=1e-4)
    assert lr[99] == 0.1 * 2e-4  # exactly the floor at the last update


def test_edge_case_13_warmup_stable_decay():
    lr = _lrs("warmup_stable_decay", 100, 10, 100, {"num_decay_steps": 60})
    assert np.all(lr[10:40] == 2e-4)  # updates 11-40 at the peak
    assert np.all(np.diff(lr[40:]) < 0)  # decay over updates 41-100
    assert lr[99] / 2e-4 == pytest.approx(0.5 * (1 + math.cos(math.pi * 59 / 60)), rel=1e-12)
    assert lr[99] / 2e-4 == pytest.approx(6.9e-4, rel=1e-2)


def test_edge_case_14_spot_values():
    assert _lrs("inverse_sqrt", 41, 10, 100)[40] == pytest.approx(0.5 * 2e-4, rel=1e-12)
    assert _lrs("inverse_sqrt", 1, 0, 100)[0] == 2e-4  # timescale 10000, no division by zero
    lam = S.lr_lambda("polynomial", np.array([55]), warmup_steps=10, total_steps=100, kwargs={"lr_end": 1e-7},
                      learning_rate=2e-4)
    assert lam[0] == pytest.approx(0.50025, rel=1e-12)
    assert np.all(_lrs("constant", 30, 20, 100) == 2e-4)


def test_edge_case_30_past_the_horizon():
    T = 100
    lam = S.lr_lambda("cosine", np.array([T, T + 50, T + 100]), warmup_steps=0, total_steps=T, kwargs={},
                      learning_rate=LR)
    assert lam[0] == pytest.approx(0.0, abs=1e-15)
    assert lam[1] == pytest.approx(0.5, rel=1e-12)  # p = 1.5: the cosine climbs back up
    assert lam[2] == pytest.approx(1.0, rel=1e-12)
    assert np.all(_lrs("linear", 2 * T, 0, T)[T:] == 0.0)
    assert np.all(_lrs("cosine_with_restarts", 2 * T, 0, T, {"num_cycles": 3})[T:] == 0.0)
    assert _lrs("polynomial", 2 * T, 0, T)[T + 1:] == pytest.approx([1e-7] * (T - 1), rel=1e-12)
    assert np.all(_lrs("warmup_stable_decay", 2 * T, 0, T, {"num_decay_steps": 10, "min_lr_ratio": 0.1})[T:]
                  == 0.1 * 2e-4)


# --------------------------------------------------------------------------- API behaviour


def test_lr_lambda_any_shape_and_order_equals_learning_rates():
    rng = np.random.default_rng(7)
    s = rng.integers(0, 300, size=(3, 40))
    for name, W, T, kwargs in GRID:
        lam = S.lr_lambda(name, s, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
        assert lam.shape == s.shape and lam.dtype == np.float64
        curve = S.learning_rates(name, 300, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
        assert np.array_equal(LR * lam, curve[s]), name


def test_long_runs_cross_block_boundaries_like_the_scalar_lambda():
    n = 3 * S._BLOCK + 17
    T = 2 * S._BLOCK + 5
    for name, kwargs in [("cosine", {}), ("warmup_stable_decay", {"num_decay_steps": S._BLOCK}),
                         ("cosine_warmup_with_min_lr", {"min_lr_rate": 0.1})]:
        curve = S.learning_rates(name, n, warmup_steps=1000, total_steps=T, kwargs=kwargs, learning_rate=LR)
        step_lambda = S.torch_scheduler(_optimizer(LR), name, warmup_steps=1000, total_steps=T,
                                        kwargs=kwargs).lr_lambdas[0]
        for s in [0, 999, 1000, S._BLOCK - 1, S._BLOCK, S._BLOCK + 1, 2 * S._BLOCK, T - 1, T, n - 1]:
            assert curve[s] == LR * step_lambda(s), (name, s)


def test_first_and_empty():
    full = _lrs("cosine", 50, 5, 40)
    assert np.array_equal(_lrs("cosine", 50, 5, 40, first=11), full[10:])
    assert _lrs("cosine", 5, 5, 40, first=6).shape == (0,)
    assert _lrs("linear", 0, 0, 10).shape == (0,)
    with pytest.raises(ValueError):
        _lrs("linear", 10, 0, 10, first=0)


def test_nan_where_the_real_scheduler_raises():
    lr = _lrs("polynomial", 12, 10, 10)
    assert np.all(np.isfinite(lr[:10])) and math.isnan(lr[10])  # λ(T) divides 0 by 0
    assert lr[11] == pytest.approx(1e-7, rel=1e-12)
    lr = _lrs("inverse_sqrt", 8, 2, 10, {"timescale": -3})
    assert np.all(np.isfinite(lr[:5])) and np.all(np.isnan(lr[5:]))
    lr = _lrs("warmup_stable_decay", 12, 2, 10, {"num_decay_steps": None, "num_stable_steps": 3})
    assert np.array_equal(lr[:5], _lrs("warmup_stable_decay", 5, 2, 10, {"num_decay_steps": 1, "num_stable_steps": 3}))
    assert np.all(np.isnan(lr[5:]))  # (W + S) + None from s = W + S on
    lr = _lrs("warmup_stable_decay", 6, 2, 10, {"num_decay_steps": 4, "num_stable_steps": None}, profile="hf-4.46")
    assert np.array_equal(lr[:2], [0.0, LR / 2]) and np.all(np.isnan(lr[2:]))


def test_metric_driven_and_unknown_inputs():
    assert S.METRIC_DRIVEN == frozenset({"reduce_lr_on_plateau", "greedy"})
    assert "greedy" in S.known_schedulers("hf-5") and "greedy" not in S.known_schedulers("hf-4.57")
    with pytest.raises(SetupError):
        _lrs("reduce_lr_on_plateau", 10, 0, 10)
    plateau = S.torch_scheduler(_optimizer(LR), "reduce_lr_on_plateau", warmup_steps=0, total_steps=10,
                                kwargs={"factor": 0.5, "patience": 0})
    assert isinstance(plateau, torch.optim.lr_scheduler.ReduceLROnPlateau)
    plateau.step(1.0)
    plateau.step(2.0)
    assert plateau.get_last_lr() == [LR * 0.5]
    with pytest.raises(SetupError):
        S.check_scheduler("greedy", {}, profile="hf-5", learning_rate=LR, warmup_steps=0, total_steps=10)
    with pytest.raises(TrainerRefusal, match="greedy is not a valid SchedulerType"):
        S.check_scheduler("greedy", {}, profile="hf-4.57", learning_rate=LR, warmup_steps=0, total_steps=10)
    with pytest.raises(SetupError):
        S.available_schedulers("hf-3")
    with pytest.raises(SetupError):  # text where a number belongs: StepLab says so itself
        S.check_scheduler("cosine", {"num_cycles": "half"}, profile="hf-5", learning_rate=LR, warmup_steps=0,
                          total_steps=10)
    with pytest.raises(SetupError):  # None where only a number works
        S.check_scheduler("polynomial", {"lr_end": None}, profile="hf-5", learning_rate=LR, warmup_steps=0,
                          total_steps=10)
    with pytest.raises(TrainerRefusal) as refused:
        _lrs("cosine_warmup_with_min_lr", 10, 2, 10, {"min_lr_rate": 0.1}, profile="hf-4.51")
    assert refused.value.error_type == "ValueError" and refused.value.field == "lr_scheduler_type"


def test_importing_schedules_stays_light():
    code = ("import sys, steplab.trainer.schedules; "
            "print(sorted(m for m in ('torch', 'transformers', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- properties


DECAYING = ["linear", "cosine", "cosine_with_restarts", "polynomial", "constant_with_warmup", "inverse_sqrt",
            "cosine_with_min_lr", "cosine_warmup_with_min_lr", "warmup_stable_decay"]
rates = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def schedules(draw):
    """(name, W, T, kwargs, learning_rate) the real 5.x Trainer builds and steps without error."""
    name = draw(st.sampled_from(DECAYING))
    T = draw(st.integers(1, 300))
    W = draw(st.integers(0, T + 20))
    learning_rate = draw(st.floats(1e-7, 1.0))
    kwargs: dict = {}
    if name in ("cosine", "cosine_with_restarts", "cosine_with_min_lr", "cosine_warmup_with_min_lr"):
        kwargs["num_cycles"] = draw(st.sampled_from([0.5, 0.25, 1, 2, 1.75]))
    if name == "polynomial":
        assume(W != T)
        kwargs.update(power=draw(st.floats(0.1, 4.0)), lr_end=draw(st.floats(0.0, 0.99)) * learning_rate)
    if name == "inverse_sqrt":
        kwargs["timescale"] = draw(st.none() | st.integers(1, 1000))
    if name in ("cosine_with_min_lr", "cosine_warmup_with_min_lr"):
        if draw(st.booleans()):
            kwargs["min_lr_rate"] = draw(rates)
        else:
            kwargs["min_lr"] = draw(rates) * learning_rate
    if name == "cosine_warmup_with_min_lr":
        kwargs["warmup_lr_rate"] = draw(st.none() | rates)
    if name == "warmup_stable_decay":
        kwargs.update(num_decay_steps=draw(st.integers(0, T)), num_stable_steps=draw(st.none() | st.integers(0, T)),
                      warmup_type=draw(st.sampled_from(["linear", "cosine", "1-sqrt"])),
                      decay_type=draw(st.sampled_from(["linear", "cosine", "1-sqrt"])), min_lr_ratio=draw(rates))
    return name, W, T, kwargs, learning_rate


@settings(max_examples=100, deadline=None)
@given(schedules())
def test_property_lr_within_zero_and_peak_inside_the_horizon(case):
    name, W, T, kwargs, learning_rate = case
    lr = S.learning_rates(name, T, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=learning_rate)
    assert lr.shape == (T,)
    assert np.all(lr >= 0.0)
    assert np.all(lr <= learning_rate * (1 + 1e-12))


@settings(max_examples=100, deadline=None)
@given(schedules())
def test_property_equals_the_real_5_lambda(hf5, case):
    """Random configurations against the lambda inside the real 5.24 scheduler, past the horizon too."""
    name, W, T, kwargs, learning_rate = case
    n = _horizon(T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = hf5(name, _optimizer(learning_rate), num_warmup_steps=W, num_training_steps=T,
                   scheduler_specific_kwargs=dict(kwargs)).lr_lambdas[0]
    ours = S.lr_lambda(name, np.arange(n), warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=learning_rate)
    expected = np.array([real(s) for s in range(n)], dtype=np.float64)
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=0)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 500), st.integers(1, 500), st.floats(1e-8, 10.0), st.sampled_from(S.PROFILES))
def test_property_constant_ignores_warmup(W, T, learning_rate, profile):
    lr = S.learning_rates("constant", T + 10, warmup_steps=W, total_steps=T, kwargs={}, learning_rate=learning_rate,
                          profile=profile)
    assert np.all(lr == learning_rate)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["linear", "cosine", "polynomial", "constant_with_warmup", "inverse_sqrt"]),
       st.integers(1, 200), st.integers(1, 200))
def test_property_warmup_ramps_from_zero_to_peak(name, W, extra):
    T = W + extra
    lr = S.learning_rates(name, T, warmup_steps=W, total_steps=T, kwargs={}, learning_rate=LR)
    assert lr[0] == 0.0  # the first update is taken at LR 0
    assert np.all(np.diff(lr[: W + 1]) > 0)  # rising through warmup
    assert lr[W] == pytest.approx(LR, rel=1e-12)  # update W + 1 at the peak
    assert np.all(np.diff(lr[W:]) <= 0)  # then never rising within the horizon


@pytest.mark.parametrize(("name", "W", "T", "kwargs"), GRID)
def test_public_step_function_matches_the_vectorised_curve(name, W, T, kwargs):
    """`step_function` (the λ handed to LambdaLR and printed in the plain-torch snippet) is the curve, step by step."""
    if name == "reduce_lr_on_plateau":
        with pytest.raises(SetupError):
            S.step_function(name, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
        return
    curve = S.learning_rates(name, T + 5, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
    lam = S.step_function(name, warmup_steps=W, total_steps=T, kwargs=kwargs, learning_rate=LR)
    np.testing.assert_allclose([LR * lam(k) for k in range(T + 5)], curve, rtol=1e-12, atol=1e-18)


# --------------------------------------------------------------------------- the registry: one entry per schedule


@pytest.mark.parametrize("profile", S.PROFILES)
def test_every_argument_a_profile_forwards_has_its_widget_in_the_entry(profile):
    """A schedule's entry says how a page edits each argument its form takes: a new schedule or argument without
    one fails here, not on the page (the metric-driven one's torch arguments are not edited there)."""
    for name in (n for n in S.available_schedulers(profile) if n not in S.METRIC_DRIVEN):
        for key in S.scheduler_kwargs(name, profile):
            edited = S.widget(name, key)
            if isinstance(edited, S.Choice):  # every option is one the real code accepts
                for option in edited.options:
                    S.check_scheduler(name, {**S.starter_kwargs(name, profile, 10, 100), key: option}, profile=profile,
                                      learning_rate=LR, warmup_steps=10, total_steps=100)
            else:
                assert edited.step > 0 and edited.format.startswith("%"), (name, key)


def test_an_entry_offers_a_form_to_every_release_a_profile_runs():
    releases = {profiles.PROFILES[p].scheduler_release for p in S.PROFILES}
    for name, entry in S.SCHEDULES.items():
        for release in releases:
            assert entry.form(release).call.func, (name, release)
