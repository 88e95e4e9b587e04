"""Child processes die with their parent (gocore/children.py): real processes, real SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def is_gone(pid: int, within: float) -> bool:
    """Whether process `pid` has ended (a zombie counts as ended) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def start_parent(code: str) -> tuple[subprocess.Popen, int]:
    """A Python process running `code`, which prints its child's pid; (the process, that pid)."""
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    return parent, int(parent.stdout.readline())


def test_a_gtp_engine_dies_with_its_sigkilled_parent_even_when_it_ignores_its_stdin():
    # `sleep` never reads stdin, like an engine deep in a move: only the parent-death signal ends it
    parent, engine = start_parent("import time\nfrom gocore.play.gtp_client import GtpClient\n"
                                  "client = GtpClient(['sleep', '600'])\nprint(client._process.pid, flush=True)\n"
                                  "time.sleep(600)\n")
    try:
        assert not is_gone(engine, 0.5)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert is_gone(engine, 5.0), "the engine outlived its SIGKILLed parent"
    finally:
        with_kill(engine)


def test_a_python_child_that_asks_dies_with_its_parent():
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'from gocore.children import die_with_parent; "
            "import time; die_with_parent(); time.sleep(600)'])\n"
            "print(child.pid, flush=True)\ntime.sleep(600)\n")
    parent, child = start_parent(code)
    try:
        time.sleep(2.0)  # the child has asked by now (it imports nothing heavy)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert is_gone(child, 5.0), "the child outlived its SIGKILLed parent"
    finally:
        with_kill(child)


def with_kill(pid: int) -> None:
    """SIGKILL `pid` if it still runs (a failed test leaves nothing behind)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
