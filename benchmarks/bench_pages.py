"""Page loads and slider changes in headless Chromium, every page against two floors: an empty Streamlit page, and
the same page with one small plotly figure.

The script starts `streamlit run serve.py` (the app as deployed) and `streamlit run benchmarks/empty_page.py` (one
line of text: what any Streamlit page costs a new session: the frontend's start, the websocket, one script run;
with `?figure=1` one plotly figure too: Streamlit loads and runs its plotly bundle, about 4.7 MB, only for a page
that draws one). For each page of `steplab_ui.shell.navigation.PAGES` it counts the plotly figures the page draws (once,
untimed), then opens it `--repeat` times, each in a new browser context (a new visitor, nothing cached), and times
from `goto` to the page idle with its title and every figure drawn (Streamlit's own
`data-test-script-state='notRunning'`, a figure's SVG; no fixed settle time), and to the sidebar drawn (none of
its controls grey while the code for its kind loads; issue 27: the figures' plotly kept it grey). Then, on each page, a slider change:
the sidebar's accumulation slider moved one stop with the keyboard, timed from the key press to the run's end (on
the calculator also to the new total on its card).

Then where the time goes: Chromium's CPU profile of one new visitor's load of each floor and of /calculator, the
browser's main thread by script file. Then the first visitor's wait (cold): a fresh server's first load of the
empty page, of /calculator and of /labs (which imports torch), `--cold-repeat` rounds. Only the open tab's lab is
computed (tests/test_labs_page.py and tests/e2e/test_labs_browser.py check it).

Run: python benchmarks/bench_pages.py [--repeat 5] [--cold-repeat 2]. Targets (issue 17): every page idle within
1.0 s warm at the course default, /labs within 1.5 s cold, a slider change within 300 ms. The machine is
shared: compare the ratios to the floors measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import Server  # noqa: E402

from steplab.i18n import fmt_int, t  # noqa: E402
from steplab.teaching.presets import presets  # noqa: E402
from steplab.trainer.plan import make_plan  # noqa: E402
from steplab_ui.shell.browser import READY, RECORD_SIDEBAR_DRAWN  # noqa: E402
from steplab_ui.shell.navigation import PAGES  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning'][data-test-connection-state='CONNECTED']"
PAGE_RUN = f"() => !document.querySelector('.st-key-{READY}') && document.querySelector(\"{IDLE}\") !== null"


def new_visitor(browser, init_script: str | None = None) -> Page:
    """A page in a new browser context at 1280 × 900: a new visitor, nothing cached (`init_script` runs before
    the page's own scripts). Close it with `page.context.close()`."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    if init_script:
        context.add_init_script(init_script)
    return context.new_page()


# plotly figures drawn: a chart's element is on the page before Streamlit has loaded and run its plotly bundle;
# the figure is drawn when its plot holds plotly's SVG
FIGURES_DRAWN = "n => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector('.main-svg')).length >= n"
SETTLE_MS = 4_000  # counting a page's figures (untimed): how long a page has to draw every figure it will draw


def wait_until_drawn(page: Page, figures: int) -> None:
    """The page's title drawn, the app idle past a new visitor's sidebar-only first run (`browser.sidebar_first`)
    and `figures` plotly figures drawn."""
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=120_000)
    page.wait_for_function(PAGE_RUN, timeout=120_000)
    page.wait_for_selector(IDLE, timeout=120_000)
    page.wait_for_function(FIGURES_DRAWN, arg=figures, timeout=120_000)


def load_times(browser, url: str, figures: int = 0) -> tuple[float, float | None]:
    """A new visitor's load of `url`: seconds from `goto` to the title drawn, the app idle and `figures` plotly
    figures drawn, and from the navigation's start (the page's clock) to the sidebar drawn (None on a page
    without StepLab's menu)."""
    page = new_visitor(browser, RECORD_SIDEBAR_DRAWN)
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    wait_until_drawn(page, figures)
    seconds = time.perf_counter() - start
    sidebar = page.evaluate("window.__steplabSidebar")
    page.context.close()
    return seconds, None if sidebar is None else sidebar / 1000


