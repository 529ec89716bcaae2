"""Drawing one frame of the accumulation animation: GPU lanes, the accumulation bucket, the optimizer.

A compact plotly figure with fixed ranges (nothing moves but what the frame changes): samples are small
squares in one lane per GPU (up to 8 lanes, more are summarised), each micro-batch's gradients stack in
the bucket with its "k / GA" counter, and an optimizer step flashes in vermillion.

Also the counters beside a frame and the words around it, as data and strings (the views only draw them).
"""

from __future__ import annotations

import plotly.graph_objects as go

from steplab.i18n import fmt_float, fmt_int, fmt_lr, t
from steplab.simulation.narration import narration
from steplab.simulation.timeline import MAX_LANES, Frame, Timeline
from steplab_ui.shell.layout import COLOURS, FIGURE_TEXT
from steplab_ui.shell.presenter import FIGURE_FONT

X_RANGE = (0.0, 100.0)
Y_RANGE = (0.0, 60.0)
MAX_SQUARES = 16  # samples drawn per lane; more are written as "+n"
MAX_SLOTS = 32  # bucket slots drawn one by one; a deeper bucket is drawn as a level
LANES = (2.0, 42.0, 10.0, 50.0)  # x0, x1, y0, y1 of the lane area
BUCKET = (50.0, 64.0, 10.0, 48.0)
OPTIMIZER = (70.0, 99.0, 24.0, 42.0)
FAINT = "rgba(128,128,128,0.45)"
PRESENTER_HEIGHT = 470
LESSON_PRESENTER_HEIGHT = 400  # a lesson's part has a title, the parts row and a slider above the figure


def _rect(x0: float, y0: float, x1: float, y1: float, **style: object) -> dict:
    return {"type": "rect", "xref": "x", "yref": "y", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "layer": "below",
            **style}


def _note(x: float, y: float, text: str, size: int, **style: object) -> dict:
    return {"x": x, "y": y, "xref": "x", "yref": "y", "text": text, "showarrow": False, "font": {"size": size},
            **style}


def _ink(notes: list[dict], colour: str) -> None:
    """Give every note without a colour of its own the given text colour (presenter mode's high contrast)."""
    for note in notes:
        font = note.setdefault("font", {})
        font.setdefault("color", colour)


def lane_rows(world_size: int) -> tuple[int, int]:
    """(lanes drawn one by one, lanes summarised in the last row)."""
    if world_size <= MAX_LANES:
        return world_size, 0
    return MAX_LANES - 1, world_size - (MAX_LANES - 1)


def _lanes(frame: Frame, timeline: Timeline, lang: str, scale: float) -> tuple[dict, list[dict], list[dict]]:
    """Sample squares (one scatter trace), micro-batch outlines and lane labels; repeated samples are crossed."""
    x0, x1, y0, y1 = LANES
    drawn, summarised = lane_rows(timeline.world_size)
    rows = drawn + (1 if summarised else 0)
    height = min(8.0, (y1 - y0) / rows)
    top = y1 - (y1 - y0 - height * rows) / 2
    shown = min(frame.samples, MAX_SQUARES)
    spacing = min(2.8, (x1 - x0 - 19) / max(min(timeline.batch_size, MAX_SQUARES), 1))
    xs: list[float] = []
    ys: list[float] = []
    symbols: list[str] = []
    shapes: list[dict] = []
    notes: list[dict] = []
    start = x0 + 12
    for row in range(rows):
        centre = top - height * (row + 0.5)
        label = t(lang, "anim.gpu", n=row) if row < drawn else t(lang, "anim.more_gpus", n=fmt_int(summarised))
        notes.append(_note(x0, centre, label, round(13 * scale), xanchor="left"))
        repeated = frame.duplicated[row] if row < drawn and row < len(frame.duplicated) else 0
        if row >= drawn:  # the summarised lanes: their repeats, if any, are counted in the epoch bar's note
            repeated = 0
        for i in range(shown):
            xs.append(start + spacing * (i + 0.5))
            ys.append(centre)
            symbols.append("square-x-open" if i >= shown - repeated else "square")
        right = start + spacing * shown
        more = f"+{fmt_int(frame.samples - MAX_SQUARES)}" if frame.samples > MAX_SQUARES else ""
        notes.append(_note(right + 1.2, centre, more, round(11 * scale), xanchor="left"))
        shapes.append(_rect(start - 0.6, centre - height * 0.38, right + 0.6, centre + height * 0.38,
                            line={"color": COLOURS["micro_batch"], "width": 2 * scale},
                            fillcolor="rgba(0,114,178,0.10)"))
    size = max(5.0, min(10.0, spacing * 3.2, height * 1.6)) * (0.7 if scale < 1 else scale)
    trace = {
        "type": "scatter", "mode": "markers", "x": xs, "y": ys, "hoverinfo": "skip", "showlegend": False,
        "marker": {"symbol": symbols, "size": size, "color": COLOURS["sample"],
                   "line": {"color": COLOURS["sample"], "width": 1.5}},
    }
    return trace, shapes, notes


