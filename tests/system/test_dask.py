"""`--dask-address`: ingest, self-play and one zero-loop generation run their tasks on a real
(local) Dask cluster of two worker processes; a bad address fails at once with one clear line."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from gocore.cpu import tree_cpu_seconds
from gocore.play.match import play_game
from gocore.rules import sgf
from gocore.search.agents import RandomAgent
from storage import datasets


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes that know no data dir and no MLflow store of their own: like workers on
    another machine, they have only the paths the flow gives them."""
    from distributed import LocalCluster

    with pytest.MonkeyPatch.context() as monkeypatch:  # the workers inherit the env they start with
        monkeypatch.delenv("GOZERO_DATA", raising=False)
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
        local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with local:
        yield local


def test_ingest_and_selfplay_run_on_a_dask_cluster(prefect_harness, cluster, tmp_path: Path):
    from flows.ingest import run_ingest
    from flows.selfplay import run_selfplay
    from tasks.app.selfplay_settings import SelfPlaySettings

    folder = tmp_path / "sgf"
    folder.mkdir()
    moves = 0
    for i in range(6):
        game = play_game(RandomAgent(seed=i), RandomAgent(seed=50 + i), size=9, max_moves=40)
        (folder / f"g{i}.sgf").write_text(sgf.write(sgf.GameRecord(size=9, moves=game.moves, winner=game.winner,
                                                                   result=game.result)))
        moves += len(game.moves)
    data = tmp_path / "data"
    facts = run_ingest([str(folder)], "on-dask", str(data), dask_address=cluster.scheduler_address,
                       target_rows=moves * 8 // 3)
    manifest = datasets.read_manifest(data / "datasets" / "on-dask")
    assert len(manifest["shards"]) >= 2 and facts.rows == manifest["rows"] == moves * 8

    summary = run_selfplay(SelfPlaySettings("uniform", sims=4, size=5), games=4, generation=0, data_dir=str(data),
                           dask_address=cluster.scheduler_address, games_per_task=2)
    assert summary.counts.games == 4
    assert len(list((data / "selfplay" / "gen=0").glob("shard-*.parquet"))) == 2


def test_a_zero_loop_generation_runs_its_games_on_the_cluster(prefect_harness, cluster, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch):
    from distributed import Client, get_task_stream

    from flows.zero_loop import run_zero_loop
    from storage import loops, registry
    from tasks.app.loop_settings import LoopSettings

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the data dir's own store, as a user has
    data = tmp_path / "data"
    settings = LoopSettings(loop="dask-5x5", size=5, generations=1, games=4, sims=2, gate="fixed", gate_games=4,
                            min_window=100, batch_size=16, replay=0.5, ladder_opponents=0)
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)  # worker address -> its process id
        workers_before = sum(client.run(tree_cpu_seconds).values())
        with get_task_stream(client=client) as stream:
            run_zero_loop(settings, str(data), dask_address=cluster.scheduler_address, device="cpu")
        workers_spent = sum(client.run(tree_cpu_seconds).values()) - workers_before
    ran = {}  # task name -> the worker processes that ran it
    for record in stream.data:
        ran.setdefault(record["key"].rsplit("-", 1)[0], set()).add(pids[record["worker"]])
    assert ran.keys() >= {"selfplay_games", "play_games"}, ran
    assert all(os.getpid() not in workers and workers <= set(pids.values()) for workers in ran.values())

    gate = loops.read_step(data, "dask-5x5", 1, "gate")
    assert gate["rule"] != "off" and gate["games"] == 4  # gated: every game played, on the cluster
    # the steps count the cluster's workers (this process's children here: counted once)
    recorded = sum(record.get("cpu_seconds", 0.0) for record in loops.read_steps(data, "dask-5x5"))
    assert workers_spent > 0.5 and 0.9 * workers_spent <= recorded < 2 * workers_spent + 60, (recorded, workers_spent)
    promoted = loops.read_step(data, "dask-5x5", 1, "promote")
    assert promoted["promoted"] == gate["passed"]
    versions = registry.list_versions("gozero-5x5", data)
    assert [v.version for v in versions] == [1, 2]  # generation 0 and the candidate, each registered once
    champion = 2 if gate["passed"] else 1
    assert [v.version for v in versions if "champion" in v.aliases] == [champion]
    assert [v.version for v in versions if "promotion_reason" in v.tags] == sorted({1, champion})


