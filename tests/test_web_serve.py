"""`kashu serve` as a user runs it: a subprocess on a free loopback port."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from kashu.cli.serve_cmd import is_loopback


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_is_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")


def test_serve_subprocess(tmp_path):
    port = _free_port()
    env = {**os.environ, "KASHU_DB": str(tmp_path / "w.db")}
    p = subprocess.Popen([sys.executable, "-m", "kashu", "serve", "--port", str(port)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        req = urllib.request.Request(base + "/api/plan", data=json.dumps(
            {"params": "7B", "tokens": "1T", "gpu": "H800", "days": 30, "mfu": 0.45}).encode(),
            headers={"Content-Type": "application/json"})
        d = json.loads(urllib.request.urlopen(req, timeout=30).read())
        assert abs(d["total_flops"] / 4.2e22 - 1) < 1e-9
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(10)


def test_serve_public_warns(tmp_path):
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-m", "kashu", "serve", "--host", "0.0.0.0", "--port", str(port)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True,
                         env={**os.environ, "KASHU_TOKEN": ""})
    try:
        time.sleep(0.1)
        deadline = time.time() + 30
        err = ""
        while time.time() < deadline and "warning" not in err:
            line = p.stderr.readline()
            if not line:
                break
            err += line
        assert "warning" in err and "KASHU_TOKEN" in err
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(10)
