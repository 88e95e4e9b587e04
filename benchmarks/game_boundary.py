"""What the game boundary costs Go's search: the search as it is (through `gocore.rules.game.GO`)
against the same search with the code from before the boundary pasted back, in one process.

    python -m benchmarks.game_boundary [--games 50] [--sims 32] [--moves 3] [--rounds 6]

Self-play's CPU side on 9x9 as `benchmarks.feed` measures it (`feed.FreeNet`: NetEvaluator's encode,
masks and softmax with a forward pass that costs nothing), `games` games in lockstep searching
`moves` moves each, PUCT and Gumbel. The two versions alternate round by round (the order flipping
each round), so the machine's load falls on both alike; simulations per CPU-second, medians. The
last line is ``game_boundary: puct=<ratio> gumbel=<ratio>`` (through the boundary / before; issue
#37: Go's speed within noise).
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="games searched in lockstep")
    parser.add_argument("--sims", type=int, default=32, help="simulations per move")
    parser.add_argument("--moves", type=int, default=3, help="moves searched per game and round")
    parser.add_argument("--rounds", type=int, default=6, help="timed runs of each version")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    ARGS = parse_args()

import numpy as np
import torch

from benchmarks.feed import ENCODER, Clock, FreeNet, random_starts
from gocore.nn import features
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position, candidate_masks
from gocore.search.gumbel import GumbelConfig, GumbelSearch
from gocore.search.mcts import SELFPLAY, BatchedSearch, MCTSConfig, terminal_value
from gocore.search.tree import Node

SIZE = 9


class BeforeBoundary:
    """`BatchedSearch`'s two methods as they were before the game boundary."""

    def _new_node(self, position: Position, parent: Node | None, move: int) -> Node:
        cap = self.config.max_moves_for(position.size)
        return Node(position, parent, move, terminal_value(position, cap))

    def _candidates(self, positions: list[Position]) -> np.ndarray:
        return candidate_masks(positions, self.config.sensible_moves, self.config.pass_when_settled)


class BeforePUCT(BeforeBoundary, BatchedSearch):
    pass


class BeforeGumbel(BeforeBoundary, GumbelSearch):
    pass


def sims_per_cpu_second(search_class: type, starts: list[Position], config: MCTSConfig, moves: int,
                        **options: object) -> float:
    """Simulations per CPU-second of `moves` lockstep searches of every game."""
    torch.manual_seed(0)
    net = build_net(preset("tiny", SIZE, features.get_encoder(ENCODER).num_planes, encoder=ENCODER))
    search = search_class(FreeNet(net, Clock()), config, starts, seed=0, **options)
    games = list(range(len(starts)))
    started = time.process_time()
    for _ in range(moves):
        for game, result in zip(games, search.search(games)):
            search.advance(game, result.move)
    return config.sims * len(games) * moves / (time.process_time() - started)


def main(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    starts = random_starts(SIZE, args.games, np.random.default_rng(0))
    config = SELFPLAY.replace(sims=args.sims)
    ratios = {}
    for name, before, after, options in (("puct", BeforePUCT, BatchedSearch, {}),
                                         ("gumbel", BeforeGumbel, GumbelSearch, {"gumbel": GumbelConfig()})):
        sims_per_cpu_second(after, starts, config, 1, **options)  # compile the kernels outside the timing
        rates: dict[type, list[float]] = {before: [], after: []}
        for round_ in range(args.rounds):
            for version in ((before, after) if round_ % 2 == 0 else (after, before)):
                rates[version].append(sims_per_cpu_second(version, starts, config, args.moves, **options))
        was, now = float(np.median(rates[before])), float(np.median(rates[after]))
        ratios[name] = now / was
        print(f"{name:7s} before the boundary {was:9,.0f} sims/CPU-s   through it {now:9,.0f}   ratio {now / was:.3f}")
    print("game_boundary: " + " ".join(f"{name}={ratio:.3f}" for name, ratio in ratios.items()))


if __name__ == "__main__":
    main(ARGS)
