"""The match loop's own cost: Go and Baghchal match games between two random players, no search.

    python -m benchmarks.match_loop [--go-games 1500] [--baghchal-games 3000]

Each game goes through its game's `play_match_game` (Go: 9x9, a 2-move paired opening, the
Tromp-Taylor count; Baghchal: the library's rules, a 2-ply paired opening), so what is timed is the
loop every match and gate plays: forfeit guards, hooks, openings, scoring. Search costs hundreds of
times more per move in a real match; this benchmark is for comparing two versions of the loop side
by side (e.g. ``farm-bench --vs "env PYTHONPATH=<old tree> python benchmarks/match_loop.py" --
env PYTHONPATH=<new tree> python benchmarks/match_loop.py``: the script imports only names both
versions have). The last line is ``match_loop: go_cpu_s=<s> go_games=<n> baghchal_cpu_s=<s>
baghchal_games=<n>``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np


class RandomBaghchal:
    """Uniformly random among the legal actions."""

    def __init__(self, seed: int):
        self.rng, self.name = np.random.default_rng(seed), "random"

    def select_move(self, position: Any) -> int:
        return int(self.rng.choice(np.flatnonzero(position.legal_moves())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--go-games", type=int, default=1500)
    parser.add_argument("--baghchal-games", type=int, default=3000)
    args = parser.parse_args()
    from gocore.play import baghchal_match, match
    from gocore.search.agents import RandomAgent

    started = time.process_time()
    config = match.MatchConfig(size=9, opening=2)
    for index in range(args.go_games):
        match.play_match_game(index, RandomAgent(seed=index), RandomAgent(seed=index + 10**6), config, ("a", "b"))
    go = time.process_time() - started
    started = time.process_time()
    rules = baghchal_match.BaghchalMatchConfig()
    for index in range(args.baghchal_games):
        baghchal_match.play_match_game(index, RandomBaghchal(index), RandomBaghchal(index + 10**6), rules, ("a", "b"))
    baghchal = time.process_time() - started
    print(f"match_loop: go_cpu_s={go:.2f} go_games={args.go_games} baghchal_cpu_s={baghchal:.2f} "
          f"baghchal_games={args.baghchal_games}")


if __name__ == "__main__":
    main()
