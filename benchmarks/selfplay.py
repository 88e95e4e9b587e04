"""Self-play search throughput vs the raw network that drives it, same model, batches and run.

    python -m benchmarks.selfplay [--games 8] [--sims 64] [--threads 1] [--replay-every 3]

Plays `games` 9x9 games of self-play (AlphaGo Zero's SELFPLAY preset with `sims` simulations,
games searched in lockstep as tasks/selfplay.py does) with the untrained `small` DualNet on
`threads` torch threads (a self-play worker uses 1), recording every batch the search sent to
the network. Then, in the same process, it replays a sample of those very batches (every
`replay-every`-th) through

- `NetEvaluator.evaluate` (encode_position per position, legal masks, forward, masked softmax):
  the fair denominator, positions/s at the batch sizes the search produced;
- the bare forward pass on planes encoded beforehand (the network alone).

    search_vs_net = (simulations/s during self-play) / (NetEvaluator positions/s)

(target >= 0.8: search and rules cost at most 20 %). A simulation is one leaf the search adds
(one per move searched and simulation), whether the network or the rules scored it. Games/hour
for the `tiny` and `small` nets, one process, same settings, come from whole games. The last
line is ``selfplay: search_vs_net=<ratio> sims_per_s=<n>``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games searched in lockstep")
    parser.add_argument("--sims", type=int, default=64, help="simulations per move")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a self-play worker uses 1)")
    parser.add_argument("--replay-every", type=int, default=3, help="replay every k-th recorded batch")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import numpy as np
import torch

from gocore.nn import features
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position
from gocore.search.mcts import SELFPLAY, MCTSConfig
from gocore.search.selfplay import SearchedGame, play_games

SIZE = 9
ENCODER = "agz17"


class RecordingEvaluator:
    """A NetEvaluator that keeps every batch it is asked for and the time spent answering."""

    def __init__(self, inner: NetEvaluator):
        self.inner, self.batches, self.seconds = inner, [], 0.0

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        self.batches.append(list(positions))
        started = time.perf_counter()
        try:
            return self.inner.evaluate(positions)
        finally:
            self.seconds += time.perf_counter() - started


def simulations(games: Sequence[SearchedGame], config: MCTSConfig) -> int:
    """Leaves added in all: one search per move played, plus the search that led to a resignation."""
    searches = sum(len(game.moves) + (game.reason == "resign") for game in games)
    return searches * config.sims


def selfplay_run(net: torch.nn.Module, config: MCTSConfig, games: int, seed: int) -> dict:
    """Play the games; wall time, simulations, the batches sent to the network and its share."""
    recorder = RecordingEvaluator(NetEvaluator(net, device="cpu"))
    started, cpu = time.perf_counter(), time.process_time()
    played = play_games(recorder, config, games, size=SIZE, seed=seed)
    wall = time.perf_counter() - started
    return {"wall": wall, "cpu": time.process_time() - cpu, "sims": simulations(played, config), "batches": recorder.batches,
            "net_seconds": recorder.seconds, "moves": sum(len(g.moves) for g in played), "games": played}


def evaluator_rate(net: torch.nn.Module, batches: Sequence[Sequence[Position]]) -> tuple[float, float]:
    """(positions/s, positions per CPU-s) of NetEvaluator.evaluate over these batches."""
    evaluator = NetEvaluator(net, device="cpu")
    started, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        evaluator.evaluate(batch)
    count = sum(map(len, batches))
    return count / (time.perf_counter() - started), count / (time.process_time() - cpu)


@torch.inference_mode()
def forward_rate(net: torch.nn.Module, batches: Sequence[Sequence[Position]]) -> tuple[float, float]:
    """(positions/s, positions per CPU-s) of the bare forward pass over these batches, planes encoded beforehand."""
    tensors = [torch.from_numpy(np.stack([features.encode_position(p, ENCODER) for p in batch])).float()
               for batch in batches]  # (B, 17, N, N) each
    net.eval()
    started, cpu = time.perf_counter(), time.process_time()
    for planes in tensors:
        net(planes)
    count = sum(len(t) for t in tensors)
    return count / (time.perf_counter() - started), count / (time.process_time() - cpu)


def encode_rate(batches: Sequence[Sequence[Position]]) -> float:
    """Positions/s of NetEvaluator's per-position encode_position + legal moves (its numpy side)."""
    started = time.perf_counter()
    for batch in batches:
        np.stack([features.encode_position(p, ENCODER) for p in batch])
        np.stack([p.legal_moves() for p in batch])
    return sum(map(len, batches)) / (time.perf_counter() - started)


