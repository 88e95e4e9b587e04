"""AlphaGo's λ-search (leaf value mixed with a rollout) vs net-only PUCT on the same nets, same run.

    python -m benchmarks.alphago_search [--sims 200] [--positions 8] [--preset tiny] [--games 1]
                                        [--rollout-model URI] [--data-dir D] [--threads 1]

One process, `threads` torch threads, 9x9, CPU time (best of 3 passes over the same positions).
Every search starts afresh from each of `positions` positions (the empty board and positions after
10, 20, ... random moves) and runs `sims` simulations with the `ALPHAGO` preset (c_puct 5, one leaf
at a time per game; `--games` games searched in lockstep): the SL policy's priors and the value
net's v, both untrained nets of `preset` (their cost, not their strength, is measured). Three
searches differ only in the leaf value:

- net-only PUCT: λ = 0, v alone (the same search without rollouts; not `AlphaZeroAgent`'s MATCH
  preset, which has c_puct 1.25 and 8 leaves a round);
- λ-search, pattern rollouts: λ = 0.5, one rollout of the fast rollout policy per leaf (the
  `--rollout-model`'s weights, else random N(0, 0.5) weights: the kernel's cost hardly depends on
  them);
- λ-search, uniform rollouts: λ = 0.5, one uniform random playout per leaf.

The last line is ``alphago_search: pattern_vs_net=<r> uniform_vs_net=<r> net_sims_per_s=<n>
pattern_sims_per_s=<n> uniform_sims_per_s=<n>``.
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200, help="simulations per search")
    parser.add_argument("--positions", type=int, default=8, help="positions searched per pass")
    parser.add_argument("--preset", default="tiny", help="net preset of the policy and value nets")
    parser.add_argument("--games", type=int, default=1, help="searches in lockstep (one net call per round)")
    parser.add_argument("--rollout-model", help="a rollout model (models:/... or a model dir) to roll out with")
    parser.add_argument("--data-dir", help="data dir of the model registry (default: GOZERO_DATA or ./gozero-data)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import torch

from gocore.nn import patterns
from gocore.nn.features import get_encoder
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position, candidate_moves
from gocore.search import mcts
from gocore.search.rollout import PatternRollouts

SIZE, KOMI, ENCODER = 9, 7.5, "agz17"


def net(family: str, name: str, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_net(preset(name, SIZE, get_encoder(ENCODER).num_planes, family=family, encoder=ENCODER)).eval()


def start_positions(count: int, seed: int) -> list[Position]:
    """The empty board, then positions after 10, 20, ... uniformly random moves (never an own eye)."""
    rng, found = np.random.default_rng(seed), []
    for index in range(count):
        position = Position.initial(SIZE, KOMI)
        for _ in range(10 * index):
            moves = np.flatnonzero(candidate_moves(position))
            moves = moves[moves < SIZE * SIZE]
            if len(moves) == 0:
                break
            position = position.play(int(rng.choice(moves)))
        found.append(position)
    return found


def sims_per_second(evaluator: NetEvaluator, config: mcts.MCTSConfig, positions: list[Position], games: int,
                    rollouts: PatternRollouts | None, seed: int) -> float:
    """Simulations per CPU second, best of 3 passes (each search from a fresh root)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for position in positions:
            search = mcts.BatchedSearch(evaluator, config, [position] * games, seed, rollout_policy=rollouts)
            search.search()
        best = min(best, time.process_time() - started)
    return config.sims * games * len(positions) / best


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    if args.rollout_model:
        from tasks.app.models import load_rollout_policy

        rollouts = load_rollout_policy(args.rollout_model, SIZE, args.data_dir)
    else:
        rollouts = PatternRollouts(np.random.default_rng(args.seed).normal(0.0, 0.5, patterns.NUM_FEATURES))
    evaluator = NetEvaluator(policy_net=net("policy", args.preset, args.seed),
                             value_net=net("value", args.preset, args.seed + 1), device="cpu")
    positions = start_positions(args.positions, args.seed)
    base = mcts.ALPHAGO.replace(sims=args.sims)
    net_only = base.replace(rollout_lambda=0.0)
    sims_per_second(evaluator, base.replace(sims=8), positions[:2], 1, rollouts, args.seed)  # compile, warm up
    sims_per_second(evaluator, base.replace(sims=8), positions[:2], 1, None, args.seed)
    speeds = {"net": sims_per_second(evaluator, net_only, positions, args.games, None, args.seed),
              "pattern": sims_per_second(evaluator, base, positions, args.games, rollouts, args.seed),
              "uniform": sims_per_second(evaluator, base, positions, args.games, None, args.seed)}
    print(f"{args.preset} policy + value nets, {args.sims} sims x {args.positions} positions x {args.games} "
          f"game(s), one leaf a round, {args.threads} thread(s):")
    print(f"  net-only PUCT (lambda 0):           {speeds['net']:9,.0f} sims/s")
    print(f"  lambda-search, pattern rollouts:    {speeds['pattern']:9,.0f} sims/s   "
          f"ratio {speeds['pattern'] / speeds['net']:.3f}")
    print(f"  lambda-search, uniform rollouts:    {speeds['uniform']:9,.0f} sims/s   "
          f"ratio {speeds['uniform'] / speeds['net']:.3f}")
    print(f"alphago_search: pattern_vs_net={speeds['pattern'] / speeds['net']:.3f} "
          f"uniform_vs_net={speeds['uniform'] / speeds['net']:.3f} net_sims_per_s={speeds['net']:.0f} "
          f"pattern_sims_per_s={speeds['pattern']:.0f} uniform_sims_per_s={speeds['uniform']:.0f}")


if __name__ == "__main__":
    main()
