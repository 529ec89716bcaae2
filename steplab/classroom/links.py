"""The class's links: where students join, and whether a phone in the room can reach that address. Pure."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlencode, urlsplit, urlunsplit

JOIN_PAGE = "join"  # the student page's url path (steplab_ui/navigation.PAGES)
PUBLIC_URL_ENV = "STEPLAB_PUBLIC_URL"  # the address students use, when it is not the one the instructor sees


def sibling_url(page_url: str | None, page: str, public_url: str | None = None, **params: str) -> str:
    """The URL of another page of the same app, with `params` as its query.

    `page_url` is the page the instructor has open (`st.context.url`, e.g. `http://10.0.0.5:8501/class`; an app
    served under a prefix keeps it: `https://host/steplab/class` → `https://host/steplab/join`). `public_url`, when
    set, is the app's root as students reach it and wins. Without either, a path relative to the site root.
    """
    query = urlencode(params)
    base = (public_url or "").strip()
    if base:
        parts = urlsplit(base)
        path = parts.path.rstrip("/") + "/" + page
    elif page_url:
        parts = urlsplit(page_url)
        folder = parts.path.rsplit("/", 1)[0] if "/" in parts.path else ""
        path = folder + "/" + page
    else:
        return f"/{page}" + (f"?{query}" if query else "")
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def join_url(page_url: str | None, code: str, public_url: str | None = None) -> str:
    """The join page with the code filled in: what the QR code holds."""
    return sibling_url(page_url, JOIN_PAGE, public_url, code=code)


def reachable_from_phones(url: str) -> bool:
    """False for an address only this machine can open (`localhost`, `127.x`, `::1`, `0.0.0.0`): a QR code of it
    would take a student's phone nowhere. A relative URL is not reachable either (no host to scan)."""
    host = urlsplit(url).hostname
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return True  # a name: the room's network decides
    return not (address.is_loopback or address.is_unspecified)
