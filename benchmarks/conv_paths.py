"""CPU inference per convolution path, side by side: torch's default (oneDNN), oneDNN off, channels_last, bf16.

    python -m benchmarks.conv_paths [--threads 1] [--rounds 5] [--batch 64]

For the `tiny` and `small` DualNets on 9x9 and the `small` one on 19x19 (untrained, agz17), times
`NetEvaluator.evaluate` (encoding, legal masks, forward, softmax: what self-play, matches and
analysis call) on the same 64 positions from random games, on each path of
`gocore.nn.conv_paths` this CPU may choose (`candidate_paths`: ``bf16`` only where the CPU does
bf16 natively), in rounds that rotate the order of the paths; each path keeps its best round. It also prints what `conv_paths.measure_paths` (the start-up measurement behind
`tasks.app.models.conv_path_for`) finds and so would choose. The last line is
``conv_paths: best_vs_default=<ratio> (small 9x9)``: which path wins depends on the CPU (`lscpu`).
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a self-play worker uses 1)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds over every path")
    parser.add_argument("--batch", type=int, default=64, help="positions per evaluate call")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import numpy as np
import torch

from gocore.nn import conv_paths
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position


def random_positions(size: int, count: int, seed: int = 0) -> list[Position]:
    """`count` positions from random legal play, 0 to 2*N*N/3 moves in."""
    rng, positions = np.random.default_rng(seed), []
    for _ in range(count):
        position = Position.initial(size)
        for _ in range(rng.integers(0, 2 * size * size // 3)):
            legal = np.flatnonzero(position.legal_moves()[:-1])
            if len(legal) == 0:
                break
            position = position.play(int(rng.choice(legal)))
        positions.append(position)
    return positions


def path_rates(name: str, size: int, batch: int, rounds: int) -> dict[str, float]:
    """Positions/s of `NetEvaluator.evaluate` per path (best round), the same weights on each."""
    torch.manual_seed(0)
    net = build_net(preset(name, size, 17, encoder="agz17"))
    evaluators, paths = {}, conv_paths.candidate_paths()
    for path in paths:
        copy = build_net(net.config)
        copy.load_state_dict(net.state_dict())
        evaluators[path] = NetEvaluator(copy, device="cpu", conv_path=path)
    positions = random_positions(size, batch)
    best = dict.fromkeys(paths, 0.0)
    for index in range(rounds + 1):
        for path in paths[index % len(paths):] + paths[:index % len(paths)]:
            started = time.perf_counter()
            evaluators[path].evaluate(positions)
            if index:  # round 0 warms every path up
                best[path] = max(best[path], batch / (time.perf_counter() - started))
    return best


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    print(f"{conv_paths.cpu_model()}, torch {torch.__version__}, {args.threads} thread(s), batch {args.batch}")
    ratio = 1.0
    for name, size in (("tiny", 9), ("small", 9), ("small", 19)):
        rates = path_rates(name, size, args.batch, args.rounds)
        fastest = max(rates, key=rates.get)
        torch.manual_seed(0)
        startup = conv_paths.measure_paths(build_net(preset(name, size, 17, encoder="agz17")), args.batch)
        print(f"{name:5} {size:2}x{size:<2} evaluate: {conv_paths.describe(rates)}  fastest {fastest} "
              f"({rates[fastest] / rates[conv_paths.DEFAULT_PATH]:.2f}x the default); start-up measurement "
              f"would choose {conv_paths.fastest_path(startup)} ({conv_paths.describe(startup)})")
        if (name, size) == ("small", 9):
            ratio = rates[fastest] / rates[conv_paths.DEFAULT_PATH]
    print(f"conv_paths: best_vs_default={ratio:.3f} (small 9x9)")


if __name__ == "__main__":
    main()
