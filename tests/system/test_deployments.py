"""docs/deployments.md's server block against a real Prefect server and process worker.

The block is taken from docs/deployments.md and run as written, by bash, from the checkout: server, work
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
from tests.system.test_readme import DOCS, sh_blocks

REPO = Path(__file__).resolve().parents[2]
DOCS_PORT = "127.0.0.1:4200"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def docs_deployment_script(port: int) -> str:
    """docs/deployments.md's block (marked ``# needs: server``), on `port` instead of 4200."""
    blocks = [block for block in sh_blocks(DOCS / "deployments.md") if (block.needs or "").startswith("server")]
    assert len(blocks) == 1, "docs/deployments.md must have one '# needs: server' block"
    script = blocks[0].script()
    assert DOCS_PORT in script and "prefect server start" in script
    return script.replace(DOCS_PORT, f"127.0.0.1:{port}")


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


def test_the_docs_deployments_block_runs_local_folder_on_a_process_worker(tmp_path: Path) -> None:
    data = tmp_path / "data"
    moves = write_games(data / "selfplay" / "gen=0" / "games", 4)  # what the walkthrough's self-play left
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_API_PORT=str(port),
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", GOZERO_DATA=str(data),
               PYTHONPATH=str(REPO),  # this checkout's code, even if the venv's editable install is another's
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}")  # the venv, as if activated
    script = docs_deployment_script(port)
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
    assert code == 0, f"docs/deployments.md block {'timed out' if code is None else f'exited {code}'}:\n" \
                      f"--- script\n{script}--- output\n{log.read_text()[-6000:]}"

    from storage import datasets

    manifest = datasets.read_manifest(data / "datasets" / "inbox")
    assert manifest["sources"] == ["data:inbox"]
    assert manifest["games_accepted"] == 4 and manifest["rows"] == moves * 8


class PrefectServer:
    """A real Prefect server on 127.0.0.1 in a temp home, shared by the tests below, and the processes
    (workers) they start against it; `env(data)` is the environment of a process for data dir `data`."""

    def __init__(self, home: Path) -> None:
        self.home, self.port = home, free_port()
        self.url = f"http://127.0.0.1:{self.port}/api"
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "GOZERO_", "MLFLOW_"))}
        base.update(PREFECT_HOME=str(home / "prefect"), PREFECT_API_URL=self.url, DO_NOT_TRACK="true",
                    PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_LOGGING_LEVEL="WARNING",
                    PYTHONPATH=str(REPO), PREFECT_WORKER_QUERY_SECONDS="2",
                    PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        self.base = base
        self.processes: list[subprocess.Popen] = []

    def env(self, data: Path | None = None) -> dict[str, str]:
        return self.base if data is None else {**self.base, "GOZERO_DATA": str(data)}

    def run(self, *command: str, data: Path | None = None) -> str:
        return subprocess.run(command, cwd=REPO, env=self.env(data), check=True, capture_output=True, text=True,
                              timeout=180).stdout.strip()

    def api(self, *arguments: str) -> str:
        return self.run(sys.executable, "-c", API, *arguments)

    def start(self, *command: str, log: Path, data: Path | None = None) -> subprocess.Popen:
        with log.open("a") as out:
            process = subprocess.Popen(command, cwd=REPO, env=self.env(data), stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        return process

    def state(self, run_id: str) -> tuple[str, int]:
        kind, count = self.api("state", run_id).split()
        return kind, int(count)

    def wait_for(self, done, seconds: float, what: str, logs: Path) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}:\n" + "\n".join(
                f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(logs.glob("*.log")))
            time.sleep(1)


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory):
    """One Prefect server for the module's deployment tests (a start costs 10-20 s), with every
    deployment applied (`flows.deploy.apply_deployments`: the gpu limit, the pool, `prefect deploy
    --all`); every process started on it is stopped at the end."""
    from flows.deploy import apply_deployments

    server = PrefectServer(tmp_path_factory.mktemp("prefect-server"))
    server.start("prefect", "server", "start", "--host", "127.0.0.1", "--port", str(server.port),
                           log=server.home / "server.log")
    try:
        server.run("prefect", "server", "status", "--wait", "--timeout", "120")
        apply_deployments(server.url)
        yield server
    finally:
        for started in reversed(server.processes):
            stop_group(started)


RETRY_SETTINGS = {"loop": "zero-retry", "size": 5, "generations": 1, "games": 8, "sims": 8, "gate": "off",
                  "min_window": 100, "batch_size": 16, "ladder_opponents": 0}
