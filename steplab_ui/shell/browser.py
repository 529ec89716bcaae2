"""What the browser must do that Streamlit offers no setting for.

Two kinds of script, both run in the page itself (no frame, nothing fetched):

- `st.components.v2` components, mounted with no visible content, for what sends a value back or must run again:
  `remember` keeps the learner's progress code in this browser's local storage (storage can be blocked, a private
  window or an embedding site's policy: then the code stays in the session only, and nothing breaks);
  `scroll_to_top` scrolls the page back to its top (a lesson just opened from its end).
- Small scripts sent with the page (`st.html(..., unsafe_allow_javascript=True)`), each installing itself once per
  browser tab, so the same script drawn again on a later run does nothing more:

  - `page_changes`: a page opened from the menu starts at its top (Streamlit keeps the main column's scroll position
    across pages: from a long page scrolled down, the next page opened part way down), and on a narrow screen the
    menu closes once a page is chosen (Streamlit's own menu does; the links StepLab draws instead, `navigation.menu`,
    do not, and the open sidebar covered 300 of a 420 px phone's width). And one history entry per page: Streamlit
    pushes a new entry for every change of the query string (each setup field `state.write_url` puts back after a
    page change, each control moved), so that Back stayed on the same page five times after an imported YAML; a
    change of the query alone now replaces the page's entry, and Back goes to the page before.
  - `cap_text_box`: a text box refuses, before the browser inserts it, a paste or drop that would make it longer
    than the box takes. Streamlit's `max_chars` refuses the value only after the browser has inserted it, and
    Chromium's text box takes time growing faster than the text (100 KB: 6 s in a plain text box, 22 s in
    Streamlit's, on a busy machine; 1.2 MB over six minutes, the tab frozen meanwhile). The box is then marked
    `data-steplab-refused`; the page's own note, in the user's language, is shown by CSS while the mark stands (`capped_note`).
  - `sidebar_first`: a new visitor's first run of a page with figures draws the sidebar and the page's title only;
    the script clicks the run's hidden button once the sidebar is drawn, and the next run draws the page. The frontend draws no
    element before the code for its kind has loaded, and the main column's figures bring plotly (4.7 MB, seconds of a busy
    browser's main thread): the sidebar's controls stood grey until the figures were drawn, 14 s after the page
    said it was idle on /schedule on a busy machine.
  - `streamlit_words`: the words of Streamlit's own a script can reach, the uploader's "Upload" button and its "64MB per file", in the
    user's language (Streamlit 1.67 has no setting for any of its own words; see the function).

Each script sits in a container no one sees (keyed `HIDDEN_KEY…`), so it takes no room on the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from steplab.i18n import t

STORAGE_KEY = "steplab.progress"

_MEMORY_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  try {
    const storage = window.localStorage;
    if (data.forget) { storage.removeItem(data.key); return; }
    if (data.code) { storage.setItem(data.key, data.code); return; }
    const stored = storage.getItem(data.key);
    if (stored) { setTriggerValue("stored", stored); }
  } catch (error) {
    /* storage blocked: the progress stays in this session only */
  }
}
"""

_SCROLL_JS = """
export default function (component) {
  const main = document.querySelector("[data-testid='stMain']");
  if (main) { main.scrollTo({ top: 0 }); }
  window.scrollTo({ top: 0 });
}
"""

_CSS = ":host { display: none; }"


@st.cache_resource(show_spinner=False)
def _components() -> dict[str, Callable[..., Any]]:
    """Registered once per server process (registering again would replace them for every session)."""
    return {"memory": st.components.v2.component("steplab_progress_memory", js=_MEMORY_JS, css=_CSS),
            "scroll": st.components.v2.component("steplab_scroll_top", js=_SCROLL_JS, css=_CSS)}


def remember(code: str, key: str, *, forget: bool = False, on_stored: Callable[[], None] | None = None) -> str | None:
    """Keep `code` in this browser; with no code, ask for one kept earlier. Returns the stored code the browser
    sent back in this run (once, right after the page loads), else None."""
    mount = _components()["memory"]
    result = mount(key=key, data={"key": STORAGE_KEY, "code": code, "forget": forget},
                   on_stored_change=on_stored or (lambda: None))
    return getattr(result, "stored", None)


def scroll_to_top(when: int | str, key: str) -> None:
    """Scroll the page to its top once for each new value of `when` (a lesson just opened from its end)."""
    _components()["scroll"](key=key, data={"when": when})


HIDDEN_KEY = "steplab_browser"
TEXT_BOX_CHARS = 20_000  # what a pasted config may hold: ten times the longest of LLaMA-Factory's examples (1.8 KB),
# pasted in about 0.4 s by Chromium on a busy machine (40 KB 1 to 3.5 s, 100 KB 6 s; see `cap_text_box`)
NARROW = 768  # px: Streamlit's `md` breakpoint, at or under which its sidebar covers the page instead of sitting beside it
REFUSED = "data-steplab-refused"

