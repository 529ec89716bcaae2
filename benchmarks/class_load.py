"""A whole class answering one question: N students on `/join`, an instructor's projector on `/class`, R replicas
sharing one class database, every tab speaking Streamlit's own websocket protocol (as `load.py` does).

What happens, as in a room:
1. R replicas of `streamlit run serve.py` start with one `STEPLAB_DATABASE_URL` (by default a fresh SQLite file that
   they share; `--database-url postgresql+psycopg://...` for PostgreSQL) and one cookie secret, and, with `--front
   nginx` or `both`, the deployment the README describes in front of them: Debian's nginx with its own main
   configuration (`/etc/nginx/nginx.conf`: worker processes, connections, logs) and `deploy/nginx.conf` as the site,
   the frontend copy made by `deploy/prepare-static.sh`.
2. The projector tab (replica 0) clicks "Open a class", reads the join code, clicks "Ask the class" (the course
   setup's total steps) and from then on refreshes its live fragment every 2 s, as the browser does for
   `st.fragment(run_every=...)` (the server asks for it with an `auto_rerun` message; the client sends the
   fragment's rerun on that interval).
3. N student tabs open `/join?code=...` (straight to replica i mod R, or through nginx with a sticky cookie of
   their own), each from an address of its own (X-Forwarded-For, which the replicas' server takes from the loopback:
   the class's joins limit counts per address, as it would count phones), type a nickname and press Join; their
   refreshing fragments tick the same way. They arrive one after another over `--arrive` seconds. Then, once all
   have joined, within `--window` seconds (each at a random moment), every student types an answer and presses
   Send.

Measured: an answer's round trip (Send pressed -> the page says the answer is in), answers lost (sent and
confirmed, but not in the database afterwards: must be 0), answers refused, the projector's refresh delay (the
last confirmed answer -> the projector shows "N of N"), the servers' peak RSS and CPU.

Run: python benchmarks/class_load.py [--students 60] [--replicas 2] [--window 10] [--database-url URL]
         [--front direct|nginx|both] [--rounds N]
     `--front both`: N rounds of one class straight to the replicas and one through nginx (in turn, the first of
     each round alternating), on the same replicas, and the medians side by side with their ratio.
     python benchmarks/class_load.py --baseline /path/to/older/worktree [--rounds 2]: the same class on both apps,
     alternating, and the figures side by side with their ratios.
Targets: issue 15, 60 students in one class answer within 10 s with 2 replicas: 0 answers lost; issue 40, 120
students on two replicas behind nginx: answer round trip p95 <= 500 ms, 0 lost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import RssSampler, Server, free_port, percentile  # noqa: E402

from steplab.classroom import polls  # noqa: E402
from steplab.classroom.store import Store  # noqa: E402
from steplab.i18n import fmt_int, t  # noqa: E402
from steplab.teaching.presets import presets  # noqa: E402
from steplab.trainer.plan import make_plan  # noqa: E402
from steplab_ui.shell.browser import READY  # noqa: E402

LANG = "en"
SETUP = presets()["course_default"].setup()
POLL = polls.poll_from_setup(SETUP)
RIGHT = make_plan(SETUP).max_steps
TRAPS = [int(trap.value) for trap in polls.reveal(POLL).traps]


@dataclass
class Tab:
    """One browser tab on one replica: sends reruns, reads every ForwardMsg, keeps what the page shows."""

    port: int
    page: str
    query: str
    headers: dict[str, str] = field(default_factory=dict)  # the browser's cookie, the phone's address
    page_script_hash: str = ""
    widgets: dict[str, str] = field(default_factory=dict)  # widget key (or a button's label) -> widget id
    values: dict[str, WidgetState] = field(default_factory=dict)  # the text this tab typed, by widget id
    texts: list[str] = field(default_factory=list)  # markdown and alert bodies of the latest runs
    metrics: dict[str, str] = field(default_factory=dict)  # label -> value
    exceptions: int = 0
    fragments: dict[str, float] = field(default_factory=dict)  # fragment id -> interval (auto_rerun)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    past_sidebar: bool = False  # the sidebar-first button was pressed (`steplab_ui.shell.browser.sidebar_first`)

    async def open(self) -> None:
        if "Cookie" not in self.headers:  # a browser loads the page first: a balancer's cookie comes with it
            cookie = await asyncio.to_thread(first_cookie, self.port, self.page, self.headers)
            if cookie:
                self.headers = {**self.headers, "Cookie": cookie}
        self.ws = await connect(f"ws://127.0.0.1:{self.port}/_stcore/stream", subprotocols=["streamlit"],
                                max_size=None, ping_interval=None, open_timeout=60, additional_headers=self.headers)
        self.reader = asyncio.create_task(self._read())
        self.ticker = asyncio.create_task(self._tick())
        await self.send()

    async def close(self) -> None:
        for task in (self.reader, self.ticker):
            task.cancel()
        await self.ws.close()

    async def send(self, states: tuple[WidgetState, ...] = (), fragment_id: str = "") -> None:
        message = BackMsg()
        rerun = message.rerun_script
        rerun.query_string = self.query
        rerun.page_script_hash = self.page_script_hash
        rerun.page_name = self.page
        # As a browser does, every rerun carries the values the page's widgets hold (the ones this tab set): a
        # rerun without them would make the server forget a typed answer that a coalesced Send still needs.
        self.values.update((state.id, state) for state in states if state.WhichOneof("value") == "string_value")
        held = {state.id: state for state in self.values.values()}
        held.update((state.id, state) for state in states)
        rerun.widget_states.widgets.extend(held.values())
        if fragment_id:
            rerun.fragment_id = fragment_id
            rerun.is_auto_rerun = True
        await self.ws.send(message.SerializeToString())

    async def _tick(self) -> None:
        """What the browser does for `st.fragment(run_every=...)`: rerun each fragment on its interval."""
        while True:
            await asyncio.sleep(2.0)
            for fragment_id in list(self.fragments):
                await self.send(fragment_id=fragment_id)

    async def _read(self) -> None:
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await self.ws.recv())
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
            elif kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "auto_rerun":
                self.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)
                if READY in self.widgets and not self.past_sidebar:  # a new visitor's sidebar-only first run:
                    self.past_sidebar = True  # the browser asks for the page once the sidebar is drawn
                    await self.send((press(self.widgets[READY]),))
            self.changed.set()

    def _element(self, element) -> None:
        which = element.WhichOneof("type")
        if which == "exception":
            self.exceptions += 1
        elif which == "metric":
            self.metrics[element.metric.label] = element.metric.body
        elif which in ("markdown", "alert"):
            self.texts = [*self.texts[-30:], getattr(element, which).body]
        elif which in ("text_input", "button"):
            widget = getattr(element, which)
            key = widget.id.rsplit("-", 1)[-1]
            self.widgets[key] = widget.id
            if which == "button":
                self.widgets[widget.label] = widget.id

    async def until(self, check, timeout: float) -> float:
        """Seconds until `check(self)` holds (raises TimeoutError)."""
        start = time.perf_counter()
        deadline = start + timeout
        while not check(self):
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                if not check(self):
                    raise
        return time.perf_counter() - start

    def says(self, text: str) -> bool:
        return any(text in body for body in self.texts)


def text(widget_id: str, value: str) -> WidgetState:
    return WidgetState(id=widget_id, string_value=value)


def press(widget_id: str) -> WidgetState:
    return WidgetState(id=widget_id, trigger_value=True)


@dataclass
class Results:
    round_trips: list[float] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)  # nickname -> the value confirmed
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def browser(number: int) -> dict[str, str]:
    """A browser's headers: its own address, as the phones of a class have (benchmark addresses, 198.18.0.0/15)."""
    return {"X-Forwarded-For": f"198.18.{number // 250}.{number % 250 + 1}"}