API = """
import asyncio, json, sys
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import DeploymentUpdate
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.states import Scheduled

async def main(command, *arguments):
    async with get_client() as client:
        if command == "run":  # what `prefect deployment run` does, with our parameters
            deployment = await client.read_deployment_by_name(arguments[0])
            run = await client.create_flow_run_from_deployment(deployment.id, parameters=json.loads(arguments[1]))
            print(run.id)
        elif command == "retry":  # what the UI's Retry button sends
            await client.set_flow_run_state(arguments[0], Scheduled(name="AwaitingRetry"), force=True)
        elif command == "state":
            run = await client.read_flow_run(arguments[0])
            print(run.state.type.value, run.run_count)
        elif command == "edit":  # the UI's Edit of a deployment: new default parameters
            deployment = await client.read_deployment_by_name(arguments[0])
            changed = {**deployment.parameters, **json.loads(arguments[1])}
            await client.update_deployment(deployment.id, DeploymentUpdate(parameters=changed))
        elif command == "runs":  # every run of a deployment: state and parameters
            deployment = await client.read_deployment_by_name(arguments[0])
            runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])))
            print(json.dumps([{"state": r.state.type.value, "parameters": r.parameters} for r in runs]))
        elif command == "limit":
            limit = await client.read_concurrency_limit_by_tag(arguments[0])
            print(limit.concurrency_limit)
        elif command in ("pause-automations", "resume-automations"):
            for automation in await client.read_automations():
                change = client.pause_automation if command.startswith("pause") else client.resume_automation
                await change(automation.id)

asyncio.run(main(sys.argv[1], *sys.argv[2:]))
"""


def test_every_schedule_creates_its_upcoming_runs(prefect_server: PrefectServer) -> None:
    """The server's scheduler makes the cron schedules' next runs (in the future: nothing runs now).
    With SQLAlchemy 2.1 Prefect 3.8's scheduler fails on every pass and no schedule ever runs."""
    scheduled = ("zero-loop/zero-9x9", "evaluate-champion/weekly-9x9", "ingest/cgos-9x9-monthly")

    def upcoming(name: str) -> int:
        return sum(r["state"] == "SCHEDULED" for r in json.loads(prefect_server.api("runs", name)))
    deadline = time.monotonic() + 90
    while not all(upcoming(name) for name in scheduled):
        log = (prefect_server.home / "server.log").read_text()[-2000:]
        assert time.monotonic() < deadline, f"no scheduled runs of {scheduled} after 90 s; server log:\n{log}"
        time.sleep(2)
    assert upcoming("ladder/rate-champion") == 0  # triggered by events, never by the clock


