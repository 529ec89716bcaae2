"""Learning-rate schedules of the Hugging Face Trainer, per transformers release: the registry.

Every schedule is a multiplier λ(s) of the peak learning rate, where s is the scheduler index:
the number of `scheduler.step()` calls so far. The Trainer steps the scheduler once after every
optimizer update, so update k (k = 1, 2, ...) uses `learning_rate * λ(k - 1)`.

**A schedule is one entry** (`Schedule`), written in one section below as transformers' `optimization.py` keeps a
schedule and its function side by side: the releases whose `SchedulerType` offers it (`since`), and for each
form `get_scheduler` has built it in (`Form`): how it is called (signature and defaults, for the Trainer's own
errors), λ twice, on purpose,

* a vectorised numpy function (`_linear`, `_cosine`, ...) that draws a whole curve at once, and
* a plain per-step function (`_linear_at`, `_cosine_at`, ...) that `torch_scheduler` hands to
  `torch.optim.lr_scheduler.LambdaLR`, short enough for a learner to copy,

the one function that works out the arguments both take for a run (min_lr as a share of the peak, τ's default,
WSD's stable phase), the checks its body and its steps raise, and the values it cannot be built without; then,
for the whole entry, how a page edits each argument (`Number`, `Choice`), which arguments exclude each other, and
where the curve turns. Adding a schedule is adding its section and its entry in `SCHEDULES`; the release profiles
(`steplab.trainer.profiles`) say which `optimization.py` each release runs (`scheduler_release`).

Both forms follow `transformers/optimization.py` operation for operation. Where numpy's cos/sqrt/pow are
libm's (checked on x86-64 without AVX-512: numpy then loops over the same libm calls as Python's
`math`), the curves equal the real scheduler bit for bit; the tests demand 1e-12 relative. numpy's
`power` gets an array exponent, since a scalar 2.0 or 0.5 would turn it into x*x or sqrt. Where the
real code raises while stepping (a division by zero, None added to a step count), the curve holds NaN.
Curves are evaluated in blocks of 2**15 steps: 10**6 steps then allocate no large temporaries.

Release differences (read in the source of 4.46.3, 4.51.3, 4.57.6 and 5.24.0):

* `cosine_warmup_with_min_lr` exists from 4.57 on; 5.x also has `greedy` (metric-driven, not drawn).
* 4.46: `warmup_stable_decay` needs `num_stable_steps` and `num_decay_steps`, always warms up
  linearly from 0 and always decays along a cosine; from 4.51 on it takes `num_training_steps`,
  `warmup_type`, `decay_type`, and `min_lr_ratio` also lifts the warmup.
* Before 5.x `get_scheduler` drops `lr_scheduler_kwargs` for `inverse_sqrt`, so `timescale`
  cannot be set (it is always `warmup_steps or 10000`).
* `constant` and `constant_with_warmup` ignore `lr_scheduler_kwargs` in every release.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial
from typing import Any

import numpy as np

from steplab.errors import SetupError, TrainerRefusal
from steplab.trainer import profiles
from steplab.trainer.profiles import release_key

PROFILES: tuple[str, ...] = tuple(profiles.PROFILES)  # the profile ids, from the release table

_REQUIRED = object()  # marks a parameter without a default
_EVERY = "0"  # `since` / a form's first release: every release modelled (the oldest scheduler code read is 4.46.3)


# ---------------------------------------------------------------------------------------------
# What an entry is made of
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    """How `get_scheduler` calls one schedule function: `func(optimizer, **passed, **lr_scheduler_kwargs)`."""

    func: str  # the name Python prints in a TypeError
    params: dict[str, Any]  # keyword parameters after `optimizer`, in signature order, with defaults
    passed: tuple[str, ...] = ()  # filled in by get_scheduler itself (num_warmup_steps, num_training_steps)
    forwards_kwargs: bool = True  # False: get_scheduler drops lr_scheduler_kwargs
    none_ok: frozenset[str] = field(default_factory=frozenset)  # parameters where None means "unset"


@dataclass(frozen=True)
class Number:
    """A numeric argument as a page edits it: the number format and the step of its input."""

    format: str = "%g"
    step: float = 1.0
    whole: bool = False  # a count of steps: a whole float typed into the input is kept as an int


@dataclass(frozen=True)
class Choice:
    """A text argument with a fixed set of values; any other value reaches the real code's own check."""

    options: tuple[str, ...]


Arguments = Callable[[dict[str, Any], int, int, float], dict[str, Any]]
"""(resolved kwargs, W, T, peak learning rate) -> the keyword arguments the curve and the step function take."""


def _no_body_check(kw: dict[str, Any], learning_rate: float) -> None:
    return None


def _no_step_check(kw: dict[str, Any], W: int, T: int, L: int, learning_rate: float) -> None:
    return None


def _no_starters(W: int, T: int) -> dict[str, Any]:
    return {}


def _no_turns(kwargs: Mapping[str, Any], W: int, T: int) -> tuple[float, ...]:
    return ()


@dataclass(frozen=True)
class Form:
    """A schedule as one release's `get_scheduler` builds it."""

    call: _Call
    curve: Callable[..., np.ndarray]  # λ at many scheduler indices at once (float64 array in, array out)
    step: Callable[..., float]  # λ at one scheduler index: what LambdaLR calls
    arguments: Arguments
    check: Callable[[dict[str, Any], float], None] = _no_body_check  # raised inside the function and torch's init
    check_steps: Callable[[dict[str, Any], int, int, int, float], None] = _no_step_check  # raised by step() for s
    # in 0..L (W, T, L: L = T unless the run takes fewer updates)
    starters: Callable[[int, int], dict[str, Any]] = _no_starters  # values it cannot be built without (W, T)


@dataclass(frozen=True)
class Schedule:
    """One schedule: the releases that offer it, its forms, and how a page edits its arguments."""

    since: str  # the first release whose `SchedulerType` has it (`_EVERY`: all)
    forms: tuple[tuple[str, Form], ...]  # (first release, form), oldest first: a release gets the newest not after it
    widgets: Mapping[str, Number | Choice] = field(default_factory=dict)  # every argument it forwards
    exclusive: tuple[tuple[str, str], ...] = ()  # pairs of arguments of which only one may be set
    turns: Callable[[Mapping[str, Any], int, int], tuple[float, ...]] = _no_turns  # where the curve turns (drawing)
    warms_up: bool = True  # False: warmup_steps changes nothing (`constant`, the metric-driven one)
    metric_driven: bool = False  # steps on a metric: no curve in advance

    def form(self, release: str) -> Form:
        """The form `get_scheduler` of `release` builds."""
        key = release_key(release)
        return [form for first, form in self.forms if release_key(first) <= key][-1]


