"""Rules-engine speed, side by side with sgfmill on the same random 9x9 games, one core.

    python -m benchmarks.rules [--games 400] [--playouts 40000]   (or: python benchmarks/rules.py)

Prints each figure and the ratios; the last line is
``rules: replay_x_sgfmill=<ratio> playouts_per_s=<n>`` (targets: >= 50x and >= 40,000/s).
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="random 9x9 games to replay")
    parser.add_argument("--playouts", type=int, default=40000, help="random playouts to time")
    return parser.parse_args()


if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before numba and gocore load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sgfmill import boards  # noqa: E402

from gocore.rules.board import Position, random_playouts, replay_moves  # noqa: E402
from gocore.rules.coords import to_rowcol  # noqa: E402

SIZE = 9


def random_games(count: int, seed: int) -> list[list[int]]:
    """Move lists of random legal games (passes only when forced), through the public API."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        position, moves = Position.initial(SIZE), []
        while not position.is_game_over() and len(moves) < 2 * SIZE * SIZE:
            legal = np.flatnonzero(position.legal_moves()[:-1])
            move = int(rng.choice(legal)) if len(legal) else SIZE * SIZE
            position = position.play(move)
            moves.append(move)
        games.append(moves)
    return games


def best_of(repeats: int, fn) -> float:
    """Shortest wall time of `repeats` calls: the least disturbed measurement."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def sgfmill_replay(games: list[list[int]]) -> None:
    for moves in games:
        board = boards.Board(SIZE)
        for i, move in enumerate(moves):
            rowcol = to_rowcol(move, SIZE)
            if rowcol is not None:
                board.play(SIZE - 1 - rowcol[0], rowcol[1], "b" if i % 2 == 0 else "w")


def ours_replay(games: list[np.ndarray]) -> None:
    start = Position.initial(SIZE)
    for moves in games:
        replay_moves(start, moves)


def ours_play(games: list[list[int]]) -> None:
    for moves in games:
        position = Position.initial(SIZE)
        for move in moves:
            position = position.play(move)


def main() -> None:
    args = parse_args()

    games = random_games(args.games, seed=7)
    arrays = [np.asarray(g, dtype=np.int64) for g in games]
    total_moves = sum(len(g) for g in games)
    ours_replay(arrays[:2])  # compile / load the numba cache before timing
    random_playouts(Position.initial(SIZE), 10)

    t_sgfmill = best_of(3, lambda: sgfmill_replay(games))
    t_replay = best_of(3, lambda: ours_replay(arrays))
    t_play = best_of(3, lambda: ours_play(games))
    t_playouts = best_of(3, lambda: random_playouts(Position.initial(SIZE), args.playouts, seed=11))

    sgfmill_rate, replay_rate, play_rate = (total_moves / t for t in (t_sgfmill, t_replay, t_play))
    playout_rate = args.playouts / t_playouts
    print(f"games: {len(games)} random 9x9, {total_moves} moves ({total_moves / len(games):.0f}/game)")
    print(f"sgfmill Board.play replay      {sgfmill_rate:>12,.0f} moves/s")
    print(f"gozero replay_moves (kernel)   {replay_rate:>12,.0f} moves/s   x{replay_rate / sgfmill_rate:.1f} sgfmill")
    print(f"gozero Position.play (API)     {play_rate:>12,.0f} moves/s   x{play_rate / sgfmill_rate:.2f} sgfmill")
    print(f"gozero random playouts         {playout_rate:>12,.0f} playouts/s (libego, C: ~93,000/s here)")
    print(f"rules: replay_x_sgfmill={replay_rate / sgfmill_rate:.1f} playouts_per_s={playout_rate:.0f}")


if __name__ == "__main__":
    main()
