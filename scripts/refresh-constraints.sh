#!/usr/bin/env bash
# Move the pinned versions on purpose: resolve the newest releases that pyproject.toml's ranges allow in a
# fresh virtual environment, run the whole suite there, and rewrite constraints.txt only when it passes.
# Then review `git diff constraints.txt` and commit it with the test summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
pip="$work/venv/bin/pip"
"$pip" install --quiet torch==2.13.0  # the CPU build where one lies on disk; see README.md on PyTorch
"$pip" install --quiet -e ".[test]"
"$work/venv/bin/python" -m pytest -q -n auto --dist worksteal
{
  sed -n '/^#/p' constraints.txt  # keep the explanation at the top
  "$pip" freeze --exclude-editable | sed -E 's/^(torch==[^+]+)\+.*/\1/'  # any build of that torch release
} > "$work/constraints.txt"
mv "$work/constraints.txt" constraints.txt
git --no-pager diff --stat constraints.txt
