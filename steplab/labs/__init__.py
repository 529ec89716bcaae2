"""The torch labs (issue 7): small real computations behind the chapter's claims.

One module per lab; each imports torch itself, so importing `steplab` or this package never does:

- `accumulation` (A): accumulation equals one big batch, and the classic mistakes;
- `token_weighting` (B): with variable-length sequences it does not, unless the loss is normalised by the
  label tokens of the whole accumulation group;
- `overfitting` (C): more epochs can make validation loss worse while training loss keeps falling;
- `memory` (D): the chapter's V100 measurements, a stated memory model, and a CPU measurement of activations.

Every lab returns plain frozen dataclasses of Python numbers, so a page can cache them.
"""

# Gradients computed two mathematically equal ways in float64 differ by rounding only: ~1e-17 here.
# Anything above this is a real difference, not rounding.
TOLERANCE = 1e-12
