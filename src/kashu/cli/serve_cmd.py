"""`kashu serve`: the web planner on 127.0.0.1 (pages, charts, JSON API at /api/plan, docs at /docs)."""

from __future__ import annotations

import ipaddress
import os
import sys

import typer

from . import app


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", help="TCP port.", min=0, max=65535),
) -> None:
    """Run the web planner: open http://HOST:PORT/ in a browser. All assets are local; no internet needed."""
    import uvicorn

    from ..web.app import create_app

    public = not is_loopback(host)
    token = os.environ.get("KASHU_TOKEN")
    if public:
        sys.stderr.write(
            f"kashu: warning: listening on {host}, not a loopback address: anyone who can reach this machine can use it. "
            + ("Writes to the price book need the KASHU_TOKEN token.\n" if token else
               "Writes to the price book are refused until KASHU_TOKEN is set.\n"))
    sys.stderr.write(f"kashu: serving on http://{host if ':' not in host else '[' + host + ']'}:{port}/  (Ctrl-C to stop)\n")
    uvicorn.run(create_app(public=public, token=token), host=host, port=port, log_level="warning")
