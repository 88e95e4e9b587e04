"""README.md's Deployments block against a real Prefect server and process worker.

The block is taken from README.md and run as written, by bash, from the checkout: server, work
pool, `prefect deploy --all` of prefect.yaml, a process worker, and a `--watch`ed run of
`ingest/local-folder`; the only change is a free port instead of 4200. The walkthrough's self-play
games, which the block copies into `<data>/inbox`, are stood in for by 4 random games. Costs ~30-60 s
(server start, deploy, a worker run): the price of checking that what users type really runs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gocore.play.match import play_game
from gocore.rules import sgf, sgf_read
from gocore.search.agents import RandomAgent
from tests.test_readme import readme_blocks

REPO = Path(__file__).resolve().parents[2]
README_PORT = "127.0.0.1:4200"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def readme_deployment_script(port: int) -> str:
    """The README's Deployments block (marked ``# needs: server``), on `port` instead of 4200."""
    blocks = [block for block in readme_blocks() if block.heading.startswith("Deployments")
              and (block.needs or "").startswith("server")]
    assert len(blocks) == 1, "README.md's Deployments section must have one '# needs: server' block"
    script = blocks[0].script()
    assert README_PORT in script and "prefect server start" in script
    return script.replace(README_PORT, f"127.0.0.1:{port}")


def stop_group(process: subprocess.Popen, seconds: float = 30) -> None:
    """SIGTERM every process of `process`'s group (server, worker and what they started), then SIGKILL
    stragglers; returns as soon as none of them runs (zombies do not count: the leader is reaped here,
    the others by whoever adopted them)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and running_in_group(process):
            time.sleep(0.2)
        if not running_in_group(process):
            break


def running_in_group(process: subprocess.Popen) -> bool:
    """Whether any process of `process`'s group is still running (not a zombie)."""
    import psutil

    process.poll()  # reap the leader if it has exited
    for candidate in psutil.process_iter(["status"]):
        try:
            if os.getpgid(candidate.pid) == process.pid and candidate.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (OSError, psutil.Error):
            continue
    return False


def write_games(folder: Path, count: int) -> int:
    """`count` random 9x9 games as SGF in `folder`; returns their total number of moves."""
    folder.mkdir(parents=True)
    moves = 0
    for i in range(count):
        game = play_game(RandomAgent(seed=i), RandomAgent(seed=100 + i), size=9, max_moves=60)
        record = sgf.GameRecord(size=9, komi=7.5, moves=game.moves, winner=game.winner, result=game.result)
        (folder / f"g{i}.sgf").write_text(sgf.write(record))
        moves += len(sgf_read.read_games((folder / f"g{i}.sgf").read_text())[0].moves)
    return moves