def _always(form: Form) -> tuple[tuple[str, Form], ...]:
    return ((_EVERY, form),)


def _refuse(error_type: str, message: str, field_name: str = "lr_scheduler_kwargs") -> TrainerRefusal:
    return TrainerRefusal(error_type, message, field_name)


def _division_message(numerator: Any, denominator: Any) -> str:
    """Python's ZeroDivisionError text: int / int and float division say it differently."""
    both_int = isinstance(numerator, int) and isinstance(denominator, int)
    return "division by zero" if both_int else "float division by zero"


def _metric_driven(name: str) -> SetupError:
    return SetupError("setup.metric_driven", field="lr_scheduler_type", scheduler=name)


# Vectorised helpers. s holds scheduler indices as float64: whole numbers below 2**53, so every sum,
# difference and quotient of them rounds exactly as the real code's int arithmetic does. The
# operations keep the real code's order, and np.cos / np.sqrt / libm pow give Python's bits.


def _pow(base: np.ndarray, exponent: float) -> np.ndarray:
    """base ** exponent with libm's pow, like Python (numpy turns ** 2.0 and ** 0.5 into x*x and sqrt)."""
    return np.power(base, np.full(base.shape, float(exponent)))


def _ramp(s: np.ndarray, W: float) -> np.ndarray:
    """Linear warmup s / W: 0 at s = 0, 1 at s = W."""
    return s / float(max(1, W))


def _progress(s: np.ndarray, W: int, T: int) -> np.ndarray:
    """p = (s - W) / (T - W): 0 when warmup ends, 1 at the horizon T, more past it."""
    return (s - W) / float(max(1, T - W))


_W_T = {"num_warmup_steps": _REQUIRED, "num_training_steps": _REQUIRED}
_BOTH = ("num_warmup_steps", "num_training_steps")
_CYCLES = Number("%g", 0.5)


def _warmup_only(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {"W": W}


def _warmup_and_horizon(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {"W": W, "T": T}


def _cycles(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {"W": W, "T": T, "num_cycles": kw["num_cycles"]}


def _none(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {}


# ---------------------------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------------------------


def _linear(s: np.ndarray, W: int, T: int) -> np.ndarray:
    """Warmup, then max(0, (T - s) / (T - W)): 0 at s = T and after."""
    decay = np.maximum(0.0, (T - s) / float(max(1, T - W)))
    return np.where(s < W, _ramp(s, W), decay)


def _linear_at(step: int, W: int, T: int) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    return max(0.0, float(T - step) / float(max(1, T - W)))


LINEAR = Schedule(_EVERY, _always(Form(
    _Call("get_linear_schedule_with_warmup", {**_W_T, "last_epoch": -1}, _BOTH),
    _linear, _linear_at, _warmup_and_horizon)))


# ---------------------------------------------------------------------------------------------
# cosine
# ---------------------------------------------------------------------------------------------


def _cosine(s: np.ndarray, W: int, T: int, num_cycles: float) -> np.ndarray:
    """Warmup, then max(0, ½(1 + cos(2π·c·p))); with c = ½ it climbs back up past T."""
    p = _progress(s, W, T)
    decay = np.maximum(0.0, 0.5 * (1.0 + np.cos(math.pi * float(num_cycles) * 2.0 * p)))
    return np.where(s < W, _ramp(s, W), decay)


def _cosine_at(step: int, W: int, T: int, num_cycles: float = 0.5) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    progress = float(step - W) / float(max(1, T - W))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))


COSINE = Schedule(_EVERY, _always(Form(
    _Call("get_cosine_schedule_with_warmup", {**_W_T, "num_cycles": 0.5, "last_epoch": -1}, _BOTH),
    _cosine, _cosine_at, _cycles)), widgets={"num_cycles": _CYCLES})


# ---------------------------------------------------------------------------------------------
# cosine_with_restarts
# ---------------------------------------------------------------------------------------------


def _cosine_with_restarts(s: np.ndarray, W: int, T: int, num_cycles: float) -> np.ndarray:
    """Warmup, then c half-cosines max(0, ½(1 + cos(π·((c·p) mod 1)))), each from 1 again; 0 from p = 1 on."""
    p = _progress(s, W, T)
    wave = np.maximum(0.0, 0.5 * (1.0 + np.cos(math.pi * ((float(num_cycles) * p) % 1.0))))
    return np.where(s < W, _ramp(s, W), np.where(p >= 1.0, 0.0, wave))


def _cosine_with_restarts_at(step: int, W: int, T: int, num_cycles: float = 1) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    progress = float(step - W) / float(max(1, T - W))
    if progress >= 1.0:
        return 0.0
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(num_cycles) * progress) % 1.0))))


COSINE_WITH_RESTARTS = Schedule(_EVERY, _always(Form(
    _Call("get_cosine_with_hard_restarts_schedule_with_warmup", {**_W_T, "num_cycles": 1, "last_epoch": -1}, _BOTH),
    _cosine_with_restarts, _cosine_with_restarts_at, _cycles)), widgets={"num_cycles": _CYCLES})


# ---------------------------------------------------------------------------------------------
# polynomial
# ---------------------------------------------------------------------------------------------


def _polynomial(s: np.ndarray, W: int, T: int, lr_end: float, power: float, lr_init: float) -> np.ndarray:
    """Warmup, then ((lr_init - lr_end)·(1 - (s - W)/(T - W))^power + lr_end) / lr_init; lr_end / lr_init past T.

    NaN where the real code raises: s = T when T = W (0 / 0), 0.0 ** negative power, lr_init = 0.
    """
    if T == W or not lr_init:
        decay, after = np.full(s.shape, math.nan), (lr_end / lr_init if lr_init else math.nan)
    else:
        pct_remaining = 1 - (s - W) / (T - W)
        decay = ((lr_init - lr_end) * _pow(pct_remaining, power) + lr_end) / lr_init
        if power < 0:
            decay[pct_remaining == 0] = math.nan
        after = lr_end / lr_init
    return np.where(s < W, _ramp(s, W), np.where(s > T, after, decay))


