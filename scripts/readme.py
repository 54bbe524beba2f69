#!/usr/bin/env python3
"""Refresh the example outputs in README.md and docs/*.md, so they stay real:
- a `<!-- run: ARGS -->` line followed by a ```text block: the block becomes the output of `./kashu ARGS`;
- a code block whose only command is its first line `$ kashu ARGS`: the lines after it become the output.
Outputs use an empty price book (reference prices), NO_COLOR and 100 columns.

    .venv/bin/python scripts/readme.py          # rewrite README.md in place
    .venv/bin/python scripts/readme.py --check  # exit 1 if any block is stale
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATTERN = re.compile(r"(<!-- run: (?P<args>.*?) -->\n```text\n)(?P<body>.*?)(```)", re.S)
SHELL = re.compile(r"(```\w*\n\$ kashu (?P<args>[^\n]+)\n)(?P<body>(?:(?!```)(?!\$ ).*\n)*?)(```)")


def run(args: str) -> str:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "LANG": "C.UTF-8"}
    env.pop("KASHU_DB", None)
    env["KASHU_DB"] = str(ROOT / ".venv" / "readme-examples.db")  # an empty book: reference prices
    p = subprocess.run([str(ROOT / "kashu"), *shlex.split(args)], capture_output=True, text=True, env=env, cwd=ROOT)
    return (p.stdout + p.stderr).rstrip() + "\n"


def refresh(text: str) -> str:
    text = PATTERN.sub(lambda m: m.group(1) + run(m.group("args")) + m.group(4), text)
    return SHELL.sub(lambda m: m.group(1) + run(m.group("args")) + m.group(4), text)


def main() -> int:
    stale = 0
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        new = refresh(text)
        if new != text:
            stale += 1
            if "--check" not in sys.argv:
                path.write_text(new, encoding="utf-8")
    return 1 if stale and "--check" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
