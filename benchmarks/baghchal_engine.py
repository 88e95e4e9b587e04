"""The `baghchal` library's minimax engine against its numba port: seconds a move on the same
positions at depths 2, 3 and 4, in the same run on one core.

    python -m benchmarks.baghchal_engine [--positions 24] [--seed 1]

Positions come from uniformly random games (library rules), a third in the early placement phase,
a third late in it and a third once every goat is placed (where the games reach it). On each the
library's ``Engine(depth).get_best_move`` and the port (`gocore.play.baghchal_players.ported_best_move`,
the library's root order included) are timed; the port's move and value must be the library's.
The last line is ``baghchal_engine: d2_x=<ratio> d3_x=<ratio> d4_x=<ratio> d4_ms=<ours>``. Needs
the test extras (``pip install baghchal==1.0.1``).
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=24, help="positions timed at each depth")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random games")
    return parser.parse_args()


if __name__ == "__main__":
    ARGS = parse_args()  # --help and usage errors end here, before numba and gocore load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from gocore.play.baghchal_players import library_modules, ported_best_move  # noqa: E402
from gocore.rules.baghchal.notation import move_text  # noqa: E402
from gocore.rules.baghchal.position import LIBRARY_RULES, Position  # noqa: E402

DEPTHS = (2, 3, 4)
PLIES = (8, 31, 50, 9, 30, 51)  # early placement, late placement, movement (40 plies place the goats); both sides
OUR_REPEATS = 20  # the port is timed this many times a position: a single call takes a fraction of a millisecond


def sample_positions(count: int, seed: int) -> list[tuple[Position, list[str]]]:
    """`count` (position, move texts from the start) pairs at the plies of `PLIES` of random games."""
    rng, samples = np.random.default_rng(seed), []
    while len(samples) < count:
        position, texts = Position.initial(LIBRARY_RULES), []
        target = PLIES[len(samples) % len(PLIES)]
        while not position.is_game_over() and position.ply < target:
            action = int(rng.choice(np.flatnonzero(position.legal_moves())))
            texts.append(move_text(position, action))
            position = position.play(action)
        if position.ply == target and not position.is_game_over():
            samples.append((position, texts))
    return samples


def library_board(texts: list[str]) -> object:
    """The library's board after the move texts."""
    board = library_modules()[0].Board()
    for text in texts:
        board.move(text)
    return board


def time_depth(samples: list[tuple[Position, list[str]]], depth: int) -> tuple[float, float]:
    """(library seconds a move, port seconds a move) at `depth`; SystemExit if a move or value differs."""
    engine, library_s, ours_s = library_modules()[1].Engine(depth), 0.0, 0.0
    for position, texts in samples:
        board = library_board(texts)
        started = time.perf_counter()
        theirs = engine.get_best_move(board)
        library_s += time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(OUR_REPEATS):
            ours = ported_best_move(board, position, depth)
        ours_s += (time.perf_counter() - started) / OUR_REPEATS
        if ours != theirs:
            raise SystemExit(f"depth {depth}, {position!r}: the port says {ours}, the library {theirs}")
    return library_s / len(samples), ours_s / len(samples)


def main(args: argparse.Namespace) -> None:
    samples = sample_positions(args.positions, args.seed)
    ported_best_move(library_board(samples[0][1]), samples[0][0], 1)  # compile (or load the cache) first
    ratios = {}
    for depth in DEPTHS:
        library, ours = time_depth(samples, depth)
        ratios[depth] = library / ours
        print(f"depth {depth}: library {library:8.3f} s a move, port {ours * 1000:8.2f} ms a move, "
              f"{ratios[depth]:6.0f}x ({len(samples)} positions, the same moves)")
    print("baghchal_engine: " + " ".join(f"d{depth}_x={ratio:.0f}" for depth, ratio in ratios.items())
          + f" d4_ms={ours * 1000:.2f}")


if __name__ == "__main__":
    main(ARGS)