def first_cookie(port: int, page: str, headers: dict[str, str]) -> str:
    """What a browser's first request (the page's HTML) is given to send back: nginx's sticky cookie, or nothing."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/{page}", headers=headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        answer.read()
        cookies = answer.headers.get_all("Set-Cookie") or []
    return "; ".join(cookie.split(";", 1)[0] for cookie in cookies if cookie.startswith("steplab_replica="))


async def student(number: int, port: int, code: str, window: float, timeout: float, rng: random.Random,
                  joined: asyncio.Barrier, results: Results, arrival: float) -> None:
    nickname = f"student{number:03d}"
    tab = Tab(port, "join", f"lang={LANG}&code={code}", browser(number))
    try:
        await asyncio.sleep(arrival)  # when this student opens the join link
        await tab.open()
        await tab.until(lambda tab: t(LANG, "join.button") in tab.widgets and "join_nickname" in tab.widgets, timeout)
        await tab.send((text(tab.widgets["join_code"], code), text(tab.widgets["join_nickname"], nickname),
                        press(tab.widgets[t(LANG, "join.button")])))
        await tab.until(lambda tab: any(key.startswith("join_answer_") for key in tab.widgets), timeout)
    except (TimeoutError, OSError) as error:
        results.error(f"join: {type(error).__name__}")
        await joined.wait()
        return
    await joined.wait()
    value = fmt_int(RIGHT) if rng.random() < 0.6 else fmt_int(rng.choice(TRAPS))
    await asyncio.sleep(rng.uniform(0, window))
    box = next(key for key in tab.widgets if key.startswith("join_answer_"))
    sent = t(LANG, "join.sent", value=value)
    try:
        await tab.send((text(tab.widgets[box], value), press(tab.widgets[t(LANG, "join.send")])))
        results.round_trips.append(await tab.until(lambda tab: tab.says(sent), timeout))
        results.sent[nickname] = int(value.replace(",", ""))
    except (TimeoutError, OSError) as error:
        results.error(f"answer: {type(error).__name__}")
    finally:
        if tab.exceptions:
            results.error("exception on the page")
        await tab.close()


async def lesson(ports: list[int], students: int, window: float, timeout: float, seed: int, arrive: float) -> dict:
    """One class: the projector on `ports[0]`, student i on `ports[i mod len(ports)]`."""
    projector = Tab(ports[0], "class", f"lang={LANG}", browser(60_000))
    await projector.open()
    open_label, ask_label = t(LANG, "room.open"), t(LANG, "room.ask.button")
    await projector.until(lambda tab: open_label in tab.widgets, timeout)
    await projector.send((press(projector.widgets[open_label]),))
    await projector.until(lambda tab: "host=" in tab.query and ask_label in tab.widgets, timeout)
    host = re.search(r"host=([^&]+)", projector.query).group(1)
    code = projector.metrics[t(LANG, "room.code")]
    await projector.send((press(projector.widgets[ask_label]),))
    answered = t(LANG, "room.poll.answered")
    await projector.until(lambda tab: answered in tab.metrics, timeout)

    results = Results()
    joined = asyncio.Barrier(students + 1)
    rng = random.Random(seed)
    tasks = [asyncio.create_task(student(i, ports[i % len(ports)], code, window, timeout,
                                         random.Random(rng.random()), joined, results, arrive * i / students))
             for i in range(students)]
    await joined.wait()
    began = time.perf_counter()
    await asyncio.gather(*tasks)
    last_answer = time.perf_counter()
    everyone = t(LANG, "room.poll.answered_value", answered=fmt_int(len(results.sent)), joined=fmt_int(students))
    try:
        delay = await projector.until(lambda tab: tab.metrics.get(answered) == everyone, 30.0)
    except TimeoutError:
        delay = float("nan")
    shown = projector.metrics.get(answered)
    await projector.close()
    return {"host": host, "results": results, "seconds": last_answer - began, "delay": delay, "shown": shown}


class Nginx:
    """The README's deployment in front of the replicas: Debian's nginx, its main configuration
    (`/etc/nginx/nginx.conf`) with this run's own paths (pid, logs, temp files), `deploy/nginx.conf` as the site
    with the replicas' ports, and the frontend copy `deploy/prepare-static.sh` makes."""

    MAIN = Path("/etc/nginx/nginx.conf")

    def __init__(self, root: Path, ports: list[int], folder: Path, site_file: Path | None = None) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.port = free_port()
        site = (site_file or root / "deploy" / "nginx.conf").read_text()
        named = sorted(set(re.findall(r"server 127\.0\.0\.1:(\d+)", site)))  # the README's 8501, 8502
        if len(named) != len(ports):
            raise SystemExit(f"deploy/nginx.conf names {len(named)} replicas; run with --replicas {len(named)}")
        for readme_port, port in zip(named, ports, strict=True):
            site = site.replace(f":{readme_port}", f":{port}")
        static = folder / "steplab-static"
        subprocess.run(["sh", str(root / "deploy" / "prepare-static.sh"), str(static), sys.executable], check=True,
                       stdout=subprocess.DEVNULL)
        site = site.replace("listen 80;", f"listen 127.0.0.1:{self.port};").replace("root /srv/steplab-static;",
                                                                                  f"root {static};")
        (folder / "site.conf").write_text(site)
        main = self.MAIN.read_text()
        main = re.sub(r"^user .*$", "", main, flags=re.M)  # run as whoever runs the benchmark
        main = re.sub(r"^include /etc/nginx/modules-enabled/.*$", "", main, flags=re.M)
        main = re.sub(r"^pid .*$", f"pid {folder}/nginx.pid;", main, flags=re.M)
        main = re.sub(r"(?m)^(\s*)error_log .*$", rf"\1error_log {folder}/error.log;", main)
        main = re.sub(r"(?m)^(\s*)access_log .*$", rf"\1access_log {folder}/access.log steplab;", main)
        main = re.sub(r"(?m)^(\s*)include /etc/nginx/(conf\.d|sites-enabled)/.*$", "", main)
        temp = folder / "temp"
        temp.mkdir()
        paths = "".join(f"    {kind}_temp_path {temp}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi",
                                                                              "uwsgi", "scgi"))
        fmt = "    log_format steplab '$upstream_addr $uri';\n"  # which replica served each websocket
        main = main.replace("http {", f"http {{\n{fmt}{paths}    include {folder}/site.conf;", 1)
        (folder / "nginx.conf").write_text(main)
        self.process = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g",
                                         "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.folder = folder
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as answer:
                    if answer.read().strip() == b"ok":
                        return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    said = (folder / "error.log").read_text(errors="replace")
                    raise RuntimeError(f"nginx did not answer: {said}") from None
                time.sleep(0.2)

    def log_lines(self) -> int:
        return len((self.folder / "access.log").read_text().splitlines())

    def split(self, since: int) -> dict[str, int]:
        """How many websockets (one per tab) each replica held, of those closed after access log line `since`."""
        served: dict[str, int] = {}
        for line in (self.folder / "access.log").read_text().splitlines()[since:]:
            upstream, uri = (line.split(" ") + ["", ""])[:2]
            if uri == "/_stcore/stream":
                port = upstream.rsplit(":", 1)[-1]
                served[port] = served.get(port, 0) + 1
        return dict(sorted(served.items()))

    def pids(self) -> list[int]:
        """nginx's master and its workers."""
        return [self.process.pid, *(child.pid for child in psutil.Process(self.process.pid).children())]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