def _polynomial_at(step: int, W: int, T: int, lr_end: float, power: float, lr_init: float) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    if step > T:
        return lr_end / lr_init
    pct_remaining = 1 - (step - W) / (T - W)
    return ((lr_init - lr_end) * pct_remaining**power + lr_end) / lr_init


def _polynomial_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {"W": W, "T": T, "lr_end": kw["lr_end"], "power": kw["power"], "lr_init": lr}


def _polynomial_check(kw: dict[str, Any], learning_rate: float) -> None:
    if not (learning_rate > kw["lr_end"]):
        raise _refuse("ValueError", f"lr_end ({kw['lr_end']}) must be smaller than initial lr ({learning_rate})")


def _polynomial_check_steps(kw: dict[str, Any], W: int, T: int, L: int, learning_rate: float) -> None:
    if W <= L:  # s >= W reaches the decay branch
        if T == W:
            raise _refuse("ZeroDivisionError", _division_message(0, T - W), "warmup_steps")
        if learning_rate == 0:
            raise _refuse("ZeroDivisionError", "float division by zero", "learning_rate")
        if kw["power"] < 0 and L == T:  # (1 - (T - W) / (T - W)) ** power at s = T
            raise _refuse("ZeroDivisionError", "0.0 cannot be raised to a negative power")


POLYNOMIAL = Schedule(_EVERY, _always(Form(
    _Call("get_polynomial_decay_schedule_with_warmup", {**_W_T, "lr_end": 1e-7, "power": 1.0, "last_epoch": -1}, _BOTH),
    _polynomial, _polynomial_at, _polynomial_arguments, _polynomial_check, _polynomial_check_steps)),
    widgets={"lr_end": Number("%.2e", 1e-7), "power": Number("%g", 0.5)})


# ---------------------------------------------------------------------------------------------
# constant, constant_with_warmup (get_scheduler drops lr_scheduler_kwargs for both)
# ---------------------------------------------------------------------------------------------


def _constant(s: np.ndarray) -> np.ndarray:
    """λ = 1; warmup_steps is ignored."""
    return np.ones(s.shape)


def _constant_at(step: int) -> float:
    return 1.0


CONSTANT = Schedule(_EVERY, _always(Form(
    _Call("get_constant_schedule", {"last_epoch": -1}, (), forwards_kwargs=False), _constant, _constant_at, _none)),
    warms_up=False)


def _constant_with_warmup(s: np.ndarray, W: int) -> np.ndarray:
    """s / W during warmup, then 1."""
    return np.where(s < W, s / float(max(1.0, W)), 1.0)


def _constant_with_warmup_at(step: int, W: int) -> float:
    if step < W:
        return float(step) / float(max(1.0, W))
    return 1.0


CONSTANT_WITH_WARMUP = Schedule(_EVERY, _always(Form(
    _Call("get_constant_schedule_with_warmup", {"num_warmup_steps": _REQUIRED, "last_epoch": -1},
          ("num_warmup_steps",), forwards_kwargs=False),
    _constant_with_warmup, _constant_with_warmup_at, _warmup_only)))


# ---------------------------------------------------------------------------------------------
# inverse_sqrt (before 5.x get_scheduler drops lr_scheduler_kwargs here, so timescale cannot be set)
# ---------------------------------------------------------------------------------------------


def _inverse_sqrt(s: np.ndarray, W: int, timescale: float) -> np.ndarray:
    """Warmup, then 1 / sqrt((s - W + τ) / τ). NaN where it raises."""
    if timescale == 0:
        return np.where(s < W, _ramp(s, W), math.nan)
    x = (s + (timescale - W)) / timescale
    decay = np.where(x > 0, 1.0 / np.sqrt(x), math.nan)
    return np.where(s < W, _ramp(s, W), decay)


def _inverse_sqrt_at(step: int, W: int, timescale: float) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    return 1.0 / math.sqrt((step + timescale - W) / timescale)


def _inverse_sqrt_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    timescale = kw.get("timescale")
    return {"W": W, "timescale": (W or 10_000) if timescale is None else timescale}  # τ defaults to W, or 10000


def _inverse_sqrt_check_steps(kw: dict[str, Any], W: int, T: int, L: int, learning_rate: float) -> None:
    timescale = kw.get("timescale")
    if timescale is not None and W <= L:
        if timescale == 0:
            raise _refuse("ZeroDivisionError", _division_message(W, timescale))
        if timescale < 0 and W + math.ceil(-timescale) <= L:  # (s - W + τ) / τ reaches 0 or below
            if float(timescale).is_integer():
                raise _refuse("ZeroDivisionError", "float division by zero")
            raise _refuse("ValueError", "math domain error")


def _inverse_sqrt_form(forwards_kwargs: bool) -> Form:
    return Form(_Call("get_inverse_sqrt_schedule", {"num_warmup_steps": _REQUIRED, "timescale": None, "last_epoch": -1},
                      ("num_warmup_steps",), forwards_kwargs=forwards_kwargs, none_ok=frozenset({"timescale"})),
                _inverse_sqrt, _inverse_sqrt_at, _inverse_sqrt_arguments, check_steps=_inverse_sqrt_check_steps)


INVERSE_SQRT = Schedule(_EVERY, ((_EVERY, _inverse_sqrt_form(False)), ("5", _inverse_sqrt_form(True))),
                        widgets={"timescale": Number("%g", 100.0)})


# ---------------------------------------------------------------------------------------------
# reduce_lr_on_plateau (metric-driven: checked as torch builds it, never drawn)
# ---------------------------------------------------------------------------------------------


_PLATEAU_PARAMS = {
    "mode": "min", "factor": 0.1, "patience": 10, "threshold": 1e-4,
    "threshold_mode": "rel", "cooldown": 0, "min_lr": 0, "eps": 1e-8,
}


def _not_drawn(*args: Any, **kwargs: Any) -> Any:
    raise _metric_driven("reduce_lr_on_plateau")


