"""Pool start: what a flow pays to start its process pools, workers forked from a preloaded server
(ours, `flows.runtime._forked`) beside workers spawned as new interpreters (Prefect's own way).

    python -m benchmarks.pool_start [--pools 3] [--workers 2] [--repeats 3]

Each measurement is a fresh process (no temporary Prefect server: one is started first and shared)
that runs ``--pools`` flows one after another, each on its own `StoppingProcessPool` of
``--workers`` workers mapping four tasks that import what the self-play and match tasks import, as
a loop's generation starts pools for self-play, the gate and the ladder. It is timed wall and CPU;
the CPU counts the whole process tree, the fork server and its workers included (the run ends its
fork server and reaps it). The last line is
``pool_start: spawn=<s> forkserver=<s> ratio=<x> cpu_spawn=<s> cpu_forkserver=<s> cpu_ratio=<x>``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOWS = """
import os, sys
from prefect import flow, task
from flows.runtime import StoppingProcessPool
from gocore.children import stop_fork_server

@task
def work(index):
    import tasks.evaluate, tasks.selfplay  # what the real tasks import
    return os.getpid()

@flow
def pool():
    return [future.result() for future in work.map(range(4))]

for _ in range(int(sys.argv[1])):
    pool.with_options(task_runner=StoppingProcessPool(max_workers=int(sys.argv[2])))()
stop_fork_server()  # end and reap the fork server, so that its CPU is counted (as the CLI does)
"""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=3, help="pools started one after another per run")
    parser.add_argument("--workers", type=int, default=2, help="workers per pool")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way (the median is reported)")
    return parser.parse_args(argv)


def run(mode: str, pools: int, workers: int, env: dict[str, str]) -> tuple[float, float]:
    """Wall and whole-tree CPU seconds of one run with workers started by `mode`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FLOWS, str(pools), str(workers)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**env, "GOZERO_POOL_START": mode})
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from flows.runtime import prefect_api

    with prefect_api() as url:
        env = {**os.environ, "PREFECT_API_URL": url, "PYTHONPATH": str(ROOT), "PREFECT_LOGGING_LEVEL": "WARNING"}
        figures = {}
        for mode in ("spawn", "forkserver"):
            runs = [run(mode, args.pools, args.workers, env) for _ in range(args.repeats)]
            wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            figures[mode] = (wall, cpu)
            print(f"  {mode:<10} {args.pools} pools x {args.workers} workers: wall {wall:6.2f} s  CPU {cpu:6.2f} s"
                  f"  (runs: {', '.join(f'{r[0]:.1f}' for r in runs)} s)", flush=True)
    (spawn, spawn_cpu), (fork, fork_cpu) = figures["spawn"], figures["forkserver"]
    print(f"pool_start: spawn={spawn:.2f}s forkserver={fork:.2f}s ratio={spawn / fork:.2f}x "
          f"cpu_spawn={spawn_cpu:.2f}s cpu_forkserver={fork_cpu:.2f}s cpu_ratio={spawn_cpu / fork_cpu:.2f}x")


if __name__ == "__main__":
    main()