_PAGE_CHANGES = """<script>
(() => {
  if (window.steplabPageChanges) return;
  window.steplabPageChanges = true;
  let path = window.location.pathname;
  const changed = () => {
    if (window.location.pathname === path) return;
    path = window.location.pathname;
    const main = document.querySelector("[data-testid='stMain']");
    if (main) main.scrollTop = 0;
    const sidebar = document.querySelector("[data-testid='stSidebar']");
    const close = document.querySelector("[data-testid='stSidebarCollapseButton'] button");
    if (window.innerWidth <= NARROW && close && sidebar && sidebar.getAttribute("data-collapsed") === "false") close.click();
  };
  const replace = window.history.replaceState;
  for (const name of ["pushState", "replaceState"]) {
    const original = window.history[name];
    window.history[name] = function (...args) {
      const target = args[2] === undefined || args[2] === null ? null : new URL(args[2], window.location.href);
      const same = target !== null && target.pathname === window.location.pathname;
      const result = (name === "pushState" && same ? replace : original).apply(this, args);
      changed();
      return result;
    };
  }
  window.addEventListener("popstate", changed);
})();
</script>""".replace("NARROW", str(NARROW))

_CAP = """<script>
(() => {
  const caps = window.steplabCaps = window.steplabCaps || {};
  Object.assign(caps, CAPS);
  if (window.steplabCapping) return;
  window.steplabCapping = true;
  const limit = (box) => {
    for (const [key, chars] of Object.entries(caps)) if (box.closest(".st-key-" + key)) return chars;
    return null;
  };
  const inserted = (event) => {
    if (event.type === "paste") return event.clipboardData ? event.clipboardData.getData("text/plain") : "";
    if (event.type === "drop") return event.dataTransfer ? event.dataTransfer.getData("text/plain") : "";
    return event.data || (event.dataTransfer ? event.dataTransfer.getData("text/plain") : "") || "";
  };
  const guard = (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement || box instanceof HTMLInputElement)) return;
    const chars = limit(box);
    if (chars === null) return;
    const kept = box.value.length - Math.abs((box.selectionEnd || 0) - (box.selectionStart || 0));
    if (kept + inserted(event).length > chars) {
      event.preventDefault();
      event.stopImmediatePropagation();
      box.setAttribute("REFUSED", "true");
    } else if (event.type !== "beforeinput" || event.inputType.startsWith("insert")) {
      box.removeAttribute("REFUSED");
    }
  };
  for (const type of ["paste", "drop", "beforeinput"]) document.addEventListener(type, guard, true);
})();
</script>""".replace("REFUSED", REFUSED)


def _script(key: str, script: str) -> None:
    """`script` in a container keyed `key` that takes no room (it and the wrapper Streamlit puts around it hidden)."""
    hide = f"<style>[data-testid='stLayoutWrapper']:has(> .st-key-{key}), .st-key-{key} {{ display: none; }}</style>"
    with st.container(key=key):
        st.html(hide + script, unsafe_allow_javascript=True)


def page_changes() -> None:
    """Scroll the new page to its top and close the menu on a narrow screen, whenever the page changes."""
    with st.sidebar:
        _script(f"{HIDDEN_KEY}_pages", _PAGE_CHANGES)


def cap_text_box(key: str, chars: int) -> None:
    """The text box whose widget key is `key` takes at most `chars` characters: a paste or drop that would make it
    longer is refused before the browser inserts it, and the box marked (see `capped_note`)."""
    _script(f"{HIDDEN_KEY}_cap_{key}", _CAP.replace("CAPS", json.dumps({key: chars})))


def capped_note(key: str, text: str) -> None:
    """`text`, in the look of a warning, shown only while the box keyed `key` holds the mark of a refused paste.

    Plain HTML, not `st.warning`: a warning element would stand in the page's element tree (and AppTest's list of
    the page's warnings) although no one sees it until a browser refuses a paste. `role="alert"`: a screen reader
    says it when it appears. Colours: Streamlit's own warning box, light and dark."""
    note = f"steplab-note-{key}"
    shown = f"[data-testid='stMain']:has(.st-key-{key} [{REFUSED}])"
    st.html(f"""<style>
[data-testid='stElementContainer']:has(.{note}) {{ display: none; }}
{shown} [data-testid='stElementContainer']:has(.{note}) {{ display: block; }}
.{note} {{ background: #fffae5; color: #956b0f; border-radius: 0.5rem; padding: 1rem; }}
@media (prefers-color-scheme: dark) {{ .{note} {{ background: #302917; color: #fbd54f; }} }}
</style><div class="{note}" role="alert">{html.escape(text)}</div>""")


UPLOAD_BUTTON = "[data-testid='stFileUploaderDropzone'] [data-testid='stBaseButton-secondary'] [data-testid='stMarkdownContainer'] p"
UPLOAD_LIMIT = "[data-testid='stFileUploaderDropzoneInstructions'] span"  # "64MB per file • JSON, CSV"

