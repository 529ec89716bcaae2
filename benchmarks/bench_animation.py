"""Animation benchmark: what one tick of the playing animation costs the server, and what it sends.

A tick is the fragment rerun that `run_every` triggers while playing. It is measured through Streamlit's
own script runner (the one AppTest drives), asked for a fragment-only auto rerun exactly as the browser's
timer asks for one: server time is the fragment's run on the script thread; the payload is the bytes of
every ForwardMsg the tick enqueues (deltas for the figure, counters, narration and controls). Targets:
≤ 30 ms and ≤ 50 KB per tick. Also timed: building the timeline, drawing a frame, the HTML export.

    python benchmarks/bench_animation.py [--ticks 40]

Uses private hooks of Streamlit 1.67 (`ScriptRunner._run_script`, AppTest's fragment storage and script
cache, which a real server shares across runs); it is a measuring script, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from apptest_timing import one_script_cache  # this folder (the script's own)
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.testing.v1 import AppTest, local_script_runner

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the page imports steplab_ui from the repository
    sys.path.insert(0, str(ROOT))

TICK_MS = 30.0
TICK_KB = 50.0
SETUPS = {
    "course (1,600 × batch 4 × acc 8)": {},
    "8 GPUs, batch 64, acc 64": {"num_samples": "1000000", "world_size": "8", "per_device_train_batch_size": "64",
                                 "gradient_accumulation_steps": "64"},
    "10^9 samples, 64 GPUs, acc 1024, hf-4.46": {"num_samples": "1000000000", "world_size": "64",
                                                  "gradient_accumulation_steps": "1024", "trainer": "hf-4.46"},
}


class Recorder:
    """Times every script-thread run and sums the bytes each run enqueues."""

    def __init__(self) -> None:
        self.runs: list[tuple[float, float, int]] = []
        self._bytes = 0

    @contextmanager
    def installed(self):
        original_run, original_enqueue = ScriptRunner._run_script, ForwardMsgQueue.enqueue
        recorder = self

        def run_script(runner, rerun_data):
            recorder._bytes = 0
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original_run(runner, rerun_data)
            finally:
                recorder.runs.append(((time.perf_counter() - start) * 1000, (time.thread_time() - cpu) * 1000,
                                      recorder._bytes))

        def enqueue(queue, msg):
            recorder._bytes += msg.ByteSize()
            return original_enqueue(queue, msg)

        ScriptRunner._run_script, ForwardMsgQueue.enqueue = run_script, enqueue
        try:
            yield self
        finally:
            ScriptRunner._run_script, ForwardMsgQueue.enqueue = original_run, original_enqueue


@contextmanager
def auto_rerun_of(fragment_ids: list[str]):
    """Make AppTest's next runs fragment-only auto reruns, as the browser's run_every timer requests them."""
    original = local_script_runner.RerunData

    def fragment_rerun(**kwargs):
        return replace(original(**kwargs), fragment_id_queue=list(fragment_ids), is_auto_rerun=True)

    local_script_runner.RerunData = fragment_rerun
    try:
        yield
    finally:
        local_script_runner.RerunData = original


def measure_ticks(params: dict[str, str], ticks: int) -> tuple[list[float], list[float], list[int], str, float]:
    at = AppTest.from_file(str(ROOT / "app_pages" / "animation.py"), default_timeout=120)
    at.query_params.update({"lang": "en", **params})
    recorder = Recorder()
    with recorder.installed(), one_script_cache():
        at.run()
        full_ms = recorder.runs[-1][0]
        at.button(key="anim_play").click().run()  # playing: the fragment is registered with run_every
        fragment_ids = list(at._fragment_storage._fragments)
        recorder.runs.clear()
        with auto_rerun_of(fragment_ids):
            for _ in range(ticks):
                at.session_state["_anim_last_tick"] = 0.0  # as if the interval had passed: every tick advances
                at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = {m.label: m.value for m in at.metric}["Micro-batch"]
    times = [wall for wall, _, _ in recorder.runs]
    cpu = [used for _, used, _ in recorder.runs]
    sizes = [size for _, _, size in recorder.runs]
    return times, cpu, sizes, shown, full_ms


def engine_figures() -> None:
    import plotly.io
    import plotly.tools

    from steplab.simulation.timeline import build_timeline
    from steplab.trainer.plan import make_plan
    from steplab.trainer.setup import setup_from_mapping
    from steplab_ui.widgets import animation_frames as animation_view
    from steplab_ui.widgets.animation_html import export_html

    print("engine and drawing (no script runner)")
    for name, params in SETUPS.items():
        values = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
                  "num_train_epochs": 3, **{k: (v if k == "trainer" else int(v)) for k, v in params.items()}}
        plan = make_plan(setup_from_mapping(values)[0])
        build_timeline.cache_clear()
        start = time.perf_counter()
        timeline = build_timeline(plan)
        built = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        for position in range(len(timeline.frames)):  # what st.plotly_chart does with the figure
            figure = animation_view.frame_figure(timeline, position, "en")
            plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(figure, True), validate=False)
        drawn = (time.perf_counter() - start) * 1000 / len(timeline.frames)
        print(f"  {name}: timeline {built:.1f} ms ({len(timeline.frames)} frames of {timeline.total_frames:,}), "
              f"draw + JSON {drawn:.2f} ms a frame")
    plan = make_plan(setup_from_mapping({"num_samples": 1600, "per_device_train_batch_size": 4,
                                         "gradient_accumulation_steps": 8, "num_train_epochs": 3})[0])
    timeline = build_timeline(plan)
    start = time.perf_counter()
    page = export_html(timeline, "en")
    print(f"  HTML export (course): {(time.perf_counter() - start) * 1000:.0f} ms, {len(page) / 1e6:.2f} MB "
          f"(once per download, off the tick)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=40)
    args = parser.parse_args()
    engine_figures()
    print(f"\nticks (fragment auto reruns through Streamlit's script runner), targets ≤ {TICK_MS:.0f} ms, "
          f"≤ {TICK_KB:.0f} KB")
    print("  (wall = elapsed on the script thread, inflated when other processes share the CPU; "
          "cpu = that thread's own CPU time, what the tick costs an idle server)")
    worst_ms = worst_kb = 0.0
    for name, params in SETUPS.items():
        times, cpu, sizes, shown, full_ms = measure_ticks(params, args.ticks)
        median, p95 = statistics.median(times), sorted(times)[int(0.95 * (len(times) - 1))]
        kb = max(sizes) / 1024
        worst_ms, worst_kb = max(worst_ms, statistics.median(cpu)), max(worst_kb, kb)
        print(f"  {name}:\n    server time per tick: cpu median {statistics.median(cpu):.1f} ms "
              f"(max {max(cpu):.1f}); wall median {median:.1f} ms (min {min(times):.1f}, p95 {p95:.1f})\n"
              f"    payload per tick: {statistics.median(sizes) / 1024:.1f} KB (max {kb:.1f})\n"
              f"    full page run {full_ms:.0f} ms wall; after {len(times)} ticks the counter reads "
              f"micro-batch {shown}")
    verdict = "within" if worst_ms <= TICK_MS and worst_kb <= TICK_KB else "OVER"
    print(f"\nworst median tick {worst_ms:.1f} ms cpu, largest tick {worst_kb:.1f} KB: {verdict} the targets")


if __name__ == "__main__":
    main()
