"""`gozero serve` as a user runs it: real Prefect server, worker and MLflow UI processes on free ports.

One test starts `python -m flows.cli serve` on a temp data dir holding a tiny champion, waits for both
UIs, asks MLflow's REST API for the champion, checks a second serve on the same data dir is refused,
then sends SIGINT (Ctrl-C) and checks that no process it started is left.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import register_tiny_nets

REPO = Path(__file__).resolve().parents[2]
READY = "Ctrl-C stops everything"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_env(tmp_path: Path) -> dict[str, str]:
    """A user's shell with a fresh home: no Prefect, MLflow or gozero settings, this checkout's code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update(HOME=str(tmp_path / "home"), DO_NOT_TRACK="true", PYTHONPATH=str(REPO),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    return env


def serve_command(data: Path, prefect_port: int, mlflow_port: int) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "serve", "--data-dir", str(data),
            "--prefect-port", str(prefect_port), "--mlflow-port", str(mlflow_port)]


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, answer.read()


def is_running(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def in_groups(groups: set[int]) -> list[int]:
    """Running (non-zombie) processes whose process group is one of `groups`."""
    import psutil

    left = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) in groups and process.info["status"] != psutil.STATUS_ZOMBIE:
                left.append(process.pid)
        except (OSError, psutil.Error):
            continue
    return left


def wait_for_line(serve: subprocess.Popen, log: Path, line: str, seconds: float = 300) -> None:
    """Wait until serve's output holds `line` (the URLs took 100-160 s with the 2 cores shared by
    a load average of 6-14); fail with its output if it exits first."""
    deadline = time.monotonic() + seconds
    while line not in log.read_text():
        assert serve.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.5)


def test_serve_answers_on_both_uis_refuses_a_second_serve_and_ctrl_c_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import psutil

    data = tmp_path / "data"
    monkeypatch.delenv("MLFLOW_TRACKING_URI")  # the data dir's own store, as serve uses it
    register_tiny_nets(data, 1, size=5)
    prefect_port, mlflow_port = free_port(), free_port()
    env, log = serve_env(tmp_path), tmp_path / "serve.log"
    with log.open("w") as out:
        serve = subprocess.Popen(serve_command(data, prefect_port, mlflow_port), cwd=tmp_path, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    started: list[psutil.Process] = []
    second: subprocess.Popen | None = None
    try:
        wait_for_line(serve, log, "starting the Prefect server")  # serve holds the data dir's lock
        second = subprocess.Popen(serve_command(data, free_port(), free_port()), cwd=tmp_path, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_line(serve, log, READY)
        text = log.read_text()
        assert f"Prefect UI  http://127.0.0.1:{prefect_port}" in text
        assert f"export PREFECT_API_URL=http://127.0.0.1:{prefect_port}/api" in text
        assert f"export MLFLOW_TRACKING_URI=http://127.0.0.1:{mlflow_port}" in text

        assert get(f"http://127.0.0.1:{prefect_port}/")[0] == 200
        assert get(f"http://127.0.0.1:{prefect_port}/api/health")[0] == 200
        assert get(f"http://127.0.0.1:{mlflow_port}/")[0] == 200
        status, body = get(f"http://127.0.0.1:{mlflow_port}/api/2.0/mlflow/registered-models/alias"
                           "?name=gozero-5x5&alias=champion")
        assert status == 200 and json.loads(body)["model_version"]["version"] == "1"

        second_out, second_err = second.communicate(timeout=120)
        assert second.returncode == 1 and second_out == ""
        assert "already running" in second_err and f"pid {serve.pid}" in second_err
        assert f"Prefect UI http://127.0.0.1:{prefect_port}" in second_err

        started = psutil.Process(serve.pid).children(recursive=True)
        commands = [" ".join(process.cmdline()) for process in started]
        for what in ("prefect server start", "prefect worker start", "mlflow server"):
            assert any(what in command for command in commands), commands
        groups = {os.getpgid(process.pid) for process in started}
        assert serve.pid not in groups  # each child leads its own group: Ctrl-C reaches only serve

        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=90) == 0, log.read_text()[-3000:]
        assert "nothing it started is left running" in log.read_text().splitlines()[-1]
        assert [p.pid for p in started if is_running(p.pid)] == [] and in_groups(groups) == []
    finally:
        if second is not None and second.poll() is None:
            second.kill()
        for process in [*started, psutil.Process(serve.pid)] if serve.poll() is None else started:
            try:
                process.kill()
            except psutil.Error:
                pass


def test_a_busy_port_is_named_before_anything_starts_and_a_dead_holders_lock_does_not_block(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    lock = data / "serve" / "serve.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")  # left by a serve that was SIGKILLed: its flock died with it
    lock.with_name("serve.lock.holder").write_text(json.dumps({"pid": 999999999, "host": "x", "since": 0}))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(serve_command(data, port, free_port()), cwd=tmp_path, env=serve_env(tmp_path),
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"port {port}" in lines[0] and "already running" not in lines[0], done.stderr
    assert done.stdout == ""
    assert not (data / "prefect").exists() and not list((data / "serve").glob("*.log"))