def _plateau_check(kw: dict[str, Any], learning_rate: float) -> None:
    if kw["factor"] >= 1.0:
        raise _refuse("ValueError", "Factor should be < 1.0.")
    if kw["mode"] not in {"min", "max"}:
        raise _refuse("ValueError", "mode " + kw["mode"] + " is unknown!")
    if kw["threshold_mode"] not in {"rel", "abs"}:
        raise _refuse("ValueError", "threshold mode " + kw["threshold_mode"] + " is unknown!")


REDUCE_LR_ON_PLATEAU = Schedule(_EVERY, _always(Form(
    _Call("ReduceLROnPlateau.__init__", dict(_PLATEAU_PARAMS)), _not_drawn, _not_drawn, _none, _plateau_check)),
    warms_up=False, metric_driven=True)


# ---------------------------------------------------------------------------------------------
# cosine_with_min_lr, cosine_warmup_with_min_lr (4.57 on)
# ---------------------------------------------------------------------------------------------


_MIN_LR = frozenset({"min_lr", "min_lr_rate"})
STARTER_MIN_LR_RATE = 0.1  # the floor a min-LR cosine starts with: it cannot be built without one
_MIN_LR_WIDGETS = {"num_cycles": _CYCLES, "min_lr": Number("%.2e", 1e-6), "min_lr_rate": Number("%g", 0.05)}


def _cosine_with_min_lr(s: np.ndarray, W: int, T: int, num_cycles: float, min_lr_rate: float) -> np.ndarray:
    """Warmup, then the cosine lifted onto the floor ρ: max(0, ½(1 + cos(2π·c·p))·(1 - ρ) + ρ)."""
    p = _progress(s, W, T)
    factor = 0.5 * (1.0 + np.cos(math.pi * float(num_cycles) * 2.0 * p))
    factor = factor * (1 - min_lr_rate) + min_lr_rate
    return np.where(s < W, _ramp(s, W), np.maximum(0, factor))


def _cosine_with_min_lr_at(step: int, W: int, T: int, num_cycles: float, min_lr_rate: float) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    progress = float(step - W) / float(max(1, T - W))
    factor = 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress))
    return max(0, factor * (1 - min_lr_rate) + min_lr_rate)


def _min_lr_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    rate = kw["min_lr_rate"] if kw["min_lr"] is None else kw["min_lr"] / lr  # min_lr is a share of the peak
    return {"W": W, "T": T, "num_cycles": kw["num_cycles"], "min_lr_rate": rate}


def _min_lr_check(kw: dict[str, Any], learning_rate: float) -> None:
    if kw["min_lr"] is not None and kw["min_lr_rate"] is not None:
        raise _refuse("ValueError", "Only one of min_lr or min_lr_rate should be set")
    if kw["min_lr"] is None and kw["min_lr_rate"] is None:
        raise _refuse("ValueError", "One of min_lr or min_lr_rate should be set through the `lr_scheduler_kwargs`")
    if kw["min_lr"] is not None and learning_rate == 0:
        raise _refuse("ZeroDivisionError", _division_message(kw["min_lr"], learning_rate), "learning_rate")


def _min_lr_starters(W: int, T: int) -> dict[str, Any]:
    return {"min_lr_rate": STARTER_MIN_LR_RATE}


COSINE_WITH_MIN_LR = Schedule(_EVERY, _always(Form(
    _Call("get_cosine_with_min_lr_schedule_with_warmup",
          {**_W_T, "num_cycles": 0.5, "last_epoch": -1, "min_lr": None, "min_lr_rate": None}, _BOTH, none_ok=_MIN_LR),
    _cosine_with_min_lr, _cosine_with_min_lr_at, _min_lr_arguments, _min_lr_check, starters=_min_lr_starters)),
    widgets=_MIN_LR_WIDGETS, exclusive=(("min_lr", "min_lr_rate"),))


def _cosine_warmup_with_min_lr(s: np.ndarray, W: int, T: int, num_cycles: float, min_lr_rate: float,
                               warmup_lr_rate: float | None) -> np.ndarray:
    """cosine_with_min_lr shifted one step, p = (s - W + 1)/(T - W), so the last update (s = T - 1) gets ρ;
    warmup (s + 1)/W, or w0 + (1 - w0)·s/(W - 1) when warmup_lr_rate = w0 is set."""
    W, T = float(W), float(T)
    if warmup_lr_rate is None:
        warm = (s + 1.0) / max(1.0, W)
    else:
        w0 = float(warmup_lr_rate)
        warm = w0 + (1.0 - w0) * s / max(1, W - 1)
    p = (s - W + 1.0) / max(1.0, T - W)
    factor = 0.5 * (1.0 + np.cos(math.pi * num_cycles * 2.0 * p))
    factor = factor * (1 - min_lr_rate) + min_lr_rate
    return np.where(s < W, warm, np.maximum(0, factor))


def _cosine_warmup_with_min_lr_at(step: int, W: int, T: int, num_cycles: float, min_lr_rate: float,
                                  warmup_lr_rate: float | None) -> float:
    step, W, T = float(step), float(W), float(T)
    if step < W:
        if warmup_lr_rate is None:
            return (step + 1.0) / max(1.0, W)
        return warmup_lr_rate + (1.0 - warmup_lr_rate) * step / max(1, W - 1)
    progress = (step - W + 1.0) / max(1.0, T - W)
    factor = 0.5 * (1.0 + math.cos(math.pi * num_cycles * 2.0 * progress))
    return max(0, factor * (1 - min_lr_rate) + min_lr_rate)


def _min_lr_warmup_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {**_min_lr_arguments(kw, W, T, lr), "warmup_lr_rate": kw["warmup_lr_rate"]}


COSINE_WARMUP_WITH_MIN_LR = Schedule("4.57", _always(Form(
    _Call("get_cosine_with_min_lr_schedule_with_warmup_lr_rate",
          {**_W_T, "num_cycles": 0.5, "last_epoch": -1, "min_lr": None, "min_lr_rate": None, "warmup_lr_rate": None},
          _BOTH, none_ok=_MIN_LR | {"warmup_lr_rate"}),
    _cosine_warmup_with_min_lr, _cosine_warmup_with_min_lr_at, _min_lr_warmup_arguments, _min_lr_check,
    starters=_min_lr_starters)),
    widgets={**_MIN_LR_WIDGETS, "warmup_lr_rate": Number("%g", 0.05)}, exclusive=(("min_lr", "min_lr_rate"),))


