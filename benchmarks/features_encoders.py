"""Encoder cost side by side: agz17 vs tactical vs alphago48 (and more), at 9x9 and 19x19.

    python -m benchmarks.features_encoders [--sizes 9 19] [--encoders agz17 tactical alphago48]

For each board size and encoder it prints, in one run on one machine:
- `encode_positions` positions/s in batches of --batch positions (what search pays per leaf);
- the ingest hot path `encode_rows_packed` (encode, all 8 symmetries, bit-pack) in rows/s;
- the `tiny` dual net's own forward pass on the same planes, positions/s (batch --batch);
- ratios: each encoder against agz17, and encoding against the net (encode time / net time per
  position: the share the encoder adds to a search's leaf evaluation).
Positions come from random legal games (moves uniform over legal points): denser in ataris and
short-lived chains than real games, so the tactical readings cost at least as much here.
CPU time, one thread (the machine is shared); the best of --repeats runs after a warm-up.
"""

from __future__ import annotations

import argparse
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--encoders", nargs="+", default=["agz17", "tactical", "alphago48"])
    parser.add_argument("--positions", type=int, default=512, help="positions per size (random games)")
    parser.add_argument("--batch", type=int, default=64, help="positions per encode_positions / net call")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before numba, torch and gocore load

import numpy as np
import torch

from gocore.nn import features, packed
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position, replay_moves

MOVES = {9: 60, 13: 120, 19: 200}  # moves per random game, about a real game's length or less


def random_games(size: int, positions: int, rng: np.random.Generator) -> list[list[int]]:
    """Move lists of random legal games (passes only when forced) holding about `positions` positions."""
    games, total = [], 0
    while total < positions:
        position, moves = Position.initial(size), []
        while len(moves) < MOVES.get(size, 2 * size * size) and not position.is_game_over():
            legal = np.flatnonzero(position.legal_moves()[:-1])
            move = int(rng.choice(legal)) if len(legal) else size * size
            position, moves = position.play(move), moves + [move]
        games.append(moves)
        total += len(moves)
    return games


def positions_of(size: int, games: list[list[int]]) -> list[Position]:
    """The position before each move of each game (Position.play keeps the history)."""
    out = []
    for moves in games:
        position = Position.initial(size)
        for move in moves:
            out.append(position)
            position = position.play(move)
    return out


def best_seconds(fn, repeats: int) -> float:
    """Best CPU time of `repeats` calls after a warm-up (which also compiles numba kernels)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def measure(size: int, encoder: str, positions: list[Position], replays, batch: int, repeats: int) -> dict:
    """positions/s of encode_positions and of the tiny net, rows/s of the packed ingest kernel."""
    batches = [positions[i:i + batch] for i in range(0, len(positions), batch)]
    stones_list, movers_list = [r[0] for r in replays], [r[1] for r in replays]
    encode = best_seconds(lambda: [features.encode_positions(b, encoder) for b in batches], repeats)
    ingest = best_seconds(lambda: packed.encode_games_packed(stones_list, movers_list, encoder, range(8)), repeats)
    torch.manual_seed(0)
    net = build_net(preset("tiny", size, features.get_encoder(encoder).num_planes, encoder=encoder)).eval()
    planes = [torch.from_numpy(features.encode_positions(b, encoder)).float() for b in batches]

    def forward():
        with torch.inference_mode():
            for tensor in planes:
                net(tensor)

    net_seconds = best_seconds(forward, repeats)
    count = len(positions)
    return {"encode": count / encode, "ingest": 8 * count / ingest, "net": count / net_seconds}


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"CPU seconds, one thread, best of {args.repeats}; encode_positions and the tiny dual net in "
          f"batches of {args.batch}; ingest = encode_games_packed with all 8 symmetries")
    for size in args.sizes:
        games = random_games(size, args.positions, rng)
        positions = positions_of(size, games)
        replays = [replay_moves(Position.initial(size), moves) for moves in games]
        results = {e: measure(size, e, positions, replays, args.batch, args.repeats) for e in args.encoders}
        base = results[args.encoders[0]]
        print(f"\n{size}x{size}: {len(positions)} positions of {len(games)} random games")
        print(f"  {'encoder':10s} {'planes':>6s} {'encode pos/s':>13s} {'x' + args.encoders[0]:>9s} "
              f"{'ingest rows/s':>14s} {'x' + args.encoders[0]:>9s} {'tiny net pos/s':>15s} {'encode/net':>11s}")
        for name, r in results.items():
            planes = features.get_encoder(name).num_planes
            print(f"  {name:10s} {planes:6d} {r['encode']:13,.0f} {r['encode'] / base['encode']:9.2f} "
                  f"{r['ingest']:14,.0f} {r['ingest'] / base['ingest']:9.2f} {r['net']:15,.0f} "
                  f"{r['net'] / r['encode']:10.0%}")


if __name__ == "__main__":
    main()