FRONTS = ("direct", "nginx")


def one_class(front: str, servers: list[Server], nginx: Nginx | None, url: str, args: argparse.Namespace,
              sampler: RssSampler) -> dict[str, float]:
    """One class of `args.students` on running replicas, straight to them or through nginx; its figures."""
    ports = [nginx.port] if front == "nginx" else [server.port for server in servers]
    load = os.getloadavg()[0]
    server_cpu = sampler.cpu_seconds()
    nginx_cpu = cpu_seconds(nginx.pids()) if nginx is not None else 0.0
    since = nginx.log_lines() if nginx is not None else 0
    outcome = asyncio.run(lesson(ports, args.students, args.window, args.timeout, args.seed, args.arrive))
    server_cpu = sampler.cpu_seconds() - server_cpu
    nginx_cpu = (cpu_seconds(nginx.pids()) - nginx_cpu) if nginx is not None else 0.0
    load_after = os.getloadavg()[0]
    results: Results = outcome["results"]
    store = Store(url)
    stored = {row.nickname: row.polls_answered for row in store.roster(outcome["host"])}
    in_db = sorted(int(value) for value in store.live(outcome["host"]).tally.values)
    store.close()
    lost = len(results.sent) - sum(1 for name in results.sent if stored.get(name) == 1)
    trips = [s * 1000 for s in results.round_trips]
    print(f"{front}: {args.students} students on {len(servers)} replica(s), load average {load:.1f} -> "
          f"{load_after:.1f} ({os.cpu_count()} CPUs)")
    print(f"  answers confirmed {len(results.sent)}, in the database {len(in_db)}, lost {lost}, values match "
          f"{sorted(results.sent.values()) == in_db}, errors {results.errors or 0}")
    print(f"  answer round trip (Send -> 'your answer is in'): p50 {percentile(trips, 50):.0f} ms, "
          f"p95 {percentile(trips, 95):.0f} ms, max {max(trips, default=float('nan')):.0f} ms; "
          f"all answers within {outcome['seconds']:.1f} s (window {args.window:.0f} s)")
    print(f"  projector: showed '{outcome['shown']}' {outcome['delay'] * 1000:.0f} ms after the last confirmed answer "
          f"(it refreshes every 2 s); CPU: replicas {server_cpu:.1f} s, nginx {nginx_cpu:.1f} s"
          f"{f'; tabs per replica {nginx.split(since)}' if front == 'nginx' and nginx else ''}", flush=True)
    return {"lost": lost, "errors": sum(results.errors.values()), "p50 ms": percentile(trips, 50),
            "p95 ms": percentile(trips, 95), "projector ms": outcome["delay"] * 1000, "server CPU s": server_cpu,
            "nginx CPU s": nginx_cpu, "load": (load + load_after) / 2}