# ---------------------------------------------------------------------------------------------
# warmup_stable_decay: 4.46's form, and 4.51's on (warmup and decay shapes, the stable phase from T)
# ---------------------------------------------------------------------------------------------


WSD_SHAPES = ("linear", "cosine", "1-sqrt")
_WSD_COUNTS = frozenset({"num_stable_steps", "num_decay_steps"})  # None passes binding, fails in arithmetic


def _wsd_warmup(s: np.ndarray, W: int, warmup_type: str, min_lr_ratio: float) -> np.ndarray:
    """WSD warmup (4.51+), q = s/W: q | ½(1 - cos πq) | 1 - √(1 - q), mapped to max(0, f·(1 - m) + m)."""
    m = min_lr_ratio
    q = s / float(max(1, W))
    if warmup_type == "linear":
        rise = q
    elif warmup_type == "cosine":
        rise = 0.5 * (1.0 - np.cos(math.pi * q))
    else:  # "1-sqrt"
        rise = 1.0 - np.sqrt(1.0 - q)
    return np.maximum(0.0, rise * (1.0 - m) + m)


def _wsd(s: np.ndarray, W: int, S: float, D: float | None, warmup_type: str, decay_type: str,
         min_lr_ratio: float, num_cycles: float) -> np.ndarray:
    """Warmup-stable-decay (4.51+): rise over W steps, hold 1 for S (default T - W - D), fall over D to m, then m.

    Fall g(q), q = (s - W - S)/D: 1 - q | ½(1 + cos 2πcq) | 1 - √q, mapped to max(0, g·(1 - m) + m);
    so with m > 0 the warmup also starts at m, not 0. With D unset (None) the real λ raises once it needs D:
    NaN from there.
    """
    m = min_lr_ratio
    warm = _wsd_warmup(s, W, warmup_type, m)
    if D is None:
        return _wsd_unset(s, W, warm, S)
    q = (s - W - S) / float(max(1, D))
    if decay_type == "linear":
        fall = 1.0 - q
    elif decay_type == "cosine":
        fall = 0.5 * (1.0 + np.cos(math.pi * float(num_cycles) * 2.0 * q))
    else:  # "1-sqrt"
        fall = 1.0 - np.sqrt(q)
    decay = np.maximum(0.0, fall * (1.0 - m) + m)
    return np.select([s < W, s < W + S, s < W + S + D], [warm, 1.0, decay], default=float(m))


def _wsd_unset(s: np.ndarray, W: int, warm: np.ndarray, num_stable_steps: float | None) -> np.ndarray:
    """WSD with num_decay_steps (or, in 4.46, num_stable_steps) set to None: the real λ adds None and raises
    at the first step that needs it (NaN here); until then warmup, then 1."""
    if num_stable_steps is None:
        return np.where(s < W, warm, math.nan)
    return np.select([s < W, s < W + num_stable_steps], [warm, 1.0], default=math.nan)


def _wsd_at(step: int, W: int, S: float, D: float, warmup_type: str, decay_type: str,
            min_lr_ratio: float, num_cycles: float) -> float:
    m = min_lr_ratio
    if step < W:
        q = float(step) / float(max(1, W))
        rise = {"linear": q, "cosine": 0.5 * (1.0 - math.cos(math.pi * q)), "1-sqrt": 1.0 - math.sqrt(1.0 - q)}
        return max(0.0, rise[warmup_type] * (1.0 - m) + m)
    if step < W + S:
        return 1.0
    if step < W + S + D:
        q = float(step - W - S) / float(max(1, D))
        if decay_type == "linear":
            fall = 1.0 - q
        elif decay_type == "cosine":
            fall = 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * q))
        else:
            fall = 1.0 - math.sqrt(q)
        return max(0.0, fall * (1.0 - m) + m)
    return m


def _wsd_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    D, S = kw["num_decay_steps"], kw["num_stable_steps"]
    if S is None and D is not None:  # 4.51+: the stable phase fills what warmup and decay leave of T
        S = T - W - D
    return {"W": W, "S": S, "D": D, "warmup_type": kw["warmup_type"], "decay_type": kw["decay_type"],
            "min_lr_ratio": kw["min_lr_ratio"], "num_cycles": kw["num_cycles"]}


def _wsd_check(kw: dict[str, Any], learning_rate: float) -> None:
    if kw["warmup_type"] not in WSD_SHAPES:
        raise _refuse("ValueError", f"Unknown warmup type: {kw['warmup_type']}, expected 'linear', 'cosine' or '1-sqrt'")
    if kw["decay_type"] not in WSD_SHAPES:
        raise _refuse("ValueError", f"Unknown decay type: {kw['decay_type']}, expected 'linear', 'cosine' or '1-sqrt'")
    if kw["num_stable_steps"] is None and kw["num_decay_steps"] is None:  # T - W - num_decay_steps
        raise _refuse("TypeError", "unsupported operand type(s) for -: 'int' and 'NoneType'")


def _wsd_check_steps(kw: dict[str, Any], W: int, T: int, L: int, learning_rate: float) -> None:
    stable, decay = kw["num_stable_steps"], kw["num_decay_steps"]
    if stable is not None and decay is None and max(W, math.ceil(W + stable)) <= L:  # (W + S) + None
        raise _refuse("TypeError", f"unsupported operand type(s) for +: '{type(W + stable).__name__}' and 'NoneType'")


