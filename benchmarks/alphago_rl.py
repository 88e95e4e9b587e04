"""AlphaGo's RL self-play (policy against policy, no search) vs the zero loop's self-play, same run.

    python -m benchmarks.alphago_rl [--games 16] [--sims 32] [--preset tiny] [--threads 1]

Both sides at the same net preset on 9x9, untrained, one process, `threads` torch threads:

- RL: `gocore.nn.reinforce.play_policy_games` of a PolicyNet against another (the RL stage's
  minibatch: `games` games in lockstep, every move sampled from the policy), then one REINFORCE
  update on them (`reinforce_step`), since the RL stage pays for both;
- zero: `gocore.search.selfplay.play_games` with the SELFPLAY preset at `sims` simulations (the zero
  loop's default is 32) on a DualNet, `games` games in lockstep, as tasks/selfplay.py plays them.

    rl_vs_zero = (RL games/hour) / (zero self-play games/hour)

The last line is ``alphago_rl: rl_vs_zero=<ratio> rl_games_per_hour=<n> zero_games_per_hour=<n>``.
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=16, help="games in lockstep (an RL minibatch's n)")
    parser.add_argument("--sims", type=int, default=32, help="simulations per move of the zero self-play")
    parser.add_argument("--preset", default="tiny", help="net preset of both: tiny, small or full")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import numpy as np
import torch

from gocore.nn.features import get_encoder
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.nn.reinforce import play_policy_games, reinforce_step
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import play_games

SIZE, KOMI, ENCODER = 9, 7.5, "agz17"


def net(family: str, name: str, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_net(preset(name, SIZE, get_encoder(ENCODER).num_planes, family=family, encoder=ENCODER)).eval()


def rl_games_per_hour(args: argparse.Namespace) -> tuple[float, float]:
    """(games/hour of an RL minibatch with its update, mean game length)."""
    learner, opponent = net("rl", args.preset, args.seed), net("policy", args.preset, args.seed + 1)
    optimizer = torch.optim.SGD(learner.parameters(), lr=1e-3)
    started = time.perf_counter()
    games = play_policy_games(learner, opponent, args.games, SIZE, KOMI, np.random.default_rng(args.seed))
    reinforce_step(learner, optimizer, games)
    seconds = time.perf_counter() - started
    return args.games * 3600 / seconds, float(games.lengths.mean())


def zero_games_per_hour(args: argparse.Namespace) -> tuple[float, float]:
    """(games/hour of the zero loop's self-play, mean game length)."""
    evaluator = NetEvaluator(net("dual", args.preset, args.seed), device="cpu")
    started = time.perf_counter()
    games = play_games(evaluator, SELFPLAY.replace(sims=args.sims), args.games, SIZE, KOMI, seed=args.seed)
    seconds = time.perf_counter() - started
    return args.games * 3600 / seconds, float(np.mean([len(g.moves) for g in games]))


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    rl_warm = argparse.Namespace(**{**vars(args), "games": 2})
    rl_games_per_hour(rl_warm)  # numba kernels and torch's first calls, outside the timing
    rl, rl_length = rl_games_per_hour(args)
    zero, zero_length = zero_games_per_hour(args)
    print(f"RL self-play ({args.preset} PolicyNet vs PolicyNet, {args.games} games + 1 update): "
          f"{rl:,.0f} games/hour, {rl_length:.0f} moves/game")
    print(f"zero self-play ({args.preset} DualNet, {args.sims} sims, {args.games} games): "
          f"{zero:,.0f} games/hour, {zero_length:.0f} moves/game")
    print(f"alphago_rl: rl_vs_zero={rl / zero:.1f} rl_games_per_hour={rl:.0f} zero_games_per_hour={zero:.0f}")


if __name__ == "__main__":
    main()