def bucket_depth(timeline: Timeline) -> int:
    """Slots in the bucket: gradient_accumulation_steps, or more when carried micro-batches overfill it."""
    return max(timeline.accumulation, max((f.fill for f in timeline.frames), default=0))


def _bucket(frame: Frame, timeline: Timeline, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The accumulation bucket: one block per micro-batch in it (the newest blue, carried ones outlined green).

    Every frame of a timeline draws the same list of shapes and notes (hidden when unused), so plotly's
    frame animation in the HTML export morphs each one into itself.
    """
    x0, x1, y0, y1 = BUCKET
    ga = timeline.accumulation
    depth = bucket_depth(timeline)
    flash = frame.is_step
    shapes = [_rect(x0, y0, x1, y1, line={"color": COLOURS["update"] if flash else COLOURS["accumulation"],
                                          "width": (5 if flash else 3) * scale})]
    notes = [
        _note((x0 + x1) / 2, y1 + 8.5, t(lang, "anim.bucket"), round(13 * scale)),
        _note((x0 + x1) / 2, y1 + 3.4, f"<b>{fmt_int(frame.fill)} / {fmt_int(ga)}</b>", round(22 * scale)),
    ]
    inner = (x0 + 0.8, x1 - 0.8)
    slot = (y1 - y0 - 1.0) / depth
    if depth <= MAX_SLOTS:
        for i in range(depth):
            bottom = y0 + 0.5 + slot * i
            shapes.append(_rect(
                inner[0], bottom + slot * 0.08, inner[1], bottom + slot * 0.92, visible=i < frame.fill,
                fillcolor=COLOURS["micro_batch"] if i == frame.fill - 1 else COLOURS["accumulation"],
                line={"color": COLOURS["epoch"] if i < frame.carried else "rgba(0,0,0,0)", "width": 2.5 * scale},
            ))
    else:
        level = y0 + 0.5 + slot * frame.fill
        shapes.append(_rect(inner[0], y0 + 0.5, inner[1], level, fillcolor=COLOURS["accumulation"],
                            line={"width": 0}, visible=frame.fill > 0))
        shapes.append(_rect(inner[0], level - max(slot, 0.6), inner[1], level, fillcolor=COLOURS["micro_batch"],
                            line={"width": 0}, visible=frame.fill > 0))
        shapes.append(_rect(inner[0], y0 + 0.5, inner[1], y0 + 0.5 + slot * max(frame.carried, 1),
                            line={"color": COLOURS["epoch"], "width": 2.5 * scale}, visible=frame.carried > 0))
    if depth > ga:  # more micro-batches than gradient_accumulation_steps: mark where GA ends
        mark = y0 + 0.5 + slot * ga
        shapes.append({"type": "line", "x0": x0 - 1, "x1": x1 + 1, "y0": mark, "y1": mark,
                       "line": {"color": COLOURS["update"], "width": 2 * scale, "dash": "dash"}})
        notes.append(_note(x1 + 1.2, mark, f"GA = {fmt_int(ga)}", round(11 * scale), xanchor="left"))
    carried = t(lang, "anim.carried", n=frame.carried, epoch=frame.epoch) if frame.carried else ""
    notes.append(_note((x0 + x1) / 2, y0 - 3.2, carried, round(11 * scale),
                       font={"size": round(11 * scale), "color": FIGURE_TEXT["epoch"][0]}))
    notes.append({"x": x0 - 0.5, "y": (y0 + y1) / 2, "ax": LANES[1] + 0.5, "ay": (y0 + y1) / 2, "xref": "x",
                  "yref": "y", "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 3,
                  "arrowwidth": 2 * scale, "arrowcolor": COLOURS["micro_batch"]})
    return shapes, notes


def _optimizer(frame: Frame, timeline: Timeline, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The optimizer: a vermillion flash with "optimizer.step() #k" when this micro-batch closes a step."""
    x0, x1, y0, y1 = OPTIMIZER
    centre = (x0 + x1) / 2
    lr = fmt_lr(frame.lr) if frame.lr is not None else "—"
    if frame.is_step:
        box = _rect(x0, y0, x1, y1, fillcolor=COLOURS["update"],
                    line={"color": COLOURS["update"], "width": 3 * scale, "dash": "solid"})
        label = f"<b>optimizer.step()<br>#{fmt_int(frame.step)}</b>"
        text_style = {"color": "#000000"}  # 5.0:1 on the vermillion (white would be 3.9:1)
        opacity = 1.0
    else:
        box = _rect(x0, y0, x1, y1, fillcolor="rgba(0,0,0,0)", line={"color": FAINT, "width": 2 * scale, "dash": "dot"})
        label = (t(lang, "anim.waiting", k=fmt_int(frame.updates + 1)) if frame.lr is not None
                 else t(lang, "anim.no_more_updates"))
        text_style = {"color": FIGURE_TEXT["muted"][0]}  # explicit, or a frame keeps the previous frame's colour
        opacity = 1.0
    notes = [
        _note(centre, (y0 + y1) / 2 + 2.5, label, round(13 * scale), opacity=opacity,
              font={"size": round(13 * scale), **text_style}),
        _note(centre, (y0 + y1) / 2 - 4, f"lr = {lr}", round(12 * scale), opacity=opacity,
              font={"size": round(12 * scale), **text_style}),
        _note(centre, y1 + 6.5, t(lang, "anim.optimizer"), round(13 * scale)),
        _note(centre, y0 - 5, t(lang, "anim.updates_done", k=fmt_int(frame.updates),
                                total=fmt_int(timeline.total_steps)), round(17 * scale)),
        _note(centre, y0 - 10.5, t(lang, "anim.samples_seen", n=fmt_int(frame.samples_seen)), round(13 * scale)),
    ]
    return [box], notes


def _epoch_bar(frame: Frame, timeline: Timeline, lang: str, scale: float) -> tuple[list[dict], list[dict]]:
    """The epoch's progress: fetched micro-batches in green, never-fetched ones dotted."""
    length = max(timeline.plan.micro_batches_per_epoch, 1)
    fetched = timeline.plan.fetched_per_epoch
    x0, x1, y0, y1 = 2.0, 98.0, 2.2, 4.6
    span = x1 - x0
    shapes = [
        _rect(x0, y0, x1, y1, line={"color": FAINT, "width": 1}),
        _rect(x0, y0, x0 + span * frame.micro_batch / length, y1, fillcolor=COLOURS["epoch"], line={"width": 0}),
    ]
    if fetched < length:
        shapes.append(_rect(x0 + span * fetched / length, y0, x1, y1, fillcolor="rgba(128,128,128,0.25)",
                            line={"color": COLOURS["update"], "width": 1, "dash": "dot"}))
    text = t(lang, "anim.epoch_bar", epoch=frame.epoch + 1, m=fmt_int(frame.micro_batch), length=fmt_int(length),
             progress=fmt_float(frame.trainer_epoch, 3))
    notes = [_note(x0, y1 + 2.4, text, round(13 * scale), xanchor="left")]
    loss = []
    if frame.dropped:
        loss.append(t(lang, "anim.dropped", n=fmt_int(frame.dropped), count=frame.dropped,
                      reason="limit_train_batches" if timeline.plan.epoch.limited_from is not None
                      else "dataloader_drop_last"))
    if frame.skipped:
        loss.append(t(lang, "anim.unfetched", n=fmt_int(frame.skipped), count=frame.skipped))
    if sum(frame.duplicated):
        loss.append(t(lang, "anim.repeated", n=fmt_int(sum(frame.duplicated)),
                            count=sum(frame.duplicated)))
    notes.append(_note(x1, y1 + 2.4, " · ".join(loss), round(13 * scale), xanchor="right",
                       font={"size": round(13 * scale), "color": FIGURE_TEXT["update"][0]}))
    return shapes, notes


def frame_spec(timeline: Timeline, position: int, lang: str, *, presenter: bool = False,
               height: int | None = None, compact: bool = False, ink: str | None = None) -> dict:
    """The figure for window position `position` as a plain plotly dict (fixed ranges: frames line up).

    `presenter` enlarges type and lines for a projector; `compact` shrinks them for a half-width column;
    `ink` is an explicit text colour (else the theme's).
    """
    frame = timeline.frames[position]
    scale = 1.6 if presenter else 0.8 if compact else 1.0
    trace, shapes, notes = _lanes(frame, timeline, lang, scale)
    notes.append(_note(LANES[0], BUCKET[3] + 8.5, t(lang, "anim.lanes"), round(13 * scale), xanchor="left"))
    for part in (_bucket, _optimizer, _epoch_bar):
        more_shapes, more_notes = part(frame, timeline, lang, scale)
        shapes += more_shapes
        notes += more_notes
    if presenter:  # no word smaller than the projector's smallest
        for note in notes:
            font = note.setdefault("font", {})
            font["size"] = max(font.get("size", 0), FIGURE_FONT)
    if ink:
        _ink(notes, ink)
    layout = {
        "height": height or (PRESENTER_HEIGHT if presenter else 360), "margin": {"l": 4, "r": 4, "t": 4, "b": 4},
        "xaxis": {"range": list(X_RANGE), "visible": False, "fixedrange": True},
        "yaxis": {"range": list(Y_RANGE), "visible": False, "fixedrange": True},
        "shapes": shapes, "annotations": notes, "showlegend": False, "dragmode": False,
    }
    return {"data": [trace], "layout": layout}


def frame_figure(timeline: Timeline, position: int, lang: str, **options: object) -> go.Figure:
    """`frame_spec` as a figure, built without plotly's validation (it costs more than a tick's budget;
    the tests validate every kind of frame instead)."""
    return go.Figure(frame_spec(timeline, position, lang, **options), _validate=False)


def player_figure(timeline: Timeline, position: int, lang: str, presenter: bool, height: int | None = None) -> go.Figure:
    """The page's animated figure; presenter mode writes its words in full contrast (near-black; the dark-theme
    CSS turns them white, see `layout.FIGURE_TEXT`)."""
    ink = FIGURE_TEXT["ink"][0] if presenter else None
    return frame_figure(timeline, position, lang, presenter=presenter, ink=ink, height=height)


def counters(frame: Frame, timeline: Timeline, lang: str) -> list[tuple[str, str]]:
    """(label, value) of the counters beside the figure; the same numbers the figure draws."""
    return [
        (t(lang, "anim.metric.micro_batch"), f"{fmt_int(frame.index + 1)} / {fmt_int(timeline.total_frames)}"),
        (t(lang, "anim.metric.bucket"), f"{fmt_int(frame.fill)} / {fmt_int(timeline.accumulation)}"),
        (t(lang, "anim.metric.updates"), f"{fmt_int(frame.updates)} / {fmt_int(timeline.total_steps)}"),
        (t(lang, "anim.metric.samples"), fmt_int(frame.samples_seen)),
        (t(lang, "anim.metric.epoch"), fmt_float(frame.trainer_epoch, 3)),
        (t(lang, "anim.metric.lr"), fmt_lr(frame.lr) if frame.lr is not None else "—"),
    ]


COUNTERS = ("micro_batch", "bucket", "updates", "samples", "epoch", "lr")  # `counters`, in order


def counter_rows(frame: Frame, timeline: Timeline, lang: str, per_row: int) -> list[list[tuple[str, str, str]]]:
    """The counters as (label, value, help), `per_row` a row (a narrow screen stacks them in reading order)."""
    helps = [t(lang, f"anim.metric.{name}_help") for name in COUNTERS]
    cards = [(*card, help_text) for card, help_text in zip(counters(frame, timeline, lang), helps, strict=True)]
    return [cards[row:row + per_row] for row in range(0, len(cards), per_row)]


# --- the player's words and buttons ------------------------------------------------------------------------


def frame_texts(timeline: Timeline, position: int, lang: str) -> tuple[str, str | None, str]:
    """The words around window position `position`: the caption under the scrubber, what was skipped just
    before it (None after no jump), and the narration (also the figure's text alternative)."""
    frame, gap = timeline.frames[position], timeline.gaps[position]
    caption = t(lang, "anim.position", position=position + 1, count=len(timeline.frames),
                index=fmt_int(frame.index + 1), total=fmt_int(timeline.total_frames))
    skipped = None if gap is None else t(lang, "anim.gap", micro_batches=fmt_int(gap.micro_batches),
                                         updates=fmt_int(gap.updates))
    return caption, skipped, narration(frame, timeline).get(lang)