_WORDS = """<script>
(() => {
  window.steplabUploadWord = WORD;
  window.steplabPerFile = PER_FILE;
  const put = () => {
    for (const text of document.querySelectorAll(BUTTON)) {
      if (text.textContent !== window.steplabUploadWord) text.textContent = window.steplabUploadWord;
    }
    for (const text of document.querySelectorAll(LIMIT)) {
      if (text.children.length) continue;
      // Streamlit's English, kept beside what is shown: a switch of language rewrites it from the original
      if (text.dataset.steplabOriginal === undefined || text.textContent !== text.dataset.steplabShown) {
        text.dataset.steplabOriginal = text.textContent;
      }
      const found = text.dataset.steplabOriginal.match(/^(\\S+) per file(.*)$/s);
      const shown = found ? window.steplabPerFile.replace("{size}", found[1]) + found[2] : text.dataset.steplabOriginal;
      text.dataset.steplabShown = shown;
      if (text.textContent !== shown) text.textContent = shown;
    }
  };
  put();
  if (window.steplabWords) return;
  window.steplabWords = true;
  new MutationObserver(put).observe(document.body, {subtree: true, childList: true, characterData: true});
})();
</script>"""


def streamlit_words(lang: str) -> None:
    """The file uploader's "Upload" button and its size limit ("64MB per file") in the user's language.

    Streamlit 1.67 writes its own words in English in its frontend bundle, with no setting or parameter for any
    of them: the uploader's "Upload", "Drag and drop a file here", "… per file", "File must be … or smaller",
    "Only one file is allowed", "… files are not allowed", and the connection dialog ("Connection error", "Is
    Streamlit still running?"). What a page can set is its label (StepLab's states the limit in the user's
    language) and `max_upload_size` (/config's YAML uploader takes files up to the server's cap, so that a large
    file is refused by the page in the user's language, not by the browser in English). The button's own text
    is replaced here, as text (a screen reader and axe read it; CSS generated content, tried first, is not the
    button's name to axe), and put back after a switch to English; so is the limit below it, "64MB per file", its
    size and its file types kept, Streamlit's English remembered beside it for a switch back."""
    script = (_WORDS.replace("WORD", json.dumps(t(lang, "streamlit.upload"))).replace("BUTTON", json.dumps(UPLOAD_BUTTON))
              .replace("PER_FILE", json.dumps(t(lang, "streamlit.per_file"))).replace("LIMIT", json.dumps(UPLOAD_LIMIT)))
    _script(f"{HIDDEN_KEY}_words", script)


READY = "steplab_sidebar_drawn"  # the hidden button's key, and (as a plain key) the session's mark that it was clicked
# The sidebar is drawn: its menu is there and none of its controls waits (grey) for the code of its kind
SIDEBAR_DRAWN = """() => {
  const sidebar = document.querySelector("[data-testid='stSidebar']");
  return !!sidebar && !!sidebar.querySelector("[data-testid='stPageLink']")
    && !sidebar.querySelector("[data-testid='stSkeleton']");
}"""
# For the benchmarks and the browser tests (a page's init script): `window.__steplabSidebar`, the page's clock when
# the sidebar was first drawn
RECORD_SIDEBAR_DRAWN = f"""(() => {{
  window.__steplabSidebar = null;
  new MutationObserver(() => {{
    if (window.__steplabSidebar === null && ({SIDEBAR_DRAWN})()) window.__steplabSidebar = performance.now();
  }}).observe(document, {{subtree: true, childList: true, attributes: true}});
}})();"""
_SIDEBAR_DRAWN = """<script>
(() => {
  if (window.steplabSidebarFirst) return;
  window.steplabSidebarFirst = true;
  const started = performance.now();
  const look = () => {
    const button = document.querySelector(".st-key-READY button");
    if (!button) return false;
    if (!(DRAWN)() && performance.now() - started < WAIT_MS) return false;
    button.click();
    return true;
  };
  const observer = new MutationObserver(() => { if (look()) { observer.disconnect(); window.steplabSidebarFirst = false; } });
  observer.observe(document.body, {subtree: true, childList: true});
  if (look()) { observer.disconnect(); window.steplabSidebarFirst = false; }
})();
</script>""".replace("READY", READY).replace("DRAWN", SIDEBAR_DRAWN)
WAIT_MS = 10_000  # the page is asked for after this long even if the sidebar is not drawn yet


def _mark_drawn() -> None:
    st.session_state[f"_{READY}"] = True


def sidebar_first(figures: bool) -> bool:
    """True on a browser session's runs until its sidebar is drawn, when its first page draws plotly figures
    (`figures`): then the page draws nothing but its title, and a hidden button in the sidebar, which the script
    clicks once no control of the sidebar is waiting for its code, asks for the page. False without a browser
    (AppTest has no request headers), once the button was clicked, and from a first page without figures on (one
    run draws it: an extra run would only delay its main column, and the next pages find the sidebar's code
    loaded)."""
    if st.session_state.get(f"_{READY}") or not st.context.headers:
        return False
    if not figures:
        _mark_drawn()
        return False
    with st.sidebar:
        hide = f"<style>.st-key-{READY} {{ display: none; }}</style>"
        st.html(hide + _SIDEBAR_DRAWN.replace("WAIT_MS", str(WAIT_MS)), unsafe_allow_javascript=True)
        st.button("·", key=READY, on_click=_mark_drawn)
    return True
