"""What a new visitor's browser downloads for a page, straight from a replica and through the deployment's nginx
(deploy/nginx.conf, with the frontend copy of deploy/prepare-static.sh): bytes over the network, requests, and how
many of them a replica's Python process had to answer.

Run: python benchmarks/bench_transfer.py [--pages home calculator playground]. Needs Debian's nginx and chromium
(the same as tests/e2e/test_deployment.py, whose `Balancer` it starts). Sizes are exact, not timed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pages import ARGS, IDLE, new_visitor  # noqa: E402

from tests.e2e.test_deployment import Balancer  # noqa: E402


def visit(browser, url: str) -> tuple[int, int]:
    """A new visitor's load of `url` until the app is idle and quiet: (requests, bytes received: headers and
    bodies as they crossed the network)."""
    page = new_visitor(browser)
    responses = []
    page.on("requestfinished", lambda request: responses.append(request.sizes()))
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=120_000)
    page.wait_for_load_state("networkidle")
    page.context.close()
    return len(responses), sum(s["responseBodySize"] + s["responseHeadersSize"] for s in responses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="+", default=["home", "calculator", "playground"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        balancer = Balancer(Path(folder)).start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
                replica = balancer.replicas[0].url
                print(f"{'page':<12} {'replica: requests':>18} {'KB':>7} | {'nginx: requests':>16} {'KB':>7} "
                      f"{'to a replica':>13} {'KB ratio':>9}")
                for name in args.pages:
                    path = "/" if name == "home" else f"/{name}"
                    direct_count, direct_bytes = visit(browser, f"{replica}{path}?lang=en")
                    before = len(balancer.log.read_text().splitlines())
                    count, received = visit(browser, f"{balancer.url}{path}?lang=en")
                    logged = balancer.log.read_text().splitlines()[before:]
                    to_replica = sum(1 for line in logged if line.split(" ")[1] != "-")
                    print(f"{name:<12} {direct_count:>18} {direct_bytes / 1024:>7,.0f} | {count:>16} "
                          f"{received / 1024:>7,.0f} {to_replica:>13} {received / direct_bytes:>9.2f}")
                browser.close()
        finally:
            balancer.stop()
    print("KB: response headers and bodies as received; 'to a replica': requests nginx passed on (the page, the "
          "websocket, its health and host-config calls)")


if __name__ == "__main__":
    main()