def run_classes(root: Path, args: argparse.Namespace, fronts: list[str]) -> list[dict[str, float]]:
    """Replicas of checkout `root` (a fresh database, one cookie secret), nginx in front when a class needs it, and
    one class per entry of `fronts` on them, in that order; each class's figures."""
    folder = Path(tempfile.mkdtemp(prefix="steplab-class-load-"))
    url = args.database_url or f"sqlite:///{folder}/class.db"
    os.environ["STEPLAB_DATABASE_URL"] = url
    os.environ["STEPLAB_DATA_DIR"] = str(folder)
    os.environ["STREAMLIT_SERVER_COOKIE_SECRET"] = "steplab-class-load"  # the same on every replica (README)
    os.environ["PYTHONPATH"] = str(root)  # the replicas import that checkout's steplab
    servers: list[Server] = []
    nginx = sampler = None
    figures = []
    try:
        servers.extend(Server(root=root) for _ in range(max(1, args.replicas)))
        if "nginx" in fronts:
            nginx = Nginx(root, [server.port for server in servers], folder, args.site)
        sampler = RssSampler([server.process.pid for server in servers])
        sampler.start()
        print(f"{root}: replicas on ports {[s.port for s in servers]}"
              f"{f', nginx on {nginx.port}' if nginx else ''}, database {Store(url).url}", flush=True)
        for front in fronts:
            figures.append(one_class(front, servers, nginx, url, args, sampler))
            figures[-1]["peak RSS MiB"] = sampler.peak / 2**20
    finally:
        if sampler is not None:
            sampler.stopped.set()
        if nginx is not None:
            nginx.stop()
        for server in servers:
            server.stop()
    return figures


