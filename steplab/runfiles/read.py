"""The gathered files read by kind: the run's console, states, LLaMA-Factory log, results, config and dataset files.

A set may hold a run's earlier parts (a resumed run's first console, `trainer_log-part1.jsonl`): the main file of a
kind is the one the finished run wrote (the output folder's `trainer_state.json`, `trainer_log.jsonl`, the console
that resumed or the last one); the others are kept as earlier parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from steplab.errors import InputError
from steplab.i18n import Message, msg
from steplab.runfiles import kinds
from steplab.runfiles.console import Console, read_console
from steplab.runfiles.failure import Failure
from steplab.runfiles.gather import Gathered, RunFile
from steplab.runfiles.results import ResultsFile, read_results
from steplab.runfiles.state_file import StateFile, read_state
from steplab.runfiles.text import decode_text
from steplab.runfiles.trainer_log import TrainerLog, read_trainer_log


@dataclass
class FileReport:
    """One file as the page lists it: its path, what StepLab took it for, and whether (and why not) it was read."""

    path: str
    kind: str
    read: bool
    note: Message | None = None


@dataclass
class RunFiles:
    """Every file of a run, read."""

    console: Console | None = None
    earlier_consoles: list[Console] = field(default_factory=list)
    state: StateFile | None = None
    checkpoint_states: dict[int, StateFile] = field(default_factory=dict)
    trainer_log: TrainerLog | None = None
    earlier_logs: list[TrainerLog] = field(default_factory=list)
    results: dict[str, ResultsFile] = field(default_factory=dict)  # by file name
    config: tuple[str, str] | None = None  # (path, text) of the YAML used
    other_configs: list[str] = field(default_factory=list)
    dataset_files: dict[str, bytes] = field(default_factory=dict)  # by base name, for the dataset stage
    checkpoint_folders: dict[int, str] = field(default_factory=dict)  # N -> a path seen inside checkpoint-N/
    failure: Failure | None = None  # the exception a console shows the run died of
    reports: list[FileReport] = field(default_factory=list)
    problems: list[Message] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        """Anything of a run was read (a config alone counts: StepLab can plan it)."""
        return bool(self.console or self.state or self.checkpoint_states or self.trainer_log or self.results
                    or self.config or self.failure)


def _depth(path: str) -> int:
    return path.count("/")


def _pick_state(states: list[StateFile], files: RunFiles) -> None:
    top = [s for s in states if s.checkpoint is None]
    for state in states:
        if state.checkpoint is not None:
            files.checkpoint_states.setdefault(state.checkpoint, state)
    if top:
        files.state = min(top, key=lambda s: _depth(s.path))
    elif files.checkpoint_states:  # a run stopped before the end: its last checkpoint is its state
        files.state = files.checkpoint_states[max(files.checkpoint_states)]


def _pick_console(consoles: list[Console], files: RunFiles) -> None:
    trained = [c for c in consoles if c.blocks]
    if not trained:  # a run that failed before training: the last console that shows an error
        files.earlier_consoles = consoles
        failed = [c for c in consoles if c.failure is not None]
        files.failure = failed[-1].failure if failed else None
        return
    resumed = [c for c in trained if c.resumed]
    files.console = (resumed or trained)[-1]
    files.failure = files.console.failure  # an earlier part's error (stopped, then resumed) is not the run's
    files.earlier_consoles = [c for c in consoles if c is not files.console]


def _pick_log(logs: list[TrainerLog], files: RunFiles) -> None:
    if not logs:
        return
    exact = [log for log in logs if PurePosixPath(log.path).name == "trainer_log.jsonl"]
    files.trainer_log = min(exact or logs, key=lambda log: _depth(log.path))
    files.earlier_logs = [log for log in logs if log is not files.trainer_log]


def _pick_config(configs: list[RunFile], files: RunFiles, given: tuple[str, str] | None) -> None:
    if given is not None:
        files.config = given
        files.other_configs = [c.path for c in configs if c.data.decode("utf-8", "replace") != given[1]]
        return
    if not configs:
        return
    ranked = sorted(configs, key=lambda c: (_depth(c.path), PurePosixPath(c.path).name != "training_args.yaml",
                                            PurePosixPath(c.path).name != "config.yaml", c.path))
    chosen = ranked[0]
    try:
        files.config = (chosen.path, decode_text(chosen.data, chosen.path))
    except InputError as error:
        files.problems.append(error.text)
    files.other_configs = [c.path for c in ranked[1:]]


def read_files(gathered: Gathered, config: tuple[str, str] | None = None) -> RunFiles:
    """Read every gathered file by its kind; a file that cannot be read is reported with why, never raised.

    `config`: a YAML given apart (the CLI's `--config`, the page's pasted YAML) as (name, text): it is the run's
    config, whatever YAMLs the files hold.
    """
    files = RunFiles(problems=list(gathered.problems))
    for path, why in gathered.skipped:
        files.reports.append(FileReport(path, kinds.kind_of(path), False, why))
    consoles, states, logs, configs = [], [], [], []
    for run_file in gathered.files:
        report = FileReport(run_file.path, run_file.kind, True)
        files.reports.append(report)
        try:
            kind = run_file.kind
            if kind == kinds.CONSOLE:
                consoles.append(read_console(run_file.data, run_file.path))
            elif kind == kinds.STATE:
                states.append(read_state(run_file.data, run_file.path, run_file.checkpoint))
            elif kind == kinds.TRAINER_LOG:
                log = read_trainer_log(run_file.data, run_file.path)
                files.problems += log.problems
                logs.append(log)
            elif kind == kinds.RESULTS:
                files.results.setdefault(run_file.name, read_results(run_file.data, run_file.path))
            elif kind == kinds.CONFIG:
                configs.append(run_file)
            elif kind in (kinds.DATASET_INFO, kinds.DATA, kinds.TOKENIZER):
                files.dataset_files.setdefault(run_file.name, run_file.data)
        except InputError as error:
            report.read, report.note = False, error.text
    for path in [r.path for r in files.reports]:
        step = kinds.checkpoint_of(path)
        if step is not None:
            files.checkpoint_folders.setdefault(step, path.rsplit(f"checkpoint-{step}/", 1)[0] + f"checkpoint-{step}")
    _pick_state(states, files)
    _pick_console(consoles, files)
    _pick_log(logs, files)
    _pick_config(configs, files, config)
    if not files.readable:
        files.problems.append(msg("runfiles.nothing_readable"))
    return files