def load_seconds(browser, url: str, figures: int = 0) -> float:
    """`load_times`' first figure: the whole page drawn."""
    return load_times(browser, url, figures)[0]


def figures_on(browser, url: str) -> int:
    """How many plotly figures the page at `url` draws for a new visitor (untimed: waits `SETTLE_MS` once idle);
    loading it also warms the server's caches for the page."""
    page = new_visitor(browser)
    page.goto(url)
    page.wait_for_function(PAGE_RUN, timeout=120_000)
    page.wait_for_timeout(SETTLE_MS)
    count = page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length")
    page.context.close()
    return count


# Every message the page's websocket receives and every change to the page's DOM, with its time in the page's
# clock (installed before Streamlit's own script runs). A run is over when its last message has arrived and the
# page has drawn it; the script-state attribute alone can miss a fast run (React may apply "running" and "not
# running" in one render, so that attribute never changes). The text each change put into the main area is kept
# with its time, to read when a new number first showed.
COUNT_MESSAGES = """(() => {
    const Native = window.WebSocket;
    const events = window.__steplabEvents = [];
    const texts = window.__steplabTexts = [];
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", () => events.push(performance.now()));
        }
    };
    new MutationObserver(records => {
        const now = performance.now();
        events.push(now);
        for (const record of records) {
            const element = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
            if (!element || !element.closest("[data-testid='stMain']")) continue;
            const text = record.type === "characterData" ? record.target.data
                : [...record.addedNodes].map(node => node.textContent || "").join(" ");
            if (text) texts.push([now, text]);
        }
    }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();"""
# When the main area first showed `number` as a whole number after `start` (null if it did not)
NUMBER_SHOWN = """([start, number]) => {
    const whole = new RegExp("(^|[^0-9.,])" + number.replace(/[.,]/g, "\\$&") + "($|[^0-9.,])");
    const hit = window.__steplabTexts.find(([when, text]) => when >= start && whole.test(text));
    return hit ? hit[0] - start : null;
}"""
QUIET_MS = 500  # no message and no change for this long after the last one: the run is over and drawn
RUN_ENDED = """([start, quiet]) => {
    const after = window.__steplabEvents.filter(when => when >= start);
    const last = after[after.length - 1];
    return after.length && performance.now() - last >= quiet ? last - start : null;
}"""
TIMEOUT_MS = 60_000
# The first load on a fresh server: the floor, a page without torch, and /labs (which imports torch), served as
# deployed (serve.py imports the heavy libraries at start-up, before the server answers) and by app.py alone
# (every import on first use)
COLD = (("benchmarks/empty_page.py", ""), ("serve.py", "calculator?lang=en"), ("serve.py", "labs?lang=en"),
        ("app.py", "calculator?lang=en"), ("app.py", "labs?lang=en"))


def slider_change(page: Page, key: str = "ArrowRight") -> tuple[float, float | None]:
    """Focus the accumulation slider, press `key`, and read in the page's own clock when the run it started was
    over and drawn (its last websocket message or page change, once `QUIET_MS` pass without another), and when
    the main area first showed the engine's new total of optimizer steps (None on a page that does not show it).
    The move back is made with this too, so the next press never lands in a run still going. The page's context
    must have `COUNT_MESSAGES` installed."""
    slider = page.get_by_test_id("stSidebar").get_by_role("slider", name=t("en", "field.gradient_accumulation_steps"))
    slider.focus()
    start = page.evaluate("() => performance.now()")
    page.keyboard.press(key)
    drawn = page.wait_for_function(RUN_ENDED, arg=[start, QUIET_MS], timeout=TIMEOUT_MS).json_value() / 1000
    course = presets()["course_default"]
    stop = parse_qs(urlparse(page.url).query).get("gradient_accumulation_steps", [None])[0]
    setup = course.setup()
    total = make_plan(setup.replace(gradient_accumulation_steps=int(stop)) if stop else setup).max_steps
    shown = page.evaluate(NUMBER_SHOWN, [start, fmt_int(total)])
    return drawn, None if shown is None else shown / 1000


