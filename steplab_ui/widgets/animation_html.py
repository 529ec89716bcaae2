"""The accumulation animation as one standalone HTML file: plotly frames with play, pause and a slider.

For a course page where no server runs. The frames are the same as the app's: the timeline's window,
each drawn by the page's own `animation_view.frame_spec` (a plain plotly figure dict; no Streamlit here).
Plotly animates on the client, so there is no narration beyond what each frame carries: the narration
line is part of every frame.
"""

from __future__ import annotations

import base64
import html
import json
import re
import textwrap
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from steplab.i18n import fmt_int, t
from steplab.simulation.narration import narration, totals
from steplab.simulation.timeline import Timeline
from steplab_ui.shell.layout import chart_config
from steplab_ui.widgets.animation_frames import frame_spec

FRAME_MS = 800
EXPORT_HEIGHT = 520
NARRATION_MARGIN = 80  # pixels under the plot for the narration, then the buttons and the slider


def _wrap(text: str, lang: str) -> str:
    """Line breaks for an annotation (plotly does not wrap): by width in English, by characters in Chinese."""
    if lang == "zh":
        return "<br>".join(text[i:i + 58] for i in range(0, len(text), 58))
    return "<br>".join(textwrap.wrap(text, 110))


def _narration(timeline: Timeline, position: int, lang: str) -> dict:
    frame = timeline.frames[position]
    text = narration(frame, timeline).get(lang)
    gap = timeline.gaps[position]
    if gap is not None:
        text = t(lang, "anim.gap", micro_batches=fmt_int(gap.micro_batches), updates=fmt_int(gap.updates)) + " " + text
    return {"x": 0, "y": 0, "xref": "paper", "yref": "paper", "xanchor": "left", "yanchor": "top", "yshift": -8,
            "align": "left", "showarrow": False, "text": html.escape(_wrap(text, lang)).replace("&lt;br&gt;", "<br>"),
            "font": {"size": 13}}


def animation_figure(timeline: Timeline, lang: str) -> go.Figure:
    """One figure whose frames are the timeline's frames, with play/pause buttons and a slider."""
    if not timeline.frames:
        raise ValueError("a timeline without frames has nothing to animate")
    frames = []
    first: dict = {}
    for position in range(len(timeline.frames)):
        drawn = frame_spec(timeline, position, lang)
        first = first or drawn
        notes = [*drawn["layout"]["annotations"], _narration(timeline, position, lang)]
        frames.append({"name": str(position), "data": drawn["data"],
                       "layout": {"shapes": drawn["layout"]["shapes"], "annotations": notes}})
    play = {"frame": {"duration": FRAME_MS, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate", "transition": {"duration": 0}}
    steps = []
    for position, frame in enumerate(timeline.frames):
        label = ("…" if timeline.gaps[position] else "") + fmt_int(frame.index + 1)
        steps.append({"method": "animate", "label": label,
                      "args": [[str(position)], {"mode": "immediate", "frame": {"duration": 0, "redraw": True},
                                                 "transition": {"duration": 0}}]})
    layout = dict(first["layout"])
    layout.update(
        template=pio.templates["plotly_white"].to_plotly_json(),
        height=EXPORT_HEIGHT + NARRATION_MARGIN + 150,
        margin={"l": 10, "r": 10, "t": 50, "b": NARRATION_MARGIN + 100},
        title={"text": t(lang, "page.animation.title") + " · " + t(
            lang, "anim.export.setup", batch=timeline.batch_size, ga=timeline.accumulation,
            gpus=timeline.world_size, trainer=timeline.plan.profile.matched), "x": 0.01, "font": {"size": 16}},
        annotations=[*first["layout"]["annotations"], _narration(timeline, 0, lang)],
        updatemenus=[{
            "type": "buttons", "direction": "left", "x": 0, "y": 0, "xanchor": "left", "yanchor": "top",
            "pad": {"t": NARRATION_MARGIN + 20},
            "buttons": [
                {"label": "▶ " + t(lang, "anim.play"), "method": "animate", "args": [None, play]},
                {"label": "❚❚ " + t(lang, "anim.pause"), "method": "animate", "args": [[None], pause]},
            ],
        }],
        sliders=[{
            "active": 0, "x": 0.16, "len": 0.84, "y": 0, "yanchor": "top", "pad": {"t": NARRATION_MARGIN},
            "currentvalue": {"prefix": t(lang, "anim.export.slider"), "font": {"size": 13}},
            "steps": steps,
        }],
    )
    return go.Figure({"data": first["data"], "layout": layout, "frames": frames}, _validate=False)


PLOTLY_JS = Path(__file__).parents[1] / "assets" / "plotly-basic-4.1.1.min.js.gz"
"""plotly.js's basic partial bundle, gzip-compressed (see `assets/README.md`): one copy per exported page."""

PAGE = """<!doctype html>
<html lang="LANG">
<head>
    <meta charset="utf-8" />
    <title>StepLab · TITLE</title>
</head>
<body>
<p style="font-family:sans-serif">SUMMARY</p>
<div id="steplab-animation" style="width:100%"></div>
<noscript>NOSCRIPT</noscript>
<script type="application/octet-stream" id="steplab-plotly-gz">LIBRARY</script>
<script type="application/json" id="steplab-figure">FIGURE</script>
<script type="application/json" id="steplab-frames">FRAMES</script>
<script>
(async () => {
  const packed = atob(document.getElementById("steplab-plotly-gz").textContent.trim());
  const bytes = Uint8Array.from(packed, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const library = document.createElement("script");
  library.textContent = await new Response(stream).text();
  document.head.appendChild(library);
  const figure = JSON.parse(document.getElementById("steplab-figure").textContent);
  const frames = JSON.parse(document.getElementById("steplab-frames").textContent);
  await Plotly.newPlot("steplab-animation", figure.data, figure.layout, figure.config);
  await Plotly.addFrames("steplab-animation", frames);
  document.body.dataset.steplabReady = "true";
})();
</script>
</body>
</html>
"""


def _json(value: object) -> str:
    """JSON that cannot end the `<script>` it sits in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def export_html(timeline: Timeline, lang: str) -> str:
    """A complete HTML page that works offline: plotly.js once (gzip-compressed, unpacked by the browser) and
    the animation as data: the first frame's figure, then every frame's shapes and words."""
    spec = animation_figure(timeline, lang).to_plotly_json()
    frames = spec.pop("frames")
    figure = {**spec, "config": chart_config("animation")}
    values = {
        "LANG": lang, "TITLE": html.escape(t(lang, "page.animation.title")),
        "SUMMARY": html.escape(totals(timeline).get(lang)), "NOSCRIPT": html.escape(t(lang, "anim.export.noscript")),
        "LIBRARY": base64.b64encode(PLOTLY_JS.read_bytes()).decode("ascii"),
        "FIGURE": _json(figure), "FRAMES": _json(frames),
    }
    return re.sub("|".join(values), lambda match: values[match.group(0)], PAGE)