def new_net(name: str) -> torch.nn.Module:
    """An untrained 9x9 agz17 DualNet of preset `name` (fixed init seed)."""
    torch.manual_seed(0)
    return build_net(preset(name, SIZE, features.get_encoder(ENCODER).num_planes, encoder=ENCODER)).eval()


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    config = SELFPLAY.replace(sims=args.sims)
    print(f"9x9 self-play, {args.games} games in lockstep, {args.sims} sims/move, "
          f"leaves_per_game={config.leaves_per_game}, torch threads={args.threads}")

    small = new_net("small")
    play_games(NetEvaluator(small, device="cpu"), config.replace(sims=8, max_moves=4), 2, seed=1)  # warm-up
    run = selfplay_run(small, config, args.games, args.seed)
    sims_per_s = run["sims"] / run["wall"]
    sample = run["batches"][::max(1, args.replay_every)]
    sizes = np.array([len(b) for b in run["batches"]])
    (evaluate_per_s, evaluate_per_cpu), (forward_per_s, forward_per_cpu) = (evaluator_rate(small, sample),
                                                                            forward_rate(small, sample))
    ratio = sims_per_s / evaluate_per_s
    sims_per_cpu = run["sims"] / run["cpu"]  # robust to other processes taking the cores
    print(f"small: {run['games'].__len__()} games, {run['moves']} moves, {run['sims']:,} simulations "
          f"in {run['wall']:.1f} s; {len(sizes)} network batches, mean size {sizes.mean():.1f} "
          f"(median {np.median(sizes):.0f}, max {sizes.max()}), positions sent {sizes.sum():,}")
    print(f"  self-play          {sims_per_s:8.0f} simulations/s   {sims_per_cpu:6.0f} per CPU-s  (network "
          f"calls: {100 * run['net_seconds'] / run['wall']:.0f} % of the wall time, "
          f"{run['sims'] - sizes.sum():,} leaves scored by the rules)")
    print(f"  NetEvaluator       {evaluate_per_s:8.0f} positions/s     {evaluate_per_cpu:6.0f} per CPU-s  "
          f"(same batches, {len(sample)} replayed)")
    print(f"  bare forward       {forward_per_s:8.0f} positions/s     {forward_per_cpu:6.0f} per CPU-s  "
          f"(planes encoded beforehand)")
    print(f"  encode + legality  {encode_rate(sample):8.0f} positions/s     (NetEvaluator's per-position numpy)")
    print(f"  search_vs_net {ratio:.2f} (sims/s / NetEvaluator pos/s; per CPU-s "
          f"{sims_per_cpu / evaluate_per_cpu:.2f}), vs bare forward {sims_per_s / forward_per_s:.2f}; "
          f"target >= 0.8")

    rates = {"small": run}
    rates["tiny"] = selfplay_run(new_net("tiny"), config, args.games, args.seed)
    for name, result in rates.items():
        lengths = [len(g.moves) for g in result["games"]]
        print(f"games/hour {name:5s}: {3600 * len(lengths) / result['wall']:7.0f} "
              f"(one process, {args.sims} sims, mean length {np.mean(lengths):.0f} moves, "
              f"{result['sims'] / result['wall']:.0f} sims/s)")
    print(f"selfplay: search_vs_net={ratio:.2f} sims_per_s={sims_per_s:.0f}")


if __name__ == "__main__":
    main()