def main_thread_ms(browser, url: str, figures: int) -> tuple[float, list[tuple[str, float]]]:
    """Where a new visitor's page load spends the browser's main thread: Chromium's own CPU profile of one load
    of `url` (until `figures` are drawn and 1 s after), as busy milliseconds and the largest shares by script
    file (its build hash dropped), with the collector's and the browser's own (native) time under their names."""
    page = new_visitor(browser)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        browser.start_tracing(page=page, path=str(trace), categories=["disabled-by-default-v8.cpu_profiler"])
        page.goto(url, wait_until="domcontentloaded")
        wait_until_drawn(page, figures)
        page.wait_for_timeout(1_000)
        browser.stop_tracing()
        events = json.loads(trace.read_text())["traceEvents"]
    page.context.close()
    nodes: dict[int, dict] = {}
    busy: Counter[str] = Counter()
    for event in events:
        if event.get("name") != "ProfileChunk":
            continue
        data = event["args"]["data"]
        for node in data.get("cpuProfile", {}).get("nodes", []):
            nodes[node["id"]] = node["callFrame"]
        for sample, delta in zip(data.get("cpuProfile", {}).get("samples", []), data.get("timeDeltas", []),
                                 strict=False):
            frame = nodes.get(sample, {})
            name = frame.get("functionName", "")
            if name in ("(idle)", "(program)", "(root)"):
                continue
            script = frame.get("url", "").rsplit("/", 1)[-1]
            where = script.split(".")[0] if script else ("collector" if name == "(garbage collector)" else "native")
            busy[where] += delta / 1000
    return sum(busy.values()), busy.most_common(5)


def median_ms(values: list[float | None]) -> str:
    """The median in ms, or "-" when a value is missing (a page that does not show the number)."""
    return "-" if not values or None in values else f"{statistics.median(values) * 1000:.0f}"