def _wsd_starters(W: int, T: int) -> dict[str, Any]:
    """LLaMA-Factory's fill: decay = (T − W) − ⌊(T − W) / 3⌋ (4.51+: stable defaults to T − W − decay)."""
    span = max(0, T - W)
    return {"num_decay_steps": span - span // 3}


def _wsd_446(s: np.ndarray, W: int, S: float | None, D: float | None, min_lr_ratio: float,
             num_cycles: float) -> np.ndarray:
    """Warmup-stable-decay as in 4.46: linear warmup from 0, hold 1 for S, cosine down to m over D, then m."""
    if S is None or D is None:
        return _wsd_unset(s, W, _ramp(s, W), S)
    m = min_lr_ratio
    q = (s - W - S) / float(max(1, D))
    value = np.maximum(0.0, 0.5 * (1.0 + np.cos(math.pi * float(num_cycles) * 2.0 * q)))
    decay = (1.0 - m) * value + m
    return np.select([s < W, s < W + S, s < W + S + D], [_ramp(s, W), 1.0, decay], default=float(m))


def _wsd_446_at(step: int, W: int, S: float, D: float, min_lr_ratio: float, num_cycles: float) -> float:
    if step < W:
        return float(step) / float(max(1, W))
    if step < W + S:
        return 1.0
    if step < W + S + D:
        q = float(step - W - S) / float(max(1, D))
        value = max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * q)))
        return (1.0 - min_lr_ratio) * value + min_lr_ratio
    return min_lr_ratio


def _wsd_446_arguments(kw: dict[str, Any], W: int, T: int, lr: float) -> dict[str, Any]:
    return {"W": W, "S": kw["num_stable_steps"], "D": kw["num_decay_steps"], "min_lr_ratio": kw["min_lr_ratio"],
            "num_cycles": kw["num_cycles"]}


def _wsd_446_check_steps(kw: dict[str, Any], W: int, T: int, L: int, learning_rate: float) -> None:
    if kw["num_stable_steps"] is None and W <= L:  # W + None once warmup ends
        raise _refuse("TypeError", "unsupported operand type(s) for +: 'int' and 'NoneType'")
    _wsd_check_steps(kw, W, T, L, learning_rate)