def side_by_side(title: str, names: tuple[str, str], runs: tuple[list[dict[str, float]], list[dict[str, float]]]
                 ) -> None:
    """The medians of two sets of classes, and their ratio."""
    print(f"side by side, median of {len(runs[0])} class(es) each: {title}")
    print(f"  {'':<14} {names[0]:>9} {names[1]:>9} {'ratio':>6}")
    for name in runs[0][0]:
        first, second = (statistics.median(run[name] for run in side) for side in runs)
        ratio = f"{first / second:6.2f}" if second else "     -"
        print(f"  {name:<14} {first:9.1f} {second:9.1f} {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--window", type=float, default=10.0, help="seconds in which every student answers")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--arrive", type=float, default=20.0, help="seconds over which the students open the join "
                        "link, one after another, as a room does after the code goes up (then all answer)")
    parser.add_argument("--database-url", default="", help="default: a fresh SQLite file shared by the replicas")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--front", choices=(*FRONTS, "both"), default="direct",
                        help="the students reach the replicas straight, through nginx (deploy/nginx.conf), or both "
                             "in alternating rounds")
    parser.add_argument("--site", type=Path, help="another nginx site than deploy/nginx.conf (an earlier version of "
                        "it, to compare), with the same replica ports 8501 and 8502")
    parser.add_argument("--baseline", type=Path, help="another checkout (an older commit's worktree): the same class "
                        "on its app, side by side")
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline or --front both: classes on each, "
                        "alternating")
    args = parser.parse_args()
    if args.front == "both":
        order = [front for number in range(args.rounds) for front in (FRONTS if number % 2 == 0 else FRONTS[::-1])]
        figures = run_classes(ROOT, args, order)
        by_front = tuple([run for run, front in zip(figures, order, strict=True) if front == name] for name in FRONTS)
        side_by_side(f"straight to the replicas and through nginx, {ROOT}", FRONTS, by_front)
        return
    if args.baseline is None:
        run_classes(ROOT, args, [args.front])
        return
    figures: dict[Path, list[dict[str, float]]] = {ROOT: [], args.baseline.resolve(): []}
    for _ in range(args.rounds):
        for root in figures:
            figures[root].extend(run_classes(root, args, [args.front]))
    side_by_side(f"this {ROOT}, baseline {args.baseline}", ("this", "baseline"), tuple(figures.values()))


if __name__ == "__main__":
    main()