def open_for_changes(browser, url: str, figures: int) -> Page:
    """`url` in a new context with `COUNT_MESSAGES` installed, loaded and drawn, for slider changes."""
    page = new_visitor(browser, COUNT_MESSAGES)
    page.goto(url)
    wait_until_drawn(page, figures)
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold-repeat", type=int, default=2, help="rounds of fresh servers (empty page, "
                        "/calculator, /labs)")
    parser.add_argument("--baseline", type=Path, help="another checkout (e.g. a git worktree of an older commit) "
                        "served beside this one: every load and slider change alternates between the two")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; medians of {args.repeat} "
          "new browser contexts each")
    roots = {"this": ROOT, **({"baseline": args.baseline} if args.baseline else {})}
    servers = {side: Server(root=root) for side, root in roots.items()}
    empty = Server("benchmarks/empty_page.py")
    figures: dict[str, int] = {"": 0, "?figure=1": 1}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            floors = []
            for query in ("", "?figure=1"):
                floor_url = f"http://127.0.0.1:{empty.port}/{query}"
                load_seconds(browser, floor_url, figures[query])
                floors.append(statistics.median(load_seconds(browser, floor_url, figures[query])
                                                for _ in range(args.repeat)))
            floor, figure_floor = floors
            print("load: goto -> title drawn, the app idle and every figure drawn (x: against the empty page, and "
                  "against the empty page with one figure); sidebar: -> the sidebar drawn, no control of it grey; "
                  "slider: key press -> the new total shown, and -> the run ended and drawn")
            print(f"  (empty) {floor * 1000:.0f} ms; (1 figure) {figure_floor * 1000:.0f} ms, "
                  f"{figure_floor / floor:.1f}x the empty page")
            header = f"{'page':<12} {'figures':>7}"
            for side in servers:
                header += f" | {side + ' load':>14} {'sidebar':>7} {'x':>4} {'x fig':>5} {'numbers':>8} {'drawn':>6}"
            print(header + (" | load ratio, drawn ratio" if args.baseline else ""))
            for _, _, path, _ in PAGES:
                query = f"{'' if path == 'home' else path}?lang=en"
                urls = {side: f"http://127.0.0.1:{server.port}/{query}" for side, server in servers.items()}
                drawn = figures[query] = figures_on(browser, urls["this"])  # and warms the page's caches
                for side in servers:
                    if side != "this":
                        figures_on(browser, urls[side])
                loads: dict[str, list[float]] = {side: [] for side in servers}
                sidebars: dict[str, list[float | None]] = {side: [] for side in servers}
                for _ in range(args.repeat):
                    for side in servers:
                        load, sidebar = load_times(browser, urls[side], drawn)
                        loads[side].append(load)
                        sidebars[side].append(sidebar)
                pages = {side: open_for_changes(browser, urls[side], drawn) for side in servers}
                changes: dict[str, list[tuple[float, float | None]]] = {side: [] for side in servers}
                for _ in range(args.repeat):
                    for side, page in pages.items():
                        changes[side].append(slider_change(page))
                        slider_change(page, "ArrowLeft")  # back, not counted
                for page in pages.values():
                    page.context.close()
                row = f"{path:<12} {drawn:>7}"
                for side in servers:
                    load = statistics.median(loads[side])
                    over_figure = f"{load / figure_floor:>5.1f}" if drawn else f"{'':>5}"
                    row += (f" | {load * 1000:>14.0f} {median_ms(sidebars[side]):>7} {load / floor:>4.1f} {over_figure} "
                            f"{median_ms([shown for _, shown in changes[side]]):>8} "
                            f"{median_ms([done for done, _ in changes[side]]):>6}")
                if args.baseline:
                    ratio = statistics.median(loads["this"]) / statistics.median(loads["baseline"])
                    drawn_ratio = (statistics.median(d for d, _ in changes["this"])
                                   / statistics.median(d for d, _ in changes["baseline"]))
                    row += f" | {ratio:.2f}, {drawn_ratio:.2f}"
                print(row)
            print("where a new visitor's load spends the browser's main thread (one load each, Chromium's CPU "
                  "profile; busy ms, then the largest shares by script file)")
            for label, port, query in (("(empty)", empty.port, ""), ("(1 figure)", empty.port, "?figure=1"),
                                       ("calculator", servers["this"].port, "calculator?lang=en")):
                total, shares = main_thread_ms(browser, f"http://127.0.0.1:{port}/{query}", figures[query])
                print(f"  {label:<12} {total:>6.0f} ms: " + ", ".join(f"{name} {ms:.0f}" for name, ms in shares))
            browser.close()
            print("cold: the first page a fresh server draws once it answers its health check, in turn, each in a "
                  "new browser")
            for round_ in range(args.cold_repeat):
                cells = []
                for script, query in COLD:
                    for side, root in roots.items():
                        if script.startswith("benchmarks/") and side != "this":
                            continue
                        cold = Server(script, root=root)
                        try:
                            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
                            seconds = load_seconds(browser, f"http://127.0.0.1:{cold.port}/{query}", figures[query])
                            browser.close()
                        finally:
                            cold.stop()
                        where = "" if script.startswith("benchmarks/") else f" ({script}, {side})"
                        cells.append(f"{query.split('?')[0] or '(empty)'}{where} {seconds * 1000:,.0f} ms")
                print(f"  round {round_ + 1}: " + ", ".join(cells))
    finally:
        for server in servers.values():
            server.stop()
        empty.stop()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
