"""Self-play with glibc's malloc tuned to keep freed memory (gocore.malloc) against glibc's defaults.

    python -m benchmarks.malloc [--games 100] [--sims 16] [--workers 2] [--preset tiny]

Runs the same `gozero selfplay` (a random 9x9 net of `--preset` saved to a temp dir, the same seeds,
so the same games) twice in fresh processes: with ``GOZERO_MALLOC=system`` (the baseline: glibc's
own thresholds) and with the default tuning, and prints each run's wall, user and system time and
minor page faults (of the command and its workers), and the ratio. Best of `--repeats`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def parse_args() -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="self-play games per run")
    parser.add_argument("--sims", type=int, default=16, help="simulations per move")
    parser.add_argument("--workers", type=int, default=2, help="self-play processes")
    parser.add_argument("--preset", default="tiny", help="net preset")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each; the fastest is reported")
    return parser.parse_args()


def saved_random_net(path: Path, net_preset: str) -> Path:
    """A random dual net of `net_preset` for 9x9 and the agz17 encoder, as a model directory."""
    import torch

    from gocore.nn.features import get_encoder
    from gocore.nn.nets import build_net, preset
    from storage.checkpoints import save_model

    torch.manual_seed(0)
    config = preset(net_preset, 9, get_encoder("agz17").num_planes, family="dual", encoder="agz17")
    return save_model(path, build_net(config), config.to_dict())


def timed(model: Path, data: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    """One `gozero selfplay` run in a fresh process: wall, user and system seconds, minor faults."""
    command = [sys.executable, "-m", "flows.cli", "selfplay", "--model", str(model), "--games", str(args.games),
               "--sims", str(args.sims), "--workers", str(args.workers), "--data-dir", str(data)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall": wall, "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime,
            "faults": after.ru_minflt - before.ru_minflt}


def main() -> None:
    args = parse_args()
    from gocore.malloc import SWITCH_ENV, TUNABLES

    clean = {k: v for k, v in os.environ.items() if k not in TUNABLES and k != SWITCH_ENV}
    clean["PREFECT_LOGGING_LEVEL"] = "CRITICAL"
    clean.pop("MLFLOW_TRACKING_URI", None)
    runs: dict[str, list[dict[str, float]]] = {"glibc defaults": [], "gozero (kept)": []}
    with tempfile.TemporaryDirectory(prefix="gozero-bench-malloc-") as temp:
        model = saved_random_net(Path(temp) / "model", args.preset)
        for repeat in range(args.repeats):
            for name, env in (("glibc defaults", {**clean, SWITCH_ENV: "system"}), ("gozero (kept)", clean)):
                runs[name].append(timed(model, Path(temp) / f"data-{name[:5]}-{repeat}", args, env))
    best = {name: min(found, key=lambda run: run["wall"]) for name, found in runs.items()}
    print(f"malloc: gozero selfplay, {args.games} games x {args.sims} sims, {args.preset} net, "
          f"{args.workers} workers, best of {args.repeats}")
    print(f"{'':<16} {'wall s':>8} {'user s':>8} {'sys s':>8} {'minor faults':>13}")
    for name, run in best.items():
        print(f"{name:<16} {run['wall']:>8.1f} {run['user']:>8.1f} {run['sys']:>8.1f} {run['faults']:>13,.0f}")
    ratio = best["glibc defaults"]["wall"] / best["gozero (kept)"]["wall"]
    print(f"malloc: speedup={ratio:.2f}x (wall, glibc defaults / gozero)")


if __name__ == "__main__":
    sys.exit(main())
