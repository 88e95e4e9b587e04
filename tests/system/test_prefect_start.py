"""The temporary Prefect server a command starts for itself: under the data dir, and when it cannot
start, one line and a non-zero exit within seconds (it took 137 s and 840 lines of tracebacks with
an unwritable home: issue "Every CPU-second counted, every failure in one line")."""

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
SELFPLAY = ("selfplay", "--model", "uniform", "--games", "2", "--sims", "4", "--workers", "1", "--size", "5")


def gozero(*args: str, env: dict[str, str], timeout: float = 120) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds) of `gozero args` as a user runs it (no server configured)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def user_env(**changes: str) -> dict[str, str]:
    """This environment without the tests' Prefect, MLflow and data settings, with `changes`."""
    unset = ("PREFECT_API_URL", "PREFECT_HOME", "MLFLOW_TRACKING_URI", "GOZERO_DATA", "PREFECT_LOGGING_LEVEL",
             "XDG_DATA_HOME")
    return {**{k: v for k, v in os.environ.items() if k not in unset}, "PYTHONPATH": str(REPO), **changes}


@pytest.mark.parametrize("where", ["home", "data-dir"])
def test_an_unwritable_home_or_data_dir_is_one_line_within_seconds(where: str, tmp_path: Path):
    # /dev/null is a file: nothing can be created under it, even by root (CI runs as root)
    env = user_env(HOME="/dev/null") if where == "home" else user_env(HOME=str(tmp_path))
    extra = ("--data-dir", "/dev/null/gozero") if where == "data-dir" else ()
    code, out, err, seconds = gozero(*SELFPLAY, *extra, env=env)
    assert code != 0 and seconds < 15
    assert err.strip().splitlines() == [err.strip()] and "cannot write /dev/null/" in err, err[-3000:]
    assert "Traceback" not in out + err


def test_a_server_that_cannot_open_its_database_fails_with_its_cause(tmp_path: Path):
    env = user_env(HOME=str(tmp_path), PREFECT_API_DATABASE_CONNECTION_URL="sqlite+aiosqlite:////dev/null/p.db")
    code, out, err, seconds = gozero(*SELFPLAY, "--data-dir", str(tmp_path / "data"), env=env)
    assert code != 0 and seconds < 100  # not Prefect's 120-s timeout (49 s seen with the CLI's start-up at load 4-5)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "unable to open database file" in lines[0], err[-3000:]
    assert str(tmp_path / "data" / "prefect" / "server.log") in lines[0]
    assert "Traceback" not in out + err  # the server's tracebacks are in its log, not on the terminal
    assert "unable to open database file" in (tmp_path / "data" / "prefect" / "server.log").read_text()


def test_with_an_unwritable_home_a_data_dir_holds_everything_prefect_writes(tmp_path: Path):
    data = tmp_path / "data"
    code, out, err, _ = gozero(*SELFPLAY, "--data-dir", str(data), env=user_env(HOME="/dev/null"))
    assert code == 0, (out + err)[-3000:]
    assert (data / "prefect" / "prefect.db").exists() and (data / "prefect" / "server.log").exists()
    assert "Failed to create the Prefect home directory" not in out + err


def test_ctrl_c_while_the_server_starts_is_one_line(tmp_path: Path):
    process = subprocess.Popen([sys.executable, "-m", "flows.cli", *SELFPLAY, "--data-dir", str(tmp_path / "data")],
                               cwd=REPO, env=user_env(HOME=str(tmp_path)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not any("uvicorn" in _command_line(child) for child in _children(process.pid)):
        assert process.poll() is None and time.monotonic() < deadline, "no server started"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err.strip().splitlines() == ["interrupted: rerun the same command to resume"], err[-3000:]
    assert "Traceback" not in out


def _command_line(process: psutil.Process) -> str:
    """Its command line; "" once it has ended (a child listed a moment ago may be gone)."""
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return ""


def _children(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