def _wsd_446_starters(W: int, T: int) -> dict[str, Any]:
    """Both counts: stable = ⌊(T − W) / 3⌋, decay = the rest."""
    span = max(0, T - W)
    return {"num_stable_steps": span // 3, "num_decay_steps": span - span // 3}


def _wsd_turns(kwargs: Mapping[str, Any], W: int, T: int) -> tuple[float, ...]:
    """Stable → decay and decay → floor, where the setup's counts are numbers (stable from T when unset)."""
    decay, stable = kwargs.get("num_decay_steps"), kwargs.get("num_stable_steps")
    if not _is_number(decay):
        return ()
    if not _is_number(stable):
        stable = T - W - decay
    return (W + stable, W + stable + decay)


_WSD_COUNT = Number("%g", 1.0, whole=True)

WARMUP_STABLE_DECAY = Schedule(_EVERY, (
    (_EVERY, Form(_Call("get_wsd_schedule",
                        {"num_warmup_steps": _REQUIRED, "num_stable_steps": _REQUIRED, "num_decay_steps": _REQUIRED,
                         "min_lr_ratio": 0, "num_cycles": 0.5, "last_epoch": -1}, ("num_warmup_steps",),
                        none_ok=_WSD_COUNTS),
                  _wsd_446, _wsd_446_at, _wsd_446_arguments, check_steps=_wsd_446_check_steps,
                  starters=_wsd_446_starters)),
    ("4.51", Form(_Call("get_wsd_schedule",
                        {"num_warmup_steps": _REQUIRED, "num_decay_steps": _REQUIRED, "num_training_steps": None,
                         "num_stable_steps": None, "warmup_type": "linear", "decay_type": "cosine",
                         "min_lr_ratio": 0, "num_cycles": 0.5, "last_epoch": -1}, _BOTH, none_ok=_WSD_COUNTS),
                  _wsd, _wsd_at, _wsd_arguments, _wsd_check, _wsd_check_steps, _wsd_starters)),
), widgets={"num_stable_steps": _WSD_COUNT, "num_decay_steps": _WSD_COUNT, "min_lr_ratio": Number("%g", 0.05),
            "num_cycles": _CYCLES, "warmup_type": Choice(WSD_SHAPES), "decay_type": Choice(WSD_SHAPES)},
    turns=_wsd_turns)


# ---------------------------------------------------------------------------------------------
# The registry, in `SchedulerType` order
# ---------------------------------------------------------------------------------------------


SCHEDULES: dict[str, Schedule] = {
    "linear": LINEAR,
    "cosine": COSINE,
    "cosine_with_restarts": COSINE_WITH_RESTARTS,
    "polynomial": POLYNOMIAL,
    "constant": CONSTANT,
    "constant_with_warmup": CONSTANT_WITH_WARMUP,
    "inverse_sqrt": INVERSE_SQRT,
    "reduce_lr_on_plateau": REDUCE_LR_ON_PLATEAU,
    "cosine_with_min_lr": COSINE_WITH_MIN_LR,
    "cosine_warmup_with_min_lr": COSINE_WARMUP_WITH_MIN_LR,
    "warmup_stable_decay": WARMUP_STABLE_DECAY,
}
UNMODELLED: dict[str, str] = {"greedy": "5"}
"""`SchedulerType` members StepLab does not model, with the first release that has them (5.x's metric-driven GreedyLR)."""

SCHEDULER_TYPES: tuple[str, ...] = tuple(SCHEDULES)
SCHEDULER_NAMES: tuple[str, ...] = (*SCHEDULER_TYPES, *UNMODELLED)
"""Every name some profile's `SchedulerType` accepts: the modelled ones and 5.x's metric-driven `greedy`."""
METRIC_DRIVEN: frozenset[str] = frozenset({*(n for n, s in SCHEDULES.items() if s.metric_driven), *UNMODELLED})


def _release(profile: str) -> str:
    """The release whose `optimization.py` the profile's Trainer runs (its row's `scheduler_release`)."""
    if profile not in profiles.PROFILES:
        raise SetupError("setup.unknown_profile", field="profile", value=repr(profile), choices=str(list(PROFILES)))
    return profiles.PROFILES[profile].scheduler_release


@lru_cache(maxsize=32)
def _enum_values(release: str) -> tuple[str, ...]:
    """`SchedulerType` members of a release in enum order: the list the "is not a valid SchedulerType" message prints."""
    key = release_key(release)
    offered = {**{name: entry.since for name, entry in SCHEDULES.items()}, **UNMODELLED}
    return tuple(name for name, since in offered.items() if release_key(since) <= key)


def known_schedulers(profile: str) -> tuple[str, ...]:
    """Every name this profile's `SchedulerType` accepts, drawable or not (5.x's `greedy` included)."""
    return _enum_values(_release(profile))


def available_schedulers(profile: str) -> tuple[str, ...]:
    """The scheduler types the Trainer of this profile knows, in `SchedulerType` order."""
    known = _enum_values(_release(profile))
    return tuple(name for name in SCHEDULER_TYPES if name in known)


def _form(name: str, profile: str) -> Form:
    return _release_form(name, _release(profile))


@cache
def _release_form(name: str, release: str) -> Form:
    return SCHEDULES[name].form(release)


def scheduler_kwargs(name: str, profile: str = "hf-5") -> dict[str, object]:
    """The `lr_scheduler_kwargs` this profile's Trainer passes on for `name`, with defaults (None: required/unset).

    Empty where `get_scheduler` drops the kwargs (`constant`, `constant_with_warmup`, and `inverse_sqrt`
    before 5.x). `last_epoch` (resume state) is left out.
    """
    call = _form(name, profile).call
    if not call.forwards_kwargs:
        return {}
    return {key: (None if value is _REQUIRED else value) for key, value in call.params.items()
            if key not in call.passed and key != "last_epoch"}


def widget(name: str, key: str) -> Number | Choice:
    """How a page edits argument `key` of schedule `name`."""
    return SCHEDULES[name].widgets[key]


def starter_kwargs(name: str, profile: str, warmup: int, total: int) -> dict[str, object]:
    """Values a scheduler cannot be built without: a floor for the min-LR cosines, step counts for WSD."""
    return dict(_form(name, profile).starters(warmup, total)) if name in SCHEDULES else {}


def exclusive_with(key: str) -> tuple[str, ...]:
    """The arguments `key` excludes in any schedule (`min_lr` and `min_lr_rate`: only one may be set)."""
    return tuple(dict.fromkeys(other for entry in SCHEDULES.values() for pair in entry.exclusive if key in pair
                               for other in pair if other != key))


def counts_steps(key: str) -> bool:
    """Argument `key` is a count of steps wherever it appears (a whole float is kept as an int)."""
    return any(isinstance(w := entry.widgets.get(key), Number) and w.whole for entry in SCHEDULES.values())


def turns(name: str, kwargs: Mapping[str, Any], warmup: int, total: int) -> tuple[float, ...]:
    """Scheduler indices where the curve of `name` turns (a drawing keeps the updates around them)."""
    return SCHEDULES[name].turns(kwargs, warmup, total) if name in SCHEDULES else ()


def warms_up(name: str) -> bool:
    """`warmup_steps` shapes this schedule (`constant` and the metric-driven ones ignore it)."""
    return name in SCHEDULES and SCHEDULES[name].warms_up


# ---------------------------------------------------------------------------------------------
# Checks: what the real Trainer raises
# ---------------------------------------------------------------------------------------------


def _missing_message(func: str, missing: list[str]) -> str:
    """CPython's text for missing positional arguments."""
    quoted = [f"'{name}'" for name in missing]
    if len(quoted) == 1:
        names = quoted[0]
    elif len(quoted) == 2:
        names = f"{quoted[0]} and {quoted[1]}"
    else:
        names = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    plural = "argument" if len(missing) == 1 else "arguments"
    return f"{func}() missing {len(missing)} required positional {plural}: {names}"


def _check_binding(call: _Call, kwargs: Mapping[str, Any]) -> None:
    """The TypeErrors Python raises while calling `call.func(optimizer, **passed, **kwargs)`."""
    for key in kwargs:  # merging **kwargs into the explicit keywords comes first
        if key in call.passed:
            raise _refuse("TypeError", f"transformers.optimization.{call.func}() got multiple values "
                                       f"for keyword argument '{key}'")
    if call.func.startswith("ReduceLROnPlateau") and "optimizer" in kwargs:
        # get_reduce_on_plateau_schedule(optimizer, **kwargs) binds `optimizer` before torch sees it
        raise _refuse("TypeError", "get_reduce_on_plateau_schedule() got multiple values for argument 'optimizer'")
    for key in kwargs:  # then binding, keyword by keyword
        if key == "optimizer":
            raise _refuse("TypeError", f"{call.func}() got multiple values for argument 'optimizer'")
        if key not in call.params:
            raise _refuse("TypeError", f"{call.func}() got an unexpected keyword argument '{key}'")
    missing = [key for key, value in call.params.items()
               if value is _REQUIRED and key not in call.passed and key not in kwargs]
    if missing:
        raise _refuse("TypeError", _missing_message(call.func, missing))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_types(name: str, call: _Call, kwargs: Mapping[str, Any]) -> None:
    """Values StepLab cannot follow (the real code would fail somewhere with a TypeError): SetupError."""
    widgets = SCHEDULES[name].widgets
    for key, value in kwargs.items():
        default = call.params[key]
        if isinstance(widgets.get(key), Choice):
            continue  # any value reaches the real "Unknown ... type" check
        if isinstance(default, str):
            ok, code = isinstance(value, str), "setup.kwarg_not_text"
        elif value is None:
            ok, code = key in call.none_ok, "setup.kwarg_none"
        else:
            ok, code = _is_number(value), "setup.kwarg_not_number"
        if not ok:
            raise SetupError(code, field=f"lr_scheduler_kwargs.{key}", scheduler=name, value=repr(value))


def _check_resume(kw: dict[str, Any]) -> None:
    """LambdaLR resumes only if the optimizer was loaded from a checkpoint."""
    if kw.get("last_epoch", -1) != -1:
        raise _refuse("KeyError", "param 'initial_lr' is not specified in param_groups[0] when resuming scheduler "
                                  "with last_epoch >= 0.\nThis typically happens when:\n"
                                  "1. You're trying to resume training from a checkpoint but haven't properly "
                                  "loaded the optimizer state\n"
                                  "2. You're using last_epoch >= 0 for a fresh training run (not recommended)")


def _resolved(name: str, kwargs: Mapping[str, Any] | None, *, profile: str, learning_rate: float) -> dict[str, Any]:
    """Check what building the scheduler checks; return the parameters the schedule really uses."""
    known = _enum_values(_release(profile))
    if name not in known:
        raise _refuse("ValueError", f"{name} is not a valid SchedulerType, please select one of "
                                    f"{list(known)}", "lr_scheduler_type")
    if name not in SCHEDULES:
        raise SetupError("setup.unmodelled_scheduler", field="lr_scheduler_type", scheduler=repr(name))
    form = _form(name, profile)
    call = form.call
    kwargs = dict(kwargs or {}) if call.forwards_kwargs else {}
    _check_binding(call, kwargs)
    _check_types(name, call, kwargs)
    resolved = {key: value for key, value in call.params.items() if key not in call.passed}
    resolved.update(kwargs)
    form.check(resolved, learning_rate)  # the checks inside the schedule function and torch's constructor
    _check_resume(resolved)
    return resolved


def check_scheduler(name: str, kwargs: dict | None, *, profile: str, learning_rate: float,
                    warmup_steps: int, total_steps: int, last_step: int | None = None) -> None:
    """Raise `TrainerRefusal` exactly as this profile's Trainer would for this scheduler, else return None.

    Covers `SchedulerType(name)`, calling the schedule function with `lr_scheduler_kwargs` (Python's
    TypeErrors), the checks inside it and torch's, and the errors `scheduler.step()` raises between
    s = 0 and s = T; e.g. polynomial with warmup_steps == max_steps divides by zero in the step after
    the last update. A run that takes fewer updates than T (`last_step`: an empty dataloader with `max_steps`
    takes none) only reaches s = `last_step`. `SetupError` for values StepLab cannot follow (text where a number
    belongs, ...). The eval-strategy requirement of reduce_lr_on_plateau is checked with the training arguments.
    """
    resolved = _resolved(name, kwargs, profile=profile, learning_rate=learning_rate)
    reached = total_steps if last_step is None else min(total_steps, last_step)
    _form(name, profile).check_steps(resolved, warmup_steps, total_steps, reached, learning_rate)


# ---------------------------------------------------------------------------------------------
# The curve, the per-step function, the torch scheduler
# ---------------------------------------------------------------------------------------------


_BLOCK = 1 << 15  # steps evaluated at a time: small temporaries stay in the allocator's cache


def _blocks(steps: np.ndarray | range) -> Iterator[tuple[slice, np.ndarray]]:
    """(where, float64 scheduler indices) for consecutive blocks of `steps`."""
    for start in range(0, len(steps), _BLOCK):
        part = steps[start:start + _BLOCK]
        indices = np.arange(part.start, part.stop, dtype=np.float64) if isinstance(part, range) else part
        yield slice(start, start + len(part)), indices.astype(np.float64, copy=False)


def _lambda(name: str, steps: np.ndarray | range, W: int, T: int, kwargs: dict | None, lr: float,
            profile: str) -> np.ndarray:
    """λ at every scheduler index in `steps` (a flat int array or a range), as a new float64 array."""
    if name in METRIC_DRIVEN:
        raise _metric_driven(name)
    resolved = _resolved(name, kwargs, profile=profile, learning_rate=lr)
    form = _form(name, profile)
    arguments = form.arguments(resolved, W, T, lr)
    out = np.empty(len(steps))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for where, s in _blocks(steps):
            out[where] = form.curve(s, **arguments)
    return out


def lr_lambda(name: str, s: np.ndarray, *, warmup_steps: int, total_steps: int, kwargs: dict | None,
              learning_rate: float, profile: str = "hf-5") -> np.ndarray:
    """λ(s) for scheduler indices s (int64 array), as this profile's LambdaLR computes it.

    Raises what `check_scheduler` raises for a schedule the Trainer cannot build; where stepping the
    real scheduler would raise (e.g. polynomial at s = T when warmup_steps == T), the value is NaN.
    """
    s = np.asarray(s, dtype=np.int64)
    lam = _lambda(name, s.reshape(-1), warmup_steps, total_steps, kwargs, learning_rate, profile)
    return lam.reshape(s.shape)


def learning_rates(name: str, num_updates: int, *, warmup_steps: int, total_steps: int, kwargs: dict | None,
                   learning_rate: float, profile: str = "hf-5", first: int = 1) -> np.ndarray:
    """The LR of optimizer updates k = first..num_updates: learning_rate · λ(k - 1).

    `num_updates` may exceed `total_steps`: the values then show what the schedule does past its horizon.
    """
    if first < 1:
        raise ValueError(f"first must be >= 1, got {first}")
    lam = _lambda(name, range(first - 1, num_updates), warmup_steps, total_steps, kwargs, learning_rate, profile)
    lam *= learning_rate  # learning_rate · λ, as LambdaLR multiplies base_lr by λ
    return lam


def step_function(name: str, *, warmup_steps: int, total_steps: int, kwargs: dict | None, learning_rate: float,
                  profile: str = "hf-5") -> Callable[[int], float]:
    """The per-step multiplier λ(step) of `name` for one run, as the Trainer of `profile` builds it.

    The learning rate of update k is `learning_rate * λ(k - 1)`. Checks the kwargs the way the Trainer
    does (`TrainerRefusal` when it would refuse). Not for the metric-driven `reduce_lr_on_plateau`.
    """
    if name in SCHEDULES and SCHEDULES[name].metric_driven:
        raise _metric_driven(name)
    resolved = _resolved(name, kwargs, profile=profile, learning_rate=learning_rate)
    form = _form(name, profile)
    arguments = form.arguments(resolved, warmup_steps, total_steps, learning_rate)
    return partial(form.step, **arguments) if arguments else form.step


def torch_scheduler(optimizer: Any, name: str, *, warmup_steps: int, total_steps: int, kwargs: dict | None,
                    profile: str = "hf-5") -> Any:
    """A plain-torch scheduler giving the same LR as the Trainer's (no transformers import).

    `torch.optim.lr_scheduler.LambdaLR` with the per-step λ of this module, or `ReduceLROnPlateau`
    for the metric-driven type. The peak LR is `optimizer.defaults["lr"]`. Step it after every
    `optimizer.step()`, as the Trainer does.
    """
    from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau

    lr = optimizer.defaults["lr"]
    if name in SCHEDULES and SCHEDULES[name].metric_driven:
        return ReduceLROnPlateau(optimizer, **_resolved(name, kwargs, profile=profile, learning_rate=lr))
    return LambdaLR(optimizer, step_function(name, warmup_steps=warmup_steps, total_steps=total_steps,
                                             kwargs=kwargs, learning_rate=lr, profile=profile))
