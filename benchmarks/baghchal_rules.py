"""Baghchal rules speed: random playouts per second, ours against the `baghchal` library's own move
generation, in the same run on one core.

    python -m benchmarks.baghchal_rules [--seconds 10] [--playouts 200000]

Three figures: the library's uniformly random games (``possible_moves`` -> ``move`` until
``is_game_over``, pure Python), ours through the Python `Position` API (a legal mask and a new
position per ply), and ours in one numba kernel call (`position.random_playouts`). The last line is
``baghchal_rules: kernel_x_library=<ratio> position_x_library=<ratio> kernel_playouts_per_s=<n>``
(issue #37's target: at least 100x). Needs the test extras (``pip install baghchal==1.0.1``).
"""

from __future__ import annotations

import argparse
import os
import random
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="time spent on each Python-level player")
    parser.add_argument("--playouts", type=int, default=200_000, help="kernel playouts to time")
    return parser.parse_args()


if __name__ == "__main__":
    ARGS = parse_args()  # --help and usage errors end here, before numba and gocore load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from gocore.rules.baghchal.position import LIBRARY_RULES, Position, random_playouts  # noqa: E402


def library_board() -> type:
    """The library's Board class (its import changes the working directory: put it back)."""
    cwd = os.getcwd()
    try:
        from baghchal.env import Board
    except ImportError:
        raise SystemExit("the library is a test dependency: pip install baghchal==1.0.1") from None
    finally:
        os.chdir(cwd)
    return Board


def library_playouts(seconds: float, seed: int) -> tuple[float, float]:
    """(playouts/s, plies per game) of the library's random games for about `seconds`."""
    board_class, rng = library_board(), random.Random(seed)
    games = plies = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        board = board_class()
        while not board.is_game_over():
            board.move(rng.choice(sorted(board.possible_moves())))
            plies += 1
        games += 1
    return games / (time.perf_counter() - started), plies / games


def position_playouts(seconds: float, seed: int) -> tuple[float, float]:
    """(playouts/s, plies per game) of random games through our Python `Position` API."""
    rng = np.random.default_rng(seed)
    games = plies = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        position = Position.initial(LIBRARY_RULES)
        while not position.is_game_over():
            position = position.play(int(rng.choice(np.flatnonzero(position.legal_moves()))))
            plies += 1
        games += 1
    return games / (time.perf_counter() - started), plies / games


def kernel_playouts(count: int, seed: int) -> tuple[float, float]:
    """(playouts/s, plies per game) of one `random_playouts` call of `count` games (compiled first)."""
    start = Position.initial(LIBRARY_RULES)
    random_playouts(start, 10, seed)  # compile (or load the cache) outside the timing
    started = time.perf_counter()
    _, plies, _ = random_playouts(start, count, seed)
    return count / (time.perf_counter() - started), float(plies.mean())


def main(args: argparse.Namespace) -> None:
    library, library_plies = library_playouts(args.seconds, seed=1)
    print(f"library random games:      {library:10.0f} playouts/s ({library_plies:.1f} plies a game)")
    ours, ours_plies = position_playouts(args.seconds, seed=1)
    print(f"ours, Position API:        {ours:10.0f} playouts/s ({ours_plies:.1f} plies a game)")
    kernel, kernel_plies = kernel_playouts(args.playouts, seed=1)
    print(f"ours, numba kernel:        {kernel:10.0f} playouts/s ({kernel_plies:.1f} plies a game)")
    print(f"baghchal_rules: kernel_x_library={kernel / library:.0f} position_x_library={ours / library:.1f} "
          f"kernel_playouts_per_s={kernel:.0f}")


if __name__ == "__main__":
    main(ARGS)
