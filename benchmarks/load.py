"""A class at once: N concurrent sessions on /calculator, each moving the shared controls like a student.

The script starts `streamlit run serve.py` (the app as deployed) on a free loopback port, then for each N (default
1, 10, 30, 60) opens N sessions at the same moment over Streamlit's own websocket protocol (`/_stcore/stream`,
protobuf `BackMsg` / `ForwardMsg` from `streamlit.proto`) — the same messages the browser sends. Each session loads
the calculator, then makes `--changes` changes with a short think time in between: the
`gradient_accumulation_steps` exact input, the `num_samples` exact input, and the `num_samples` slider.

Why the protocol and not browser contexts: on this 2-core machine 60 Chromium contexts would themselves
burn most of the CPU (layout, React, Vega/Plotly), so the figures would measure the browsers, not the
server. A protocol client costs a few ms of CPU per rerun (parsing protobuf) and sends exactly what a
browser sends, so the server's work per rerun is the same; it does not declare a message cache, so the
server sends every element in full (slightly more than a real browser receives).

Per rerun: latency from sending the change to the server's `script_finished` (the app is idle again).
Errors: exception elements on the page, a run that does not finish successfully, timeouts, lost
connections, and a total-steps card that disagrees with the engine. The server's RSS (psutil, children
included) is sampled every 100 ms; the peak during each N is printed.

Run: python benchmarks/load.py [--sessions 1,10,30,60] [--changes 8] [--think 0.5:1.5] [--replicas 1]
Side by side with a baseline, --replicas servers each, in alternating rounds (medians and ratios printed):
     python benchmarks/load.py --sessions 30,60 --baseline ../old-checkout [--baseline-asyncio] [--rounds 3]
Targets (issue 8): 30 sessions with p95 ≤ 500 ms, zero errors, RSS ≤ 1.5 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from steplab.i18n import fmt_int, t  # noqa: E402
from steplab.trainer.plan import make_plan  # noqa: E402
from steplab.trainer.setup import setup_from_mapping  # noqa: E402
from steplab_ui.shell.browser import READY  # noqa: E402

PAGE = "calculator"
LANG = "en"
COURSE = {"num_samples": 1600, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 8,
          "world_size": 1, "num_train_epochs": 3}
ACCUMULATION = (1, 2, 3, 4, 6, 8, 12, 16, 32)
SAMPLES = (100, 500, 1000, 1090, 1600, 2000, 5000, 10000, 50000)
HEALTH_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`streamlit run serve.py` (or another script) on 127.0.0.1, output in a temp file, stopped by its own pid."""

    def __init__(self, script: str | None = None, root: Path = ROOT, asyncio_loop: bool = False) -> None:
        """`script`: by default `serve.py`, or `app.py` in a checkout older than it; `root`: the checkout to serve
        (another one for a side-by-side run); `asyncio_loop`: run the server on asyncio's own event loop even
        though uvloop is installed (Streamlit uses uvloop when it can import it)."""
        script = script or ("serve.py" if (root / "serve.py").is_file() else "app.py")
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="steplab-load-", suffix=".log", delete=False)
        launcher = ["-m", "streamlit"] if not asyncio_loop else [
            "-c", "import sys; sys.modules['uvloop'] = None; sys.argv[0] = 'streamlit'; "
                  "from streamlit.web.cli import main; main()"]
        command = [sys.executable, *launcher, "run", script, "--server.headless", "true",
                   "--server.port", str(self.port), "--server.address", "127.0.0.1",
                   "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
        self.process = subprocess.Popen(command, cwd=root, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + HEALTH_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.process.returncode}; log: {self.log.name}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"streamlit not healthy after {HEALTH_TIMEOUT:.0f} s; log: {self.log.name}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class RssSampler(threading.Thread):
    """Peak resident memory of the server process and its children, sampled every `interval` seconds."""

    def __init__(self, pids: list[int], interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.processes = [psutil.Process(pid) for pid in pids]
        self.interval = interval
        self.peak = 0
        self.stopped = threading.Event()

    def current(self) -> int:
        total = 0
        for proc in self._all():
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
        return total

    def cpu_seconds(self) -> float:
        """User + system CPU time the server (and children) used so far."""
        total = 0.0
        for proc in self._all():
            try:
                times = proc.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        return total

    def _all(self) -> list[psutil.Process]:
        return [proc for server in self.processes for proc in (server, *server.children(recursive=True))]

    def reset(self) -> None:
        self.peak = self.current()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            try:
                self.peak = max(self.peak, self.current())
            except psutil.Error:
                return


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    first_loads: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


@dataclass
class RunResult:
    ok: bool
    seconds: float
    why: str = ""


def expected_total(values: dict) -> str:
    setup, _ = setup_from_mapping({**COURSE, **values})
    return fmt_int(make_plan(setup).max_steps)


class Session:
    """One student's browser tab, speaking the websocket protocol."""

    def __init__(self, port: int, timeout: float) -> None:
        self.url = f"ws://127.0.0.1:{port}/_stcore/stream"
        self.timeout = timeout
        self.page_script_hash = ""
        self.widgets: dict[str, str] = {}       # user key -> widget id
        self.slider_options: list[str] = []
        # The widget the student just changed. Streamlit keeps the previous value of a widget a rerun does not
        # mention, so sending only the changed one is what the browser's full list amounts to.
        self.states: dict[str, WidgetState] = {}
        self.total_label = t(LANG, "card.total_steps")
        self.total_value: str | None = None
        self.query = f"lang={LANG}"  # the URL's query string, as the server rewrites it (bound widgets)
        self.ws = None

    async def open(self) -> None:
        self.ws = await connect(self.url, subprotocols=["streamlit"], max_size=None, open_timeout=self.timeout,
                                ping_interval=None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def rerun(self) -> RunResult:
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query
        state.page_script_hash = self.page_script_hash
        state.page_name = PAGE
        state.widget_states.widgets.extend(self.states.values())
        start = time.perf_counter()
        await self.ws.send(message.SerializeToString())
        try:
            why = await asyncio.wait_for(self._until_finished(), self.timeout)
        except TimeoutError:
            return RunResult(False, time.perf_counter() - start, "timeout")
        return RunResult(not why, time.perf_counter() - start, why)

    async def _until_finished(self) -> str:
        """Read ForwardMsgs until the script run ends; '' when it ended well, else why not."""
        problem = ""
        while True:
            raw = await self.ws.recv()
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "navigation":  # st.navigation says which page ran: the browser sends it back
                self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "delta":
                problem = self._element(msg) or problem
            elif kind == "page_not_found":
                problem = "page not found"
            elif kind == "script_finished":
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    return problem
                return problem or ForwardMsg.ScriptFinishedStatus.Name(status).lower()

    def _element(self, msg: ForwardMsg) -> str:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return ""
        element = delta.new_element
        which = element.WhichOneof("type")
        if which == "exception":
            return "exception"
        if which == "metric" and element.metric.label == self.total_label:
            self.total_value = element.metric.body
        elif which == "button" and element.button.id.endswith(f"-{READY}"):
            self.widgets[READY] = element.button.id
        elif which in ("number_input", "slider"):
            widget = getattr(element, which)
            for key in ("gradient_accumulation_steps", "num_samples", "num_samples__slider"):
                if widget.id.endswith(f"-{key}"):
                    self.widgets[key] = widget.id
                    if which == "slider":
                        self.slider_options = list(widget.options)
        return ""

    def set_int(self, key: str, value: int) -> None:
        """Type into a URL-bound exact input; like the browser, also write the value into the URL's query.

        (The frontend updates the address bar itself for a bound widget the user changed; the server only
        sends `page_info_changed` when a script or callback changes it. A client that kept the old query
        would send a stale URL value, which the server then applies: not what a browser does.)
        """
        self.states = {key: WidgetState(id=self.widgets[key], double_value=value)}
        query = dict(parse_qsl(self.query))
        query[key] = str(value)
        self.query = urlencode(query)

    def set_slider(self, label: str) -> None:
        state = WidgetState(id=self.widgets["num_samples__slider"])
        state.string_array_value.data.append(label)
        self.states = {"num_samples__slider": state}


async def student(port: int, changes: int, think: tuple[float, float], timeout: float, stats: Stats,
                  seed: int, start: asyncio.Event) -> None:
    rng = random.Random(seed)
    session = Session(port, timeout)
    await start.wait()
    try:
        await session.open()
        first = await session.rerun()
        if first.ok and READY in session.widgets:  # the sidebar-only first run: the browser asks for the page
            session.states = {READY: WidgetState(id=session.widgets[READY], trigger_value=True)}
            page = await session.rerun()
            first = RunResult(page.ok, first.seconds + page.seconds, page.why)
            session.states = {}
        stats.first_loads.append(first.seconds)
        if not first.ok:
            stats.error(f"first load: {first.why}")
            return
        missing = {"gradient_accumulation_steps", "num_samples", "num_samples__slider"} - set(session.widgets)
        if missing:
            stats.error(f"widgets not found: {sorted(missing)}")
            return
        values = {}
        for i in range(changes):
            await asyncio.sleep(rng.uniform(*think))
            step = i % 3
            if step == 0:
                values["gradient_accumulation_steps"] = rng.choice(ACCUMULATION)
                session.set_int("gradient_accumulation_steps", values["gradient_accumulation_steps"])
            elif step == 1:
                values["num_samples"] = rng.choice(SAMPLES)
                session.set_int("num_samples", values["num_samples"])
            else:  # the slider: its callback copies the stop into the exact input
                label = rng.choice(session.slider_options[:25])
                values["num_samples"] = int(label.replace(",", ""))
                session.set_slider(label)
            result = await session.rerun()
            if not result.ok:
                stats.error(result.why)
                continue
            stats.latencies.append(result.seconds)
            if session.total_value != expected_total(values):
                stats.error("wrong total steps")
                stats.mismatches.append(f"{values} shows {session.total_value}, engine {expected_total(values)}")
    except (TimeoutError, OSError) as error:
        stats.error(f"connection: {type(error).__name__}")
    except Exception as error:  # noqa: BLE001 - a closed websocket is an error of the run, counted
        stats.error(f"{type(error).__name__}: {error}"[:80])
    finally:
        await session.close()


async def level(ports: list[int], sessions: int, changes: int, think: tuple[float, float], timeout: float,
                seed: int) -> Stats:
    """`sessions` students at once; student i stays on server i mod len(ports) (a sticky load balancer)."""
    stats = Stats()
    start = asyncio.Event()
    tasks = [asyncio.create_task(student(ports[i % len(ports)], changes, think, timeout, stats, seed * 1000 + i,
                                         start))
             for i in range(sessions)]
    start.set()
    await asyncio.gather(*tasks)
    return stats


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


@dataclass
class Row:
    """One level's figures for one setup."""

    sessions: int
    stats: Stats
    wall: float
    cpu_per_run: float   # server CPU seconds per script run (load or change)
    client: float        # share of one core this script used itself
    peak_rss: int

    @property
    def p95(self) -> float:
        return percentile([s * 1000 for s in self.stats.latencies], 95)

    def line(self, label: str = "") -> str:
        lat = [s * 1000 for s in self.stats.latencies]
        errors = sum(self.stats.errors.values())
        return (f"{label}{self.sessions:>4} {len(lat):>7} {percentile(lat, 50):>7.0f} {self.p95:>7.0f} "
                f"{max(lat, default=float('nan')):>7.0f} "
                f"{percentile([s * 1000 for s in self.stats.first_loads], 95):>9.0f} {errors:>7} "
                f"{self.peak_rss / 2**20:>5.0f} MiB {self.cpu_per_run * 1000:>5.1f} ms {self.wall:>7.1f} "
                f"{os.getloadavg()[0]:>7.1f} {self.client:>6.0%}")


HEADER = (f"{'N':>4} {'reruns':>7} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'load p95':>9} {'errors':>7} "
          f"{'peak RSS':>9} {'CPU/run':>8} {'wall s':>7} {'loadavg':>7} {'client':>7}")


def measure(ports: list[int], sampler: RssSampler, sessions: int, changes: int, think: tuple[float, float],
            timeout: float, seed: int) -> Row:
    """One level: `sessions` students on these servers, with the servers' CPU and peak memory meanwhile."""
    sampler.reset()
    cpu_before = sampler.cpu_seconds()
    client_before = time.process_time()
    began = time.perf_counter()
    stats = asyncio.run(level(ports, sessions, changes, think, timeout, seed))
    wall = time.perf_counter() - began
    runs = max(1, len(stats.latencies) + len(stats.first_loads))
    row = Row(sessions, stats, wall, (sampler.cpu_seconds() - cpu_before) / runs,
              (time.process_time() - client_before) / wall, sampler.peak)
    time.sleep(2)  # closed sessions are cleaned up before the next level
    return row


def report_errors(row: Row) -> None:
    if row.stats.errors:
        print(f"      errors: {row.stats.errors}")
        for line in row.stats.mismatches[:3]:
            print(f"      e.g. {line}")


def side_by_side(args: argparse.Namespace, levels: list[int], think: tuple[float, float]) -> None:
    """This checkout and a baseline (another checkout, asyncio's loop, or both), `--replicas` servers each,
    measured in alternating order round by round, so both meet the same machine; medians and ratios at the end."""
    baseline_root = Path(args.baseline or ROOT).resolve()
    replicas = max(1, args.replicas)
    setups = {"this": [Server() for _ in range(replicas)],
              "baseline": [Server(root=baseline_root, asyncio_loop=args.baseline_asyncio) for _ in range(replicas)]}
    ports = {name: [server.port for server in servers] for name, servers in setups.items()}
    samplers = {name: RssSampler([server.process.pid for server in servers]) for name, servers in setups.items()}
    try:
        for name, sampler in samplers.items():
            sampler.start()
            asyncio.run(level(ports[name], replicas, 2, (0.1, 0.2), 120.0, args.seed))  # warm-up
        print(f"this: {ROOT}; baseline: {baseline_root}{' on asyncio' if args.baseline_asyncio else ''}; "
              f"{replicas} server(s) each; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
        print(f"{'':>9}{'round':>6} " + HEADER)
        for sessions in levels:
            rows: dict[str, list[Row]] = {"this": [], "baseline": []}
            for round_ in range(args.rounds):
                order = ("this", "baseline") if round_ % 2 == 0 else ("baseline", "this")
                for name in order:
                    row = measure(ports[name], samplers[name], sessions, args.changes, think, args.timeout,
                                  args.seed + round_)
                    rows[name].append(row)
                    print(row.line(f"{name:>9}{round_ + 1:>6} "))
                    report_errors(row)
            p95 = {name: statistics.median(row.p95 for row in got) for name, got in rows.items()}
            cpu = {name: statistics.median(row.cpu_per_run for row in got) * 1000 for name, got in rows.items()}
            print(f"  N = {sessions}, medians of {args.rounds} rounds: p95 {p95['this']:.0f} vs {p95['baseline']:.0f}"
                  f" ms ({p95['this'] / p95['baseline']:.2f}x), CPU per run {cpu['this']:.1f} vs "
                  f"{cpu['baseline']:.1f} ms ({cpu['this'] / cpu['baseline']:.2f}x)")
    finally:
        for name, servers in setups.items():
            samplers[name].stopped.set()
            for server in servers:
                server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="1,10,30,60", help="comma-separated N values (default 1,10,30,60)")
    parser.add_argument("--changes", type=int, default=8, help="widget changes per session (default 8)")
    parser.add_argument("--think", default="0.5:1.5", help="think time between changes, min:max s (default 0.5:1.5)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a rerun may take before it is an error")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--replicas", type=int, default=1,
                        help="server processes, each session sticky to one (default 1; see README, deployment)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="side by side: also serve this other checkout (e.g. a git worktree of an older "
                             "commit), --replicas servers each, in alternating rounds")
    parser.add_argument("--baseline-asyncio", action="store_true",
                        help="side by side: the baseline server runs on asyncio's loop instead of uvloop")
    parser.add_argument("--rounds", type=int, default=3, help="side by side: rounds per N (default 3)")
    args = parser.parse_args()
    levels = [int(n) for n in args.sessions.split(",") if n.strip()]
    low, high = (float(x) for x in args.think.split(":"))
    if args.baseline or args.baseline_asyncio:
        side_by_side(args, levels, (low, high))
        return

    servers: list[Server] = []
    sampler: RssSampler | None = None
    try:
        servers.extend(Server() for _ in range(max(1, args.replicas)))
        ports = [server.port for server in servers]
        sampler = RssSampler([server.process.pid for server in servers])
        sampler.start()
        print(f"{len(servers)} server(s): streamlit run serve.py on 127.0.0.1 ports {ports}; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
        warm = asyncio.run(level(ports, len(ports), 2, (0.1, 0.2), 120.0, args.seed))  # imports, caches
        print(f"warm-up (not counted): first load {max(warm.first_loads) * 1000:.0f} ms, errors {warm.errors or 0}, "
              f"RSS {sampler.current() / 2**20:.0f} MiB")
        print(HEADER)
        for sessions in levels:
            row = measure(ports, sampler, sessions, args.changes, (low, high), args.timeout, args.seed)
            print(row.line())
            report_errors(row)
    finally:
        if sampler is not None:
            sampler.stopped.set()
        for server in servers:
            server.stop()
    print("p50/p95/max: change -> script_finished; 'load p95': the first page load of every session, "
          "all at once. peak RSS: all servers and their children. CPU/run: server CPU time per script run (load or "
          "change). One server runs its sessions' scripts under one GIL, so it uses about one core: "
          "--replicas 2 uses both. client: share of one core this script itself used (it runs on the same machine).")


if __name__ == "__main__":
    main()
