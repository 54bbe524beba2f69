#!/usr/bin/env python3
"""Refresh the README's example outputs: every `<!-- run: ARGS -->` line is followed by a ```text
block that this script replaces with the real output of `./kashu ARGS` (run from the repo root).

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


def run(args: str) -> str:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "LANG": "C.UTF-8"}
    env.pop("KASHU_DB", None)
    env["KASHU_DB"] = str(ROOT / ".venv" / "readme-examples.db")  # an empty book: reference prices
    p = subprocess.run([str(ROOT / "kashu"), *shlex.split(args)], capture_output=True, text=True, env=env, cwd=ROOT)
    return (p.stdout + p.stderr).rstrip() + "\n"


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    new = PATTERN.sub(lambda m: m.group(1) + run(m.group("args")) + m.group(4), text)
    if "--check" in sys.argv:
        return 0 if new == text else 1
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
