"""The README's deployment, for real: two replicas behind nginx with `deploy/nginx.conf`.

Every browser must stay on one replica: its page, its websocket (`/_stcore/stream`) and its uploads
(`/_stcore/upload_file/...`) reach the replica that holds its session, whatever the load balancer does for
other browsers. nginx's access log names the upstream of every request; the test reads it.
"""

from __future__ import annotations

import collections
import gzip
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit
from playwright.sync_api import Browser, expect

from steplab.i18n import t

from .conftest import CHROMIUM, ROOT, SKIP_REASON, StreamlitServer, free_port
from .streamlit_page import open_app, title, wait_for_app_run

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON),
              pytest.mark.skipif(NGINX is None, reason="Debian's nginx is not installed (apt-get install nginx)")]

CONFIG = ROOT / "deploy" / "nginx.conf"
LOG_FORMAT = "$steplab_sticky $upstream_addr $status $request_method $uri"
YAML = "per_device_train_batch_size: 2\ngradient_accumulation_steps: 16\nnum_train_epochs: 3\nnum_samples: 1600\n"


class Balancer:
    """Two replicas sharing one cookie secret, and nginx in front with the repository's config."""

    def __init__(self, folder: Path) -> None:
        secret = {"STREAMLIT_SERVER_COOKIE_SECRET": "steplab-test-secret"}  # the same on every replica
        self.replicas = [StreamlitServer(secret), StreamlitServer(secret)]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.folder = folder
        self.log = folder / "access.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> Balancer:
        for replica in self.replicas:
            replica.start()
        site = CONFIG.read_text()
        site = site.replace(":8501", f":{self.replicas[0].port}").replace(":8502", f":{self.replicas[1].port}")
        site = site.replace("listen 80;", f"listen 127.0.0.1:{self.port};")
        self.static = self.folder / "steplab-static"  # the README's step: the replicas' frontend, gzipped
        subprocess.run(["sh", str(ROOT / "deploy" / "prepare-static.sh"), str(self.static), sys.executable],
                       check=True, stdout=subprocess.DEVNULL)
        site = site.replace("root /srv/steplab-static;", f"root {self.static};")
        assert str(self.replicas[1].port) in site and f":{self.port};" in site and str(self.static) in site
        (self.folder / "steplab.conf").write_text(site)
        temp = self.folder / "temp"
        temp.mkdir()
        (self.folder / "nginx.conf").write_text(f"""
user root;
worker_processes 1;
pid {self.folder}/nginx.pid;
error_log {self.folder}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format steplab '{LOG_FORMAT}';
    access_log {self.log} steplab;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {self.folder}/steplab.conf;
}}
""")
        self._process = subprocess.Popen([NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"),
                                          "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"nginx did not answer: {(self.folder / 'error.log').read_text(errors='replace')}")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
        for replica in self.replicas:
            replica.stop()

    def upstreams_by_browser(self) -> dict[str, set[str]]:
        """sticky id → the replicas (host:port) that served its requests, from nginx's access log. When nginx
        tried several replicas for one request, $upstream_addr lists them all ("a, b"; " : " after an internal
        redirect): the last one answered."""
        seen: dict[str, set[str]] = collections.defaultdict(set)
        for line in self.log.read_text().splitlines():
            sticky, upstreams = re.fullmatch(r"(\S+) (.+?) \S+ \S+ \S+", line).groups()
            served = re.split(r", | : ", upstreams)[-1]
            if served != "-":
                seen[sticky].add(served)
        return seen


@pytest.fixture(scope="module")
def balancer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Balancer]:
    running = Balancer(tmp_path_factory.mktemp("nginx")).start()
    try:
        yield running
    finally:
        running.stop()


def browser_id(cookie: str) -> str:
    """The browser's own id in its cookie (`a.<id>`: the letter names its replica), as nginx's log names it."""
    return cookie.split(".", 1)[1]


def cookie_of(response) -> str:
    cookies = " | ".join(response.headers.get_all("Set-Cookie") or [])
    found = re.search(r"steplab_replica=([^;]+)", cookies)
    assert found, cookies
    return found.group(1)


def test_the_first_response_sets_the_cookie_and_the_cookie_keeps_the_replica(balancer: Balancer) -> None:
    firsts = []
    for _ in range(24):  # 24 new browsers: each gets its own id on its very first response
        with urllib.request.urlopen(balancer.url + "/") as response:
            firsts.append(cookie_of(response))
    assert len(set(firsts)) == 24
    for sticky in firsts[:6]:  # a browser that sends its cookie back is given the same one again
        for path in ("/", "/calculator", "/_stcore/health"):
            request = urllib.request.Request(balancer.url + path, headers={"Cookie": f"steplab_replica={sticky}"})
            with urllib.request.urlopen(request) as response:
                assert cookie_of(response) == sticky
    used = balancer.upstreams_by_browser()
    assert all(len(used[browser_id(sticky)]) == 1 for sticky in firsts), "a browser was served by two replicas"
    replicas = [f"127.0.0.1:{replica.port}" for replica in balancer.replicas]
    spread = collections.Counter(next(iter(used[browser_id(sticky)])) for sticky in firsts)
    assert set(spread) == set(replicas), "the browsers did not spread over both"
    # new browsers go to the replica with fewer connections: an even room, not the luck of a hash
    assert max(spread.values()) - min(spread.values()) <= 2, spread
    for sticky in firsts:  # the cookie's letter names the replica that served the browser
        assert next(iter(used[browser_id(sticky)])) == replicas["ab".index(sticky[0])]


def test_browsers_upload_and_apply_a_yaml_through_the_balancer(browser: Browser, balancer: Balancer,
                                                               tmp_path: Path) -> None:
    """Uploads travel over HTTP to the replica that owns the websocket's session: they only work if the
    balancer keeps both on one replica. Two browsers, one in Chinese and one in English."""
    config = tmp_path / "qwen3_lora_sft.yaml"
    config.write_text(YAML)
    stickies = []
    for lang in ("zh", "en"):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        try:
            open_app(page, balancer.url + "/config" + ("?lang=en" if lang == "en" else ""))
            expect(title(page)).to_have_text(t(lang, "page.config.title"), timeout=60_000)
            page.get_by_role("tab", name=t(lang, "config.upload")).click()
            page.get_by_test_id("stTabs").locator("input[type='file']").set_input_files(str(config))
            expect(page.get_by_text(config.name)).to_be_visible(timeout=60_000)
            wait_for_app_run(page)
            page.get_by_role("button", name=t(lang, "config.apply")).click()
            wait_for_app_run(page)
            expect(page.get_by_text(t(lang, "config.applied"))).to_be_visible(timeout=60_000)
            page.reload()  # a reload is a new page load with the same cookie: the same replica again
            wait_for_app_run(page)
            stickies.append(next(c["value"] for c in context.cookies() if c["name"] == "steplab_replica"))
        finally:
            context.close()
    stickies = [browser_id(sticky) for sticky in stickies]
    used = balancer.upstreams_by_browser()
    assert all(len(used[sticky]) == 1 for sticky in stickies), {s: used[s] for s in stickies}
    log = balancer.log.read_text()
    for sticky in stickies:  # the websocket and the upload of each browser were among its requests
        assert re.search(rf"^{re.escape(sticky)} \S+ 101 GET /_stcore/stream$", log, re.M)
        assert re.search(rf"^{re.escape(sticky)} \S+ 20\d PUT /_stcore/upload_file/", log, re.M)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def first_answer(url: str) -> tuple[int, str | None]:
    """The status and Location of nginx's own answer to `url` (a redirect is not followed)."""
    try:
        with urllib.request.build_opener(_NoRedirect).open(url, timeout=30) as response:
            return response.status, response.headers.get("Location")
    except urllib.error.HTTPError as answer:
        return answer.code, answer.headers.get("Location")


def test_a_link_too_long_for_the_replicas_opens_its_page_with_a_notice(browser: Browser, balancer: Balancer
                                                                       ) -> None:
    """Text pasted into the address: a replica alone answers a long enough request head with a bare HTTP 400.
    Through the balancer a 20 KB query comes back as its own page, in its language, with only the refusal mark,
    and so does a 2 MB one (about the longest URL Chromium sends); a normal link passes untouched.
    The browser then shows the page with the notice, the default setup and a clean address."""
    from steplab.teaching.presets import presets
    from steplab.trainer.plan import make_plan
    from steplab_ui.shell.state import MAX_LINK_QUERY

    from .streamlit_page import metric_value

    pasted = "num_samples=1000&note=" + "x" * 20_000
    replica = balancer.replicas[0]
    assert first_answer(f"http://127.0.0.1:{replica.port}/calculator?{'x' * 200_000}")[0] == 400  # why nginx is
    assert first_answer(f"{balancer.url}/calculator?lang=en&{pasted}") == (303, "/calculator?link=too_long&lang=en")
    assert first_answer(f"{balancer.url}/schedule?{'x' * 2_000_000}") == (303, "/schedule?link=too_long")
    assert first_answer(f"{balancer.url}/calculator?num_samples=1000&lang=en")[0] == 200
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        open_app(page, f"{balancer.url}/calculator?lang=en&{pasted}")
        expect(title(page)).to_have_text(t("en", "page.calculator.title"), timeout=60_000)
        notice = t("en", "url.link_refused", limit=MAX_LINK_QUERY)
        expect(page.get_by_test_id("stAlert").filter(has_text=notice[:40])).to_have_count(1)
        default = make_plan(presets()["course_default"].setup()).max_steps
        expect(metric_value(page, t("en", "card.total_steps"))).to_have_text(f"{default:,}")
        expect(page).to_have_url(f"{balancer.url}/calculator?lang=en", timeout=30_000)
    finally:
        context.close()


def test_killing_a_replica_moves_its_browser_to_the_other_with_its_setup(browser: Browser,
                                                                           tmp_path_factory: pytest.TempPathFactory
                                                                           ) -> None:
    """A replica dies mid-class: its browser's websocket drops, Streamlit's page reconnects through nginx (which
    passes a refused connection on to the next replica), and the new session on the other replica draws the same
    setup, because the setup is in the URL. No traceback; the access log shows the move."""
    from steplab.teaching.presets import presets
    from steplab.trainer.plan import make_plan

    from .streamlit_page import expect_no_exception, metric_value

    own = Balancer(tmp_path_factory.mktemp("nginx-kill")).start()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        open_app(page, own.url + "/calculator?lang=en&num_samples=1000&gradient_accumulation_steps=2")
        expected = make_plan(presets()["course_default"].setup(num_samples=1000, gradient_accumulation_steps=2)
                             ).max_steps
        total = metric_value(page, t("en", "card.total_steps"))
        expect(total).to_have_text(f"{expected:,}")
        sticky = browser_id(next(c["value"] for c in context.cookies() if c["name"] == "steplab_replica"))
        (first,) = own.upstreams_by_browser()[sticky]
        dead = next(replica for replica in own.replicas if first.endswith(f":{replica.port}"))
        dead.stop()
        # the page notices, reconnects through the balancer and runs again on the survivor
        page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=60_000)
        wait_for_app_run(page)
        expect(total).to_have_text(f"{expected:,}", timeout=60_000)
        expect_no_exception(page)
        assert "Traceback" not in page.get_by_test_id("stMain").inner_text()
        after = own.upstreams_by_browser()[sticky]
        assert len(after) == 2, f"the browser should have moved to the other replica: {after}"
        page.reload()  # a reload after the move stays on the survivor and shows the same setup
        wait_for_app_run(page)
        expect(total).to_have_text(f"{expected:,}", timeout=60_000)
    finally:
        context.close()
        own.stop()