def test_the_readme_deployments_block_runs_local_folder_on_a_process_worker(tmp_path: Path) -> None:
    data = tmp_path / "data"
    moves = write_games(data / "selfplay" / "gen=0" / "games", 4)  # what the walkthrough's self-play left
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_API_PORT=str(port),
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", GOZERO_DATA=str(data),
               PYTHONPATH=str(REPO),  # this checkout's code, even if the venv's editable install is another's
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")  # the venv, as if activated
    script = readme_deployment_script(port)
    log = tmp_path / "script.log"
    with log.open("w") as out:
        shell = subprocess.Popen(["bash", "-c", "set -eo pipefail\n" + script], cwd=REPO, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        code = shell.wait(timeout=420)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop_group(shell)
    assert code == 0, f"README Deployments block {'timed out' if code is None else f'exited {code}'}:\n" \
                      f"--- script\n{script}--- output\n{log.read_text()[-6000:]}"

    from storage import datasets

    manifest = datasets.read_manifest(data / "datasets" / "inbox")
    assert manifest["sources"] == ["data:inbox"]
    assert manifest["games_accepted"] == 4 and manifest["rows"] == moves * 8


RETRY_SETTINGS = {"loop": "zero-retry", "size": 5, "generations": 1, "games": 8, "sims": 8, "gate": "off",
                  "min_window": 100, "batch_size": 16, "ladder_opponents": 0}
API = """
import asyncio, json, sys
from prefect.client.orchestration import get_client
from prefect.states import Scheduled

async def main(command, argument):
    async with get_client() as client:
        if command == "run":  # what `prefect deployment run` does, with our parameters
            deployment = await client.read_deployment_by_name("zero-loop/zero-9x9")
            run = await client.create_flow_run_from_deployment(deployment.id, parameters=json.loads(argument))
            print(run.id)
        elif command == "retry":  # what the UI's Retry button sends
            await client.set_flow_run_state(argument, Scheduled(name="AwaitingRetry"), force=True)
        else:
            run = await client.read_flow_run(argument)
            print(run.state.type.value, run.run_count)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_a_zero_loop_run_killed_mid_generation_and_retried_as_the_ui_does_resumes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The zero-9x9 deployment on a real server and process worker: the worker and everything under it
    SIGKILLed once self-play has finished; the run retried through the API as the UI's Retry does; a
    new worker completes it without playing self-play again or registering a version twice."""
    import psutil

    from storage import loops, registry
    from storage import selfplay as selfplay_files

    data, port = tmp_path / "data", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_API_URL=f"http://127.0.0.1:{port}/api",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", GOZERO_DATA=str(data),
               PREFECT_LOGGING_LEVEL="WARNING", PYTHONPATH=str(REPO), PREFECT_WORKER_QUERY_SECONDS="2",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")

    def run(*command: str) -> str:
        return subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True, text=True,
                              timeout=180).stdout.strip()

    def start(*command: str, log: str) -> subprocess.Popen:
        with (tmp_path / log).open("a") as out:
            return subprocess.Popen(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def state(run_id: str) -> tuple[str, int]:
        kind, count = run(sys.executable, "-c", API, "state", run_id).split()
        return kind, int(count)

    def wait_for(done, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}:\n" + "\n".join(
                f"--- {p.name}\n{p.read_text()[-3000:]}" for p in tmp_path.glob("*.log"))
            time.sleep(1)

    server = start("prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port), log="server.log")
    workers: list[subprocess.Popen] = []
    try:
        run("prefect", "server", "status", "--wait", "--timeout", "120")
        run("prefect", "work-pool", "create", "gozero-local", "--type", "process")
        run("prefect", "--no-prompt", "deploy", "--name", "zero-9x9")
        workers.append(start("prefect", "worker", "start", "--pool", "gozero-local", log="worker1.log"))
        run_id = run(sys.executable, "-c", API, "run", json.dumps({"settings": RETRY_SETTINGS, "workers": 2,
                                                                   "device": "cpu"}))
        wait_for(lambda: loops.read_step(data, "zero-retry", 1, "selfplay") is not None, 240, "self-play")
        for process in [psutil.Process(workers[0].pid), *psutil.Process(workers[0].pid).children(recursive=True)]:
            process.kill()  # the worker, the flow run it started and the run's pool: a crashed machine
        assert state(run_id)[0] == "RUNNING"  # nobody told the server: the run looks alive, as after a crash
        played = {p: p.stat().st_mtime_ns for p in (data / "loops").rglob("*") if p.is_file()
                  and "selfplay" in p.parts}
        assert played

        run(sys.executable, "-c", API, "retry", run_id)
        workers.append(start("prefect", "worker", "start", "--pool", "gozero-local", log="worker2.log"))
        wait_for(lambda: state(run_id)[0] in ("COMPLETED", "FAILED", "CRASHED"), 300, "the retried run")
        assert state(run_id) == ("COMPLETED", 2)
    finally:
        for process in (*workers, server):
            stop_group(process)

    assert {p: p.stat().st_mtime_ns for p in played} == played  # self-play was not played again
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    versions = registry.list_versions("gozero-5x5", data)
    assert sorted(v.version for v in versions) == [1, 2]  # generation 0 and 1, once each
    assert [v.version for v in versions if "champion" in v.aliases] == [2]
    ids = [game for sidecar in selfplay_files.finished_sidecars(data, 1, "zero-retry") for game in sidecar["game_ids"]]
    assert len(ids) == len(set(ids)) == 8
