"""The zero loop's overheads, ours vs the same work without Prefect, side by side in one run.

    python -m benchmarks.loop [--games 60] [--sims 24] [--workers 2] [--size 9]

1. One generation of `flows.zero_loop` (gate off, tiny net, fresh data dir, a temporary Prefect
   server already up): its wall time against the sum of its stages' compute (the step records).
2. The same self-play without Prefect: `tasks.selfplay.play_shard` on a plain process pool of the
   same size with the same settings and model, against the loop's self-play step.
3. The peak RSS of one self-play worker (a fresh process playing its share of the loop's tasks,
   each task's games in lockstep, with the tiny net), against the 0.5 GB target, and its peak private memory;
   ``--memory-only`` measures just this, e.g. the loop's defaults: ``--games 200 --sims 32``.

The last line is ``loop: compute/wall=<ratio> selfplay_loop_vs_alone=<ratio> worker_peak_gb=<x>
worker_private_gb=<y>`` (targets: >= 0.9, >= 0.9, <= 0.5).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gocore.malloc import keep_freed_memory  # imports nothing heavy


def parse_args() -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="self-play games of the generation")
    parser.add_argument("--sims", type=int, default=24, help="simulations per move")
    parser.add_argument("--workers", type=int, default=2, help="self-play processes")
    parser.add_argument("--size", type=int, default=9, help="board size")
    parser.add_argument("--memory-only", action="store_true",
                        help="only part 3: one worker's memory with a fresh tiny net (no loop, no Prefect server)")
    return parser.parse_args()


def play_alone(model: str, local: tuple[str, str], games: int, seed: int, data: str, sims: int, size: int) -> float:
    """One batch of self-play without Prefect (a pool worker), loading the model as the loop's
    workers do (from the `local` directory the parent resolved: no MLflow) and with a new loop's
    root search (`TECHNIQUE_DEFAULTS`), as the loop in `main` plays; its seconds."""
    from tasks.app.loop_settings import TECHNIQUE_DEFAULTS
    from tasks.app.selfplay_settings import SelfPlaySettings
    from tasks.selfplay import play_shard

    start = time.perf_counter()
    settings = SelfPlaySettings(model, sims, size=size, run="alone", local_model=local,
                                search=TECHNIQUE_DEFAULTS["search"])
    play_shard(settings, games, 1, seed, data)
    return time.perf_counter() - start


def loop_tasks(games: int, workers: int) -> list[int]:
    """The games of each self-play task the loop makes of a generation of `games` on `workers`."""
    from flows.selfplay import default_games_per_task
    from storage.selfplay import plan_batches

    return [count for _, count in plan_batches(games, default_games_per_task(games, workers), 0)]


def worker_peak_gb(model: str, local: tuple[str, str], batches: list[int], data: str, sims: int,
                   size: int) -> tuple[float, float]:
    """(peak RSS, peak private memory) in GB of a fresh process playing `batches` (games in
    lockstep each) one after another, as a pool worker plays its share of the tasks."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_peak_of_batches, model, local, batches, data, sims, size).result()


def _peak_of_batches(model: str, local: tuple[str, str], batches: list[int], data: str, sims: int,
                     size: int) -> tuple[float, float]:
    """VmHWM (this process image's peak RSS: unlike ru_maxrss, not inherited from the parent that
    spawned it) and the peak of its private pages (sampled): the shared library pages of torch and
    numba (~150 MB of the RSS) are one copy for all workers."""
    import threading

    private = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            private[0] = max(private[0], _private_gb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for index, games in enumerate(batches):
        play_alone(model, local, games, 99 + index, data, sims, size)
    stop.set()
    sampler.join()
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(status["VmHWM"].split()[0]) / 1024 ** 2, max(private[0], _private_gb())


def _private_gb() -> float:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:])
    return sum(int(fields[key].split()[0]) for key in ("Private_Clean", "Private_Dirty")) / 1024 ** 2


def memory_only(args: argparse.Namespace) -> None:
    """Part 3 alone: a worker playing its share of `--games` with a fresh tiny net."""
    from gocore.nn.nets import build_net, preset
    from storage.checkpoints import save_model

    share = loop_tasks(args.games, args.workers)[::args.workers]
    with tempfile.TemporaryDirectory(prefix="gozero-bench-memory-") as temp:
        net = build_net(preset("tiny", args.size, 17, encoder="agz17")).eval()
        model = save_model(Path(temp) / "tiny", net, net.config.to_dict())
        peak, private = worker_peak_gb(str(model), (str(model), "tiny"), share, temp, args.sims, args.size)
    print(f"self-play worker, tasks of {share} games x {args.sims} sims in lockstep, {args.size}x{args.size}, "
          f"tiny net: "
          f"peak RSS {peak:.2f} GB (target <= 0.5), peak private memory {private:.2f} GB")
    print(f"loop: worker_peak_gb={peak:.2f} worker_private_gb={private:.2f}")


def main() -> None:
    args = parse_args()
    os.environ["PREFECT_LOGGING_LEVEL"] = "CRITICAL"
    keep_freed_memory()  # as the CLI and the loop's process pools do: workers measured as the loop runs them
    if args.memory_only:
        return memory_only(args)
    from flows.runtime import prefect_api
    from flows.zero_loop import zero_loop
    from storage import loops
    from tasks.app.loop_settings import LoopSettings
    from tasks.app.models import local_model

    with tempfile.TemporaryDirectory(prefix="gozero-bench-loop-") as temp, prefect_api():
        os.environ.pop("MLFLOW_TRACKING_URI", None)
        data = Path(temp)
        settings = LoopSettings(loop="bench", size=args.size, generations=1, games=args.games, sims=args.sims,
                                gate="off", min_window=1_000)
        start = time.perf_counter()
        zero_loop(settings, str(data), workers=args.workers, device="cpu")
        wall = time.perf_counter() - start
        steps = {r["step"]: float(r["seconds"]) for r in loops.read_steps(data, "bench")}
        compute = sum(steps.values())
        model = f"models:/gozero-{args.size}x{args.size}/1"
        local = local_model(model, str(data))
        tasks = loop_tasks(args.games, args.workers)
        start = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(play_alone, [model] * len(tasks), [local] * len(tasks), tasks, range(len(tasks)),
                          [temp] * len(tasks), [args.sims] * len(tasks), [args.size] * len(tasks)))
        alone = time.perf_counter() - start
        share = tasks[::args.workers]
        peak, private = worker_peak_gb(model, local, share, temp, args.sims, args.size)
    print(f"one generation, {args.games} games x {args.sims} sims, {args.size}x{args.size}, tiny net, "
          f"{args.workers} workers, gate off")
    print(f"  loop wall {wall:7.1f} s   stages {compute:7.1f} s ({', '.join(f'{k} {v:.1f}' for k, v in steps.items())})"
          f"   compute/wall {compute / wall:.2f}")
    print(f"  self-play in the loop {steps.get('selfplay', 0):7.1f} s   without Prefect {alone:7.1f} s   "
          f"ratio {alone / max(steps.get('selfplay', 1e-9), 1e-9):.2f}")
    print(f"  self-play worker (tasks of {share} games in lockstep): peak RSS {peak:.2f} GB (target <= 0.5), "
          f"peak private memory {private:.2f} GB (what each more worker costs)")
    print(f"loop: compute/wall={compute / wall:.2f} selfplay_loop_vs_alone={alone / steps.get('selfplay', 1e-9):.2f} "
          f"worker_peak_gb={peak:.2f} worker_private_gb={private:.2f}")


if __name__ == "__main__":
    sys.exit(main())
