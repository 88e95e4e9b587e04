"""prefect.yaml against a real Prefect server and process worker: deploy, run, dataset on disk.

The one test here costs ~30-60 s (server start, deploy, a worker run), the price of checking that
the deployments users create with `prefect deploy --all` really run.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gocore.play.match import play_game
from gocore.rules import sgf, sgf_read
from gocore.search.agents import RandomAgent

REPO = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prefect(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    done = subprocess.run([PREFECT, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"prefect {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def wait_healthy(url: str, server: subprocess.Popen, seconds: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "prefect server exited"
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail("prefect server did not become healthy")


@pytest.fixture
def server_env(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    port = free_port()
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_API_URL=f"http://127.0.0.1:{port}/api",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", GOZERO_HOME=str(REPO),
               GOZERO_DATA=str(tmp_path / "data"), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    server = subprocess.Popen([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(env["PREFECT_API_URL"], server)
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_local_folder_deployment_runs_on_a_process_worker(server_env, tmp_path):
    inbox = Path(server_env["GOZERO_DATA"]) / "inbox"
    inbox.mkdir(parents=True)
    for i in range(4):
        game = play_game(RandomAgent(seed=i), RandomAgent(seed=100 + i), size=9, max_moves=60)
        record = sgf.GameRecord(size=9, komi=7.5, moves=game.moves, winner=game.winner, result=game.result)
        (inbox / f"g{i}.sgf").write_text(sgf.write(record))
    moves = sum(len(sgf_read.read_games((inbox / f"g{i}.sgf").read_text())[0].moves) for i in range(4))

    prefect(server_env, "work-pool", "create", "gozero-local", "--type", "process")
    prefect(server_env, "--no-prompt", "deploy", "--all")
    assert "ingest/local-folder" in prefect(server_env, "deployment", "ls")
    prefect(server_env, "deployment", "run", "ingest/local-folder")
    prefect(server_env, "worker", "start", "--pool", "gozero-local", "--run-once", timeout=300)

    from storage import datasets

    dataset = Path(server_env["GOZERO_DATA"]) / "datasets" / "inbox"
    manifest = datasets.read_manifest(dataset)
    assert manifest["games_accepted"] == 4 and manifest["rows"] == moves * 8
