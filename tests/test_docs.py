"""What the README shows is what the repository runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readmes_nginx_site_is_deploy_nginx_conf():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```nginx\n(.*?)\n\s*```", readme, re.S)
    assert block, "README.md has no nginx block"
    shown = "\n".join(line[2:] if line.startswith("  ") else line for line in block.group(1).splitlines())
    assert shown.strip() == (ROOT / "deploy" / "nginx.conf").read_text(encoding="utf-8").strip()


def test_the_readmes_commands_use_the_constraints():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for line in readme.splitlines() if line.startswith("pip install")]
    assert len(commands) == 2 and all(line.count("-c constraints.txt") == 2 for line in commands), commands
    assert (ROOT / "constraints.txt").is_file()
