"""The `kashu` command line (Typer + Rich). Each command lives in its own module and registers on `app`.

Errors a user can fix (KashuError) print one line and exit 2; no tracebacks.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ..errors import KashuError
from ..i18n import detect_lang
from ..serial import dumps

app = typer.Typer(
    name="kashu",
    help="kashu (卡数): how many GPUs to rent to train an LLM — cards, layout, network, storage, days, cost, risk.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def emit_json(obj: Any) -> None:
    """Print JSON with stable keys (UTF-8, not escaped)."""
    sys.stdout.write(dumps(obj) + "\n")


def fail(err: KashuError, lang: str | None = None) -> None:
    lang = detect_lang(lang if lang in ("en", "zh") else None)
    sys.stderr.write(f"kashu: error: {err.text(lang)}\n")
    raise SystemExit(2)


LangOpt = typer.Option(None, "--lang", help="Output language: en or zh (default: from a zh_* locale, else en).")

# register commands (each module adds itself to `app`)
from . import (  # noqa: E402,F401
    bench_cmd,
    compare_cmd,
    gpus_cmd,
    layout_cmd,
    plan_cmd,
    quotes_cmd,
    report_cmd,
    serve_cmd,
    step_cmd,
    validate_cmd,
)


def _argv_lang(argv: list[str]) -> str | None:
    """The --lang value from the command line, so an error before the command runs speaks it too."""
    for i, a in enumerate(argv):
        if a == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--lang="):
            return a.split("=", 1)[1]
    return None


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # standalone: click/typer print their own usage errors (exit 2); a KashuError comes through to us
        app(args=args, prog_name="kashu")
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    except KashuError as e:
        fail(e, _argv_lang(args))


if __name__ == "__main__":
    main()