@pytest.mark.parametrize(("address", "reason"), [
    ("tcp://127.0.0.1:1", "no Dask scheduler at tcp://127.0.0.1:1: connection refused"),
    ("nosuch.invalid", "no Dask scheduler at tcp://nosuch.invalid:8786: unknown host 'nosuch.invalid'"),
])
def test_a_bad_dask_address_fails_before_the_flow_starts(address: str, reason: str, tmp_path: Path):
    from flows.runtime import DaskSchedulerError
    from flows.zero_loop import run_zero_loop
    from tasks.app.loop_settings import LoopSettings

    started = time.perf_counter()
    with pytest.raises(DaskSchedulerError) as error:
        run_zero_loop(LoopSettings(size=5), str(tmp_path / "data"), dask_address=address)
    assert str(error.value) == reason and time.perf_counter() - started < 5
    assert not (tmp_path / "data").exists()  # nothing started, nothing written


def test_a_worker_address_is_not_the_scheduler(cluster):
    from flows.runtime import DaskSchedulerError, dask_scheduler

    assert dask_scheduler(cluster.scheduler_address.removeprefix("tcp://")) == cluster.scheduler_address
    worker = next(iter(cluster.scheduler_info["workers"]))
    with pytest.raises(DaskSchedulerError, match="is a Dask Worker, not the scheduler"):
        dask_scheduler(worker)


@pytest.fixture
def detached_cluster(tmp_path: Path):
    """A scheduler and a worker that are not this process's descendants (`setsid -f` re-parents them
    to init), as on another machine: only the cluster can say what CPU they spent."""
    import json
    import signal
    import subprocess
    import sys

    bin_dir = Path(sys.executable).parent
    info, pids = tmp_path / "scheduler.json", tmp_path / "pids"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    script = (f"echo $$ >> {pids}; {bin_dir}/dask scheduler --host 127.0.0.1 --port 0 --no-dashboard --scheduler-file {info} & "
              f"echo $! >> {pids}; "
              f"{bin_dir}/dask worker --scheduler-file {info} --nthreads 1 --no-nanny --no-dashboard & "
              f"echo $! >> {pids}; wait")
    subprocess.run(["setsid", "-f", "bash", "-c", script], check=True, **quiet)
    try:
        from distributed import Client

        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)
        yield address
    finally:  # a worker whose scheduler is gone can wait on it for good: SIGKILL what SIGTERM left
        started = [int(pid) for pid in (pids.read_text().split() if pids.exists() else [])]
        for signum in (signal.SIGTERM, signal.SIGKILL):
            for pid in started:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)
            deadline = time.monotonic() + 5
            while signum == signal.SIGTERM and time.monotonic() < deadline and any(_alive(pid) for pid in started):
                time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_step_counts_the_cpu_of_dask_workers_outside_its_process_tree(detached_cluster: str, tmp_path: Path):
    from distributed import Client

    from flows.runtime import task_runner
    from tasks.app.steps import Steps

    def burn(seconds: float) -> int:
        end, count = time.process_time() + seconds, 0
        while time.process_time() < end:
            count += 1
        return count

    def work() -> dict[str, int]:
        task_runner(dask_address=detached_cluster)  # a flow's runner: from now on its workers are counted
        with Client(detached_cluster, set_as_default=False) as client:
            return {"count": client.submit(burn, 2.0, pure=False).result()}

    record = Steps(tmp_path, "dask-cpu").step("burn", work)
    assert 1.8 <= record["cpu_seconds"] < 30, record  # the worker's 2 s (no descendant: the tree missed it)
