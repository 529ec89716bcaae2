"""Record the golden Trainer runs (`tests/data/golden/`) from real transformers releases: see
`tests/golden_recorder.py`. `python scripts/record-golden.py [PROFILE ...] [--check] [--only ID]`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from golden_recorder import main  # noqa: E402

raise SystemExit(main(sys.argv[1:]))
