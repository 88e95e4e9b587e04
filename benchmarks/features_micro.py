"""Speed probe for gocore.nn.features and gocore.nn.packed: games/s of encoding, 8x augmentation and bit packing.

    python -m benchmarks.features_micro [--size 9] [--games 256] [--moves 60]   (or: python benchmarks/features_micro.py)

Prints the numba hot path (`encode_games_packed`) next to the numpy path it must equal
(`encode_games` → `augment` → `pack_planes`) and, for context, `replay_moves` on the same games.
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--games", type=int, default=256)
    parser.add_argument("--moves", type=int, default=60)
    parser.add_argument("--encoder", default="agz17")
    parser.add_argument("--repeats", type=int, default=5)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before numba and gocore load

import numpy as np

from gocore.nn import features, packed
from gocore.rules import symmetry
from gocore.rules.board import Position, replay_moves


def random_moves(size: int, count: int, rng: np.random.Generator) -> list[int]:
    """A legal random move list (passes only when forced), via the Position API."""
    position, moves = Position.initial(size), []
    while len(moves) < count and not position.is_game_over():
        legal = np.flatnonzero(position.legal_moves()[:-1])
        move = int(rng.choice(legal)) if len(legal) else size * size
        position, moves = position.play(move), moves + [move]
    return moves


def best_seconds(fn, repeats: int) -> float:
    """Best CPU time of `repeats` calls after a warm-up (CPU, not wall: the machine is shared)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    args = parse_args()
    rng = np.random.default_rng(0)
    start = Position.initial(args.size)
    move_lists = [random_moves(args.size, args.moves, rng) for _ in range(args.games)]
    replays = [replay_moves(start, moves) for moves in move_lists]
    stones_list, movers_list = [r[0] for r in replays], [r[1] for r in replays]
    all_moves = np.concatenate([np.asarray(m, dtype=np.int64) for m in move_lists])
    all8 = symmetry.SYMMETRIES

    def numpy_path():
        planes = features.encode_games(stones_list, movers_list, args.encoder)
        augmented, _ = features.augment(planes, all_moves, all8, args.size)
        return features.pack_planes(augmented)

    def numba_path():
        packed.encode_games_packed(stones_list, movers_list, args.encoder, all8)
        return features.augment_moves(all_moves, all8, args.size)

    row_symmetries = rng.integers(0, 8, size=len(all_moves))

    def numpy_random1():
        planes = features.encode_games(stones_list, movers_list, args.encoder)
        return features.pack_planes(features.transform_rows(planes, all_moves, row_symmetries, args.size)[0])

    cases = {
        "replay_moves (context)": lambda: [replay_moves(start, m) for m in move_lists],
        "encode_games (numpy, unpacked, no aug)": lambda: features.encode_games(
            stones_list, movers_list, args.encoder),
        "numpy: encode_games+augment(all8)+pack": numpy_path,
        "numba: encode_games_packed(all8)+augment_moves": numba_path,
        "numpy: encode_games+transform_rows(random1)+pack": numpy_random1,
        "numba: encode_rows_packed(random1)": lambda: packed.encode_rows_packed(
            stones_list, movers_list, args.encoder, np.arange(len(all_moves)), row_symmetries),
    }
    rows_packed = packed.encode_games_packed(stones_list, movers_list, args.encoder, all8)
    assert np.array_equal(rows_packed, numpy_path()), "the numba hot path disagrees with the numpy path"
    rows = len(all_moves)
    print(f"{args.games} games of {args.size}x{args.size}, {rows / args.games:.1f} moves/game, "
          f"encoder {args.encoder}; best of {args.repeats}")
    for name, fn in cases.items():
        seconds = best_seconds(fn, args.repeats)
        print(f"  {name:48s} {args.games / seconds:10,.0f} games/s  {1e6 * seconds / args.games:8.1f} us/game"
              f"  {rows / seconds / 1e6:6.2f} M positions/s")


if __name__ == "__main__":
    main()
