"""The torch labs page's views, one module per lab of `steplab.labs`: a lab's result in, figures, tables, cards and
sentences out (`accumulation` lab A, `token_weighting` lab B, `overfitting` lab C, `memory` lab D); `parts` holds
what every lab draws with.

Each view's builders take plain data (a lab's result, the language) and return a plotly figure, a pandas frame, a
`parts.Card`, a `parts.Notice` or a string, without Streamlit; only its cached lab run touches Streamlit. The
numbers come from the engine (`steplab.labs.readings`, `steplab.labs.chapter_memory`, the results themselves) and
are written by `steplab.i18n`'s formatters, the sentences come from the catalogue. The torch labs' modules are
imported inside functions only (importing a view never imports torch): the builders that read a lab's constants
run after that lab, when torch is loaded already.
"""
