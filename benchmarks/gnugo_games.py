"""GNU Go self-play speed: finished games per hour per core, at each level asked, one worker.

    python -m benchmarks.gnugo_games [--levels 1 10] [--games 20 3] [--size 9]

Each game is what ``gozero ingest gnugo-9x9:level=L,games=N`` plays (`play_gnugo_game`: two GNU Go
processes, a random 4-move opening, Tromp-Taylor count), one after another on one worker: both
engines run in turn, never together. ``games_per_hour_per_core`` is 3600 / the CPU seconds a game
costs (the engines' and this process's), what one dedicated core yields; ``games_per_hour_wall``
is what this run got from the wall clock, lower when other processes share the cores.
One line per level: ``gnugo_games: level=<L> size=<N> games=<n> games_per_hour_per_core=<n> ...``.
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 10], help="GNU Go levels, 0..10")
    parser.add_argument("--games", type=int, nargs="+", default=[20, 3],
                        help="games per level (one number for all, or one per level)")
    parser.add_argument("--size", type=int, default=9, help="board size")
    parser.add_argument("--seed", type=int, default=1, help="base seed of the games")
    args = parser.parse_args()
    if len(args.games) not in (1, len(args.levels)):
        parser.error("--games takes one number, or one per level")
    return args


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    ARGS = parse_args()  # --help and usage errors end here, before numba and gocore load

from gocore.play.gnugo_games import GnugoGameConfig, play_gnugo_game  # noqa: E402


def measure(config: GnugoGameConfig, games: int) -> dict[str, float]:
    """Wall and CPU seconds (ours + the engines') of `games` games played one after another."""
    play_gnugo_game(GnugoGameConfig(size=config.size, level=0, seed=10**6), 0)  # warm: numba, imports
    start_wall, start_cpu = time.perf_counter(), os.times()
    moves = sum(len(play_gnugo_game(config, index).moves) for index in range(games))
    wall, end_cpu = time.perf_counter() - start_wall, os.times()
    cpu = sum(getattr(end_cpu, name) - getattr(start_cpu, name)
              for name in ("user", "system", "children_user", "children_system"))
    return {"wall": wall, "cpu": cpu, "moves": moves}


def main(args: argparse.Namespace) -> None:
    """Measure every level asked and print one line each."""
    counts = args.games * len(args.levels) if len(args.games) == 1 else args.games
    for level, games in zip(args.levels, counts):
        config = GnugoGameConfig(size=args.size, level=level, seed=args.seed)
        result = measure(config, games)
        print(f"gnugo_games: level={level} size={args.size} games={games} "
              f"games_per_hour_per_core={3600 * games / result['cpu']:.0f} "
              f"games_per_hour_wall={3600 * games / result['wall']:.0f} "
              f"cpu_s_per_game={result['cpu'] / games:.2f} wall_s_per_game={result['wall'] / games:.2f} "
              f"moves_per_game={result['moves'] / games:.1f}", flush=True)


if __name__ == "__main__":
    main(ARGS)