STREAMLIT_STATIC = Path(streamlit.__file__).parent / "static"


def requests_for(balancer: Balancer, path: str) -> list[tuple[str, str]]:
    """(upstream, status) of every request nginx logged for `path` ("-": nginx answered it itself)."""
    lines = (re.fullmatch(r"\S+ (.+?) (\S+) \S+ (\S+)", line) for line in balancer.log.read_text().splitlines())
    return [(found.group(1), found.group(2)) for found in lines if found and found.group(3) == path]


def new_requests_for(balancer: Balancer, path: str, before: int) -> list[tuple[str, str]]:
    """The requests for `path` logged after the first `before` ones: nginx writes a request's line once it has
    finished the request, which can be a moment after the client has read the whole answer."""
    deadline = time.monotonic() + 10
    while len(logged := requests_for(balancer, path)) <= before and time.monotonic() < deadline:
        time.sleep(0.05)
    return logged[before:]


def fetch_gzip(url: str) -> tuple[dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request) as response:
        return dict(response.headers), response.read()


def test_nginx_sends_the_frontend_itself_gzipped(balancer: Balancer) -> None:
    """The page's scripts and the plotly bundle come from deploy/prepare-static.sh's copy, compressed ahead of
    time, byte for byte the replicas' own files once unzipped, cached for good, and no replica serves them."""
    with urllib.request.urlopen(balancer.url + "/calculator") as response:
        page = response.read().decode()
    named = re.findall(r'(?:src|href)="\./(static/js/[^"]+)"', page)
    plotly = next((STREAMLIT_STATIC / "static" / "js").glob("PlotlyChart.*.js")).relative_to(STREAMLIT_STATIC)
    assert len(named) > 5, page
    for path in [*named[:5], plotly.as_posix()]:
        before = len(requests_for(balancer, f"/{path}"))  # the browsers' requests before this test
        headers, body = fetch_gzip(f"{balancer.url}/{path}")
        assert headers["Content-Encoding"] == "gzip", (path, headers)
        assert "immutable" in headers["Cache-Control"] and "steplab_replica" not in headers.get("Set-Cookie", "")
        original = (STREAMLIT_STATIC / path).read_bytes()
        assert gzip.decompress(body) == original and len(body) < len(original), path
        assert new_requests_for(balancer, f"/{path}", before) == [("-", "200")], path
    assert len(body) < 0.4 * len(original)  # the plotly bundle: 4.7 MB of JavaScript


