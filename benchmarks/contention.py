"""A torch command alone and beside a competing training run: does it degrade gracefully?

    python -m benchmarks.contention [--games 2] [--sims 48] [--preset small]

Times `gozero evaluate MODEL random` (a `small` 9x9 dual net searching `--sims` simulations per
move, `--games` games, played in-process) three ways, each in a fresh process:

1. alone, with gozero's default threads (`gocore.nn.device.default_threads`: the idle cores);
2. beside a competing training process (the small net on random batches, torch's own default
   threads, i.e. every core), again with gozero's default;
3. beside the same competitor with torch's default instead (``--threads <every core>``): the baseline.

The last line is ``contention: beside/alone=<ratio> torch_default_beside/alone=<ratio>`` (target:
the first ratio <= 2).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMPETITOR = """
import time, torch
from gocore.nn.nets import build_net, preset
net = build_net(preset("small", 9, 17))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
planes = torch.rand(256, 17, 9, 9)
print("ready", flush=True)
end = time.monotonic() + {seconds}
while time.monotonic() < end:
    policy, value = net(planes)
    loss = value.pow(2).mean() - policy.log_softmax(-1).mean()
    optimizer.zero_grad(); loss.backward(); optimizer.step()
"""


def save_model(directory: Path, preset_name: str) -> Path:
    """A randomly initialised 9x9 dual net saved as a model directory."""
    from gocore.nn.nets import build_net, preset
    from storage.checkpoints import save_model as save

    config = preset(preset_name, 9, 17)
    return save(directory / "model", build_net(config), config.to_dict())


def time_evaluate(model: Path, data: Path, games: int, sims: int, threads: int | None, match: str) -> float:
    """Seconds of one `gozero evaluate` process."""
    command = [sys.executable, "-m", "flows.cli", "evaluate", str(model), "random", "--games", str(games),
               "--sims", str(sims), "--size", "9", "--match-id", match, "--data-dir", str(data)]
    if threads is not None:
        command += ["--threads", str(threads)]
    env = {**os.environ, "GOZERO_THREADS": ""}
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, timeout=3600)
    return time.perf_counter() - start


def beside_competitor(run, seconds: float) -> float:
    """`run()`'s result while a training process keeps every core busy."""
    competitor = subprocess.Popen([sys.executable, "-c", COMPETITOR.format(seconds=seconds)],
                                  stdout=subprocess.PIPE, text=True)
    try:
        competitor.stdout.readline()  # built its net: training from here on
        time.sleep(1.0)
        return run()
    finally:
        competitor.kill()
        competitor.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2, help="games per timed evaluate")
    parser.add_argument("--sims", type=int, default=48, help="simulations per move")
    parser.add_argument("--preset", default="small", help="net preset (tiny, small, full)")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="gozero-bench-") as temp:
        root = Path(temp)
        model = save_model(root, args.preset)
        alone = time_evaluate(model, root / "data", args.games, args.sims, None, "alone")
        beside = beside_competitor(
            lambda: time_evaluate(model, root / "data", args.games, args.sims, None, "beside"), 3600)
        torch_default = beside_competitor(
            lambda: time_evaluate(model, root / "data", args.games, args.sims, cores, "torch-default"), 3600)
    print(f"gozero evaluate {args.preset} net vs random, {args.games} games x {args.sims} sims, {cores} cores")
    print(f"  alone (gozero default threads)           {alone:7.1f} s")
    print(f"  beside training (gozero default threads) {beside:7.1f} s   {beside / alone:.2f}x")
    print(f"  beside training (torch default: {cores} threads) {torch_default:7.1f} s   {torch_default / alone:.2f}x")
    print(f"contention: beside/alone={beside / alone:.2f} torch_default_beside/alone={torch_default / alone:.2f}")


if __name__ == "__main__":
    main()