def test_a_zero_loop_run_killed_mid_generation_and_retried_as_the_ui_does_resumes(
        prefect_server: PrefectServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The zero-9x9 deployment on a real server and process worker: the worker and everything under it
    SIGKILLed once self-play has finished; the run retried through the API as the UI's Retry does; a
    new worker completes it without playing self-play again or registering a version twice."""
    import psutil

    from storage import loops, registry
    from storage import selfplay as selfplay_files

    server, data = prefect_server, tmp_path / "data"
    server.api("pause-automations")  # a promotion here must not start ladder runs on this test's worker
    worker = server.start("prefect", "worker", "start", "--pool", "gozero-local", log=tmp_path / "worker1.log",
                          data=data)
    run_id = server.api("run", "zero-loop/zero-9x9", json.dumps(
        {"settings": RETRY_SETTINGS, "more_generations": 1, "workers": 2, "device": "cpu"}))
    server.wait_for(lambda: loops.read_step(data, "zero-retry", 1, "selfplay") is not None, 240, "self-play",
                    tmp_path)
    for process in [psutil.Process(worker.pid), *psutil.Process(worker.pid).children(recursive=True)]:
        process.kill()  # the worker, the flow run it started and the run's pool: a crashed machine
    assert server.state(run_id)[0] == "RUNNING"  # nobody told the server: the run looks alive, as after a crash
    played = {p: p.stat().st_mtime_ns for p in (data / "loops").rglob("*") if p.is_file()
              and "selfplay" in p.parts}
    assert played

    server.api("retry", run_id)
    worker = server.start("prefect", "worker", "start", "--pool", "gozero-local", log=tmp_path / "worker2.log",
                          data=data)
    try:
        server.wait_for(lambda: server.state(run_id)[0] in ("COMPLETED", "FAILED", "CRASHED"), 300,
                        "the retried run", tmp_path)
        assert server.state(run_id) == ("COMPLETED", 2)
    finally:
        stop_group(worker)

    assert {p: p.stat().st_mtime_ns for p in played} == played  # self-play was not played again
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    versions = registry.list_versions("gozero-5x5", data)
    assert sorted(v.version for v in versions) == [1, 2]  # generation 0 and 1, once each
    assert [v.version for v in versions if "champion" in v.aliases] == [2]
    ids = [game for sidecar in selfplay_files.finished_sidecars(data, 1, "zero-retry") for game in sidecar["game_ids"]]
    assert len(ids) == len(set(ids)) == 8


TINY_LOOP = {"loop": "zero-deployed", "size": 5, "games": 4, "sims": 4, "gate": "off", "min_window": 100,
             "batch_size": 16, "ladder_opponents": 0}
TINY_LADDER = {"settings": {"games_per_opponent": 2, "opponents": 1, "sims": 4, "anchors": []}}  # random only


def test_every_deployment_applies_and_a_promotion_starts_a_ladder_run_that_rates_it(
        prefect_server: PrefectServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every deployment applied (the fixture: apply_deployments, i.e. `prefect deploy --all` of
    prefect.yaml with the trigger) and the gpu limit there; the zero-loop deployment runs one
    generation after generation 0 on a process worker; its champion loads from the registry, and
    the promotion's event started a `ladder` run (the trigger's templated parameter: the promoted
    version, whose name says its board size) that rated it."""
    from flows.deploy import GPU_SLOTS
    from storage import ratings, registry
    from tasks.app.models import load_net
    from tasks.train import GPU_TAG

    server, data = prefect_server, tmp_path / "data"
    assert int(server.api("limit", GPU_TAG)) == GPU_SLOTS == 1
    server.api("resume-automations")  # in case the kill-and-Retry test paused the trigger
    server.api("edit", "ladder/rate-champion", json.dumps(TINY_LADDER))  # as a user would in the UI
    worker = server.start("prefect", "worker", "start", "--pool", "gozero-local", log=tmp_path / "worker.log",
                          data=data)
    try:
        run_id = server.api("run", "zero-loop/zero-9x9", json.dumps(
            {"settings": TINY_LOOP, "more_generations": 1, "workers": 1, "device": "cpu"}))
        server.wait_for(lambda: server.state(run_id)[0] in ("COMPLETED", "FAILED", "CRASHED"), 240, "the loop",
                        tmp_path)
        assert server.state(run_id)[0] == "COMPLETED"

        def ladder_runs() -> list[dict]:
            return json.loads(server.api("runs", "ladder/rate-champion"))
        server.wait_for(lambda: any(r["state"] in ("COMPLETED", "FAILED", "CRASHED") for r in ladder_runs()), 180,
                        "the ladder run the promotion triggered", tmp_path)
    finally:
        stop_group(worker)

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    champion = registry.describe("gozero-5x5", "champion", data)
    assert (champion.version, champion.tags["generation"]) == (2, "1")
    assert load_net("models:/gozero-5x5@champion", data).config.board_size == 5
    runs = ladder_runs()
    assert [(r["state"], r["parameters"]["player"], r["parameters"]["settings"]) for r in runs] == [
        ("COMPLETED", "models:/gozero-5x5/2", TINY_LADDER["settings"])]  # generation 0's random net is not rated
    rated = {row["player"] for row in ratings.read_ladder(data, 5)}
    assert {"gozero-5x5/2", "random"} <= rated


def test_a_scheduled_zero_loop_run_aims_more_generations_past_the_last_finished_one(tmp_path: Path) -> None:
    """zero-9x9's `more_generations`: counted from the last generation with every step recorded; an
    unfinished generation is the first of them (a retried run aims where it aimed before)."""
    from flows.zero_loop import generation_target
    from storage import loops
    from tasks.app.loop_view import STEPS

    assert generation_target(tmp_path, "sched", 2) == 2  # a new loop: generations 1 and 2
    for generation in (1, 2):
        for step in STEPS:
            loops.record_step(tmp_path, "sched", generation, step, {})
    loops.record_step(tmp_path, "sched", 3, "start", {})  # generation 3 crashed after its start
    assert generation_target(tmp_path, "sched", 1) == 3
    assert generation_target(tmp_path, "sched", 2) == 4
    with pytest.raises(loops.LoopError, match="at least 1"):
        generation_target(tmp_path, "sched", 0)
