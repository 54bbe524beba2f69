"""The CLI as a user runs it: exit codes, JSON, Chinese output, one-line errors."""

import json
import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "LANG": "C.UTF-8", "NO_COLOR": "1", "COLUMNS": "120"}


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kashu", *args], capture_output=True, text=True,
                          env=env or ENV, timeout=120)


def test_plan_json_article_example():
    p = run("plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--mfu", "0.45", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["total_flops"] == pytest.approx(4.2e22)
    assert 36 <= d["gpus_min"] <= 40


def test_plan_terminal_english_and_chinese():
    en = run("plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30")
    assert en.returncode == 0 and "Recommended cluster" in en.stdout
    zh = run("plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30", "--lang", "zh")
    assert zh.returncode == 0 and "建议集群规模" in zh.stdout
    loc = run("plan", "--params", "7B", "--tokens", "1T", "--gpu", "H800", "--days", "30",
              env={**ENV, "LANG": "zh_CN.UTF-8"})
    assert "建议集群规模" in loc.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--params", "7X", "--tokens", "1T", "--days", "30"], "7X"),
        (["--params", "-5B", "--tokens", "1T", "--days", "30"], "-5B"),
        (["--params", "7B", "--tokens", "1T", "--gpu", "NOPE-9000", "--days", "30"], "NOPE-9000"),
        (["--params", "7B", "--tokens", "1T", "--days", "0"], "--days"),
        (["--params", "nan", "--tokens", "1T", "--days", "30"], "nan"),
        (["--params", "7B", "--tokens", "1T", "--days", "30", "--gpus", "64"], "contradict"),
        (["--params", "1e30", "--tokens", "1T", "--days", "30"], "1e30"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle):
    p = run("plan", *args)
    assert p.returncode == 2
    assert "Traceback" not in p.stdout + p.stderr
    err = p.stderr.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_bad_input_chinese_message():
    p = run("plan", "--params", "7X", "--tokens", "1T", "--days", "30", "--lang", "zh")
    assert p.returncode == 2 and "无法识别" in p.stderr


def test_gpus_command():
    p = run("gpus", "--json")
    assert p.returncode == 0
    rows = json.loads(p.stdout)
    assert any(r["name"] == "H800-SXM" and r["bf16_tflops"] == 989 for r in rows)
    t = run("gpus")
    assert "H800-SXM" in t.stdout


@pytest.mark.parametrize("args", [["plan", "--nosuch"], ["plan", "--params", "7B", "--tokens", "1T", "--days", "3", "--mfu", "abc"],
                                  ["nosuchcommand"]])
def test_usage_errors_exit_2_without_traceback(args):
    p = run(*args)
    assert p.returncode == 2
    assert "Traceback" not in p.stdout + p.stderr


@pytest.mark.parametrize("cmd", [["gpus"], ["plan", "--params", "7B", "--tokens", "1T", "--days", "3"]])
def test_unknown_language_is_a_clear_error(cmd):
    p = run(*cmd, "--lang", "fr")
    assert p.returncode == 2 and "Traceback" not in p.stderr and "--lang 'fr'" in p.stderr
