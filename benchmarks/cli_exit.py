"""The way out of a `gozero` command: ours (what is left frozen out of the interpreter's exit
collections, `flows.cli.root.main`) beside the baseline, the same command with that freeze made a
no-op (the interpreter's ordinary exit), side by side in the same run.

    python -m benchmarks.cli_exit [--repeats 3] [--games 2]

The command is a small self-play run (`gozero selfplay --model uniform --size 5 --sims 4`, one
worker, a fresh data dir each time): it imports torch, Prefect and MLflow and starts the temporary
Prefect server, as every command that does work does. Each run is timed from its start to its last
line of output and to its exit; the exit's share is the difference. Runs alternate, ours first.
The last line is ``cli_exit: ours=<s> baseline=<s> ratio=<x> (median seconds from last line to exit)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = "from flows.cli.root import main; main()"
BASELINE = "import gc; gc.freeze = lambda: None\nfrom flows.cli.root import main; main()"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (alternating)")
    parser.add_argument("--games", type=int, default=2, help="self-play games per run")
    return parser.parse_args(argv)


def timed(code: str, games: int) -> tuple[float, float]:
    """(seconds to the last line of output, seconds to the exit) of one fresh run."""
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "MLFLOW_TRACKING_URI")}
    env.update(PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory(prefix="cli-exit-") as data:
        argv = ["gozero", "selfplay", "--model", "uniform", "--games", str(games), "--size", "5", "--sims", "4",
                "--workers", "1", "--data-dir", data]
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", f"import sys; sys.argv = {argv!r}\n{code}"], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert process.stdout is not None
        last, lines = start, []
        for line in process.stdout:
            last = time.perf_counter()
            lines.append(line)
        status = process.wait()
        end = time.perf_counter()
    if status != 0:
        raise RuntimeError(f"gozero selfplay failed ({status}): {''.join(lines)[-2000:]}")
    return last - start, end - start


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    exits: dict[str, list[float]] = {"ours": [], "baseline": []}
    for repeat in range(args.repeats):
        for name, code in (("ours", OURS), ("baseline", BASELINE)):
            last, end = timed(code, args.games)
            exits[name].append(end - last)
            print(f"run {repeat + 1} {name:8s}: last line {last:6.2f} s, exit {end:6.2f} s, "
                  f"way out {end - last:5.2f} s", flush=True)
    ours, baseline = (statistics.median(exits[name]) for name in ("ours", "baseline"))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"cli_exit: ours={ours:.2f} baseline={baseline:.2f} ratio={baseline / max(ours, 1e-6):.1f} "
          "(median seconds from last line to exit)")


if __name__ == "__main__":
    main()
