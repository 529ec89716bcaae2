"""The shell every page stands in: the preamble, the menu, the layout and presenter view, the shared setup in the
URL, the browser's memory, a class seat and the learner's progress, the server's start-up."""
