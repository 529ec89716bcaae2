"""The pieces views are built from: the figures (charts, run charts, the schedule chart, animation frames), frozen
figures, the one playback machine and the animation's HTML export."""
