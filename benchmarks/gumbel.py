"""Self-play speed of the Gumbel root search against PUCT, same net, games and budgets, one run.

    python -m benchmarks.gumbel [--games 8] [--sims 16 32] [--preset tiny] [--threads 1]

For each budget, plays `games` 9x9 self-play games in lockstep (the SELFPLAY preset, as
tasks/selfplay.py does) twice with the same untrained net: PUCT + Dirichlet, then Gumbel root
search (k = 16, c_visit 50, c_scale 1). Prints games/min and moves/min, wall and per CPU-minute
(CPU time is robust to other processes taking the cores), and the positions sent to the network
per move (Gumbel evaluates each new root on top of its budget). Games of an untrained net differ
in length between the two searches, so moves/min is the fair per-search rate. The last line is
``gumbel: moves_per_min_ratio=<gumbel / puct at the first budget>``.
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8, help="games searched in lockstep")
    parser.add_argument("--sims", type=int, nargs="+", default=[16, 32], help="simulations per move")
    parser.add_argument("--preset", default="tiny", help="net preset (the loop's default is tiny)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a self-play worker uses 1)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import torch

from benchmarks.selfplay import RecordingEvaluator, new_net
from gocore.nn.inference import NetEvaluator
from gocore.search.gumbel import root_search, search_factory
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import play_games

SIZE = 9


def rates(net: torch.nn.Module, search: str, sims: int, games: int, seed: int) -> dict[str, float]:
    """Games and moves per minute (wall and CPU) and network positions per move of one self-play run."""
    recorder = RecordingEvaluator(NetEvaluator(net, device="cpu"))
    started, cpu = time.perf_counter(), time.process_time()
    played = play_games(recorder, SELFPLAY.replace(sims=sims), games, size=SIZE, seed=seed,
                        new_search=search_factory(root_search(search)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    moves = sum(len(game.moves) for game in played)
    return {"games_min": 60 * games / wall, "games_cpu_min": 60 * games / cpu, "moves_min": 60 * moves / wall,
            "moves_cpu_min": 60 * moves / cpu, "length": moves / games,
            "per_move": sum(map(len, recorder.batches)) / max(moves, 1)}


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    net = new_net(args.preset)
    play_games(NetEvaluator(net, device="cpu"), SELFPLAY.replace(sims=8, max_moves=4), 2, seed=1,
               new_search=search_factory(root_search("gumbel")))  # warm-up: numba kernels, torch
    print(f"9x9 self-play, untrained {args.preset} net, {args.games} games in lockstep, torch threads={args.threads}")
    print(f"{'sims':>4} {'search':7} {'games/min':>9} {'per CPU-min':>11} {'moves/min':>9} "
          f"{'per CPU-min':>11} {'length':>6} {'net pos/move':>12}")
    ratios = []
    for sims in args.sims:
        result = {search: rates(net, search, sims, args.games, args.seed) for search in ("puct", "gumbel")}
        for search, r in result.items():
            print(f"{sims:4d} {search:7} {r['games_min']:9.1f} {r['games_cpu_min']:11.1f} {r['moves_min']:9.0f} "
                  f"{r['moves_cpu_min']:11.0f} {r['length']:6.0f} {r['per_move']:12.1f}")
        ratios.append(result["gumbel"]["moves_cpu_min"] / result["puct"]["moves_cpu_min"])
    print(f"gumbel: moves_per_min_ratio={ratios[0]:.2f}")


if __name__ == "__main__":
    main()