def test_the_browser_loads_the_page_from_the_gzipped_copy(browser: Browser, balancer: Balancer) -> None:
    """A new visitor's calculator through nginx: every script arrives gzipped and the page draws its numbers
    and its figure."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    scripts: list[tuple[str, str | None]] = []
    context.on("response", lambda response: scripts.append((response.url, response.headers.get("content-encoding")))
               if "/static/js/" in response.url else None)
    try:
        page = context.new_page()
        open_app(page, balancer.url + "/calculator?lang=en")
        expect(title(page)).to_have_text(t("en", "page.calculator.title"))
        expect(page.get_by_test_id("stPlotlyChart").locator(".main-svg").first).to_be_visible(timeout=60_000)
        assert len(scripts) > 20 and all(encoding == "gzip" for _, encoding in scripts), scripts
    finally:
        context.close()


def test_a_file_missing_from_the_copy_comes_from_a_replica(balancer: Balancer) -> None:
    """After a Streamlit upgrade without a new copy, the copy lacks the new files: nginx asks a replica."""
    path = next((STREAMLIT_STATIC / "static" / "js").glob("Slider.*.js")).relative_to(STREAMLIT_STATIC).as_posix()
    for stale in (balancer.static / path, balancer.static / f"{path}.gz"):
        stale.unlink()
    before = len(requests_for(balancer, f"/{path}"))  # the browsers' requests before this test
    with urllib.request.urlopen(f"{balancer.url}/{path}") as response:
        assert response.read() == (STREAMLIT_STATIC / path).read_bytes()
    replicas = {f"127.0.0.1:{replica.port}" for replica in balancer.replicas}
    ((upstream, status),) = new_requests_for(balancer, f"/{path}", before)
    assert upstream in replicas and status == "200"
