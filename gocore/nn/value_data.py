"""AlphaGo's value-net training data: one position per game, so that positions of one game, which
share its outcome, cannot be memorised together (Silver et al. 2016, Methods, "Reinforcement
learning of value networks").

Per game: draw U uniformly from 0 .. max_u − 1 (the game's plausible length; N*N by default), play
moves 0 .. U−1 by sampling the SL policy, move U uniformly at random among the candidate moves,
then the RL policy to the end. The one row is s_{U+1}, the position after the random move, with
target z = the final outcome for the side to move there (+1 it won). A game that ends before move
U (two passes) gives its final position instead, with that position's side to move (counted in
`ended_early`). Games run in lockstep: one call of each net per move number.

`value_columns` turns the samples into the self-play row columns (storage.schemas.SELFPLAY_SCHEMA),
so the supervised trainer reads them as it reads self-play; `pi` is one-hot on the move played at
s_{U+1} (the RL policy's), which the value objective does not read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gocore.nn import features, position_planes
from gocore.nn.nets import GoNet
from gocore.nn.reinforce import is_finished, sample_moves
from gocore.rules.board import Position, candidate_moves


@dataclass(frozen=True)
class ValueSamples:
    """One sampled position per game and its outcome."""

    positions: list[Position]  # s_{U+1} of each game
    z: np.ndarray  # (n,) int8: +1 the side to move at s_{U+1} won the game, -1 lost, 0 jigo
    u: np.ndarray  # (n,) int64: the move number of the random move
    next_moves: np.ndarray  # (n,) int64: the move played at s_{U+1} (pass if the game ended there)
    lengths: np.ndarray  # (n,) int64: moves in each game
    winners: np.ndarray  # (n,) int8: +1 black won the game, -1 white, 0 jigo
    ended_early: int  # games that ended before their move U (their final position is the sample)


def value_samples(sl: GoNet, rl: GoNet, games: int, size: int, komi: float, rng: np.random.Generator,
                  max_u: int | None = None, max_moves: int | None = None) -> ValueSamples:
    """`games` games of SL moves, one random move at U, then RL moves; one sample per game."""
    cap = max_moves or 3 * size * size
    u = rng.integers(0, max_u or size * size, size=games)  # (n,)
    positions = [Position.initial(size, komi)] * games
    samples: list[Position | None] = [None] * games
    next_moves = np.full(games, size * size, np.int64)
    while any(not is_finished(p, cap) for p in positions):
        running = [g for g in range(games) if not is_finished(positions[g], cap)]
        moves = _moves(running, positions, u, sl, rl, rng)
        for g in running:
            if positions[g].move_number == u[g] + 1:
                next_moves[g] = moves[g]
            positions[g] = positions[g].play(moves[g])
            if positions[g].move_number == u[g] + 1:
                samples[g] = positions[g]
    early = [g for g in range(games) if samples[g] is None]
    for g in early:
        samples[g] = positions[g]
    sampled = [p for p in samples if p is not None]
    winners = np.sign([p.score() for p in positions])  # (n,) +1 black won
    z = np.array([w * s.to_play for w, s in zip(winners, sampled)], np.int8)
    return ValueSamples(sampled, z, u.astype(np.int64), next_moves, np.array([p.move_number for p in positions]),
                        winners.astype(np.int8), len(early))


def _moves(running: list[int], positions: list[Position], u: np.ndarray, sl: GoNet, rl: GoNet,
           rng: np.random.Generator) -> dict[int, int]:
    """The next move of every running game: SL before U, a random candidate at U, RL after."""
    chosen: dict[int, int] = {}
    for net, phase in ((sl, -1), (rl, 1)):
        group = [g for g in running if np.sign(positions[g].move_number - u[g]) == phase]
        if group:
            moves, _ = sample_moves(net, [positions[g] for g in group], rng)
            chosen.update(zip(group, (int(m) for m in moves)))
    for g in running:
        if positions[g].move_number == u[g]:
            chosen[g] = int(rng.choice(np.flatnonzero(candidate_moves(positions[g]))))
    return chosen


def value_columns(samples: ValueSamples, game_ids: list[str], *, encoder: str, generation: int,
                  model_version: str) -> dict[str, np.ndarray]:
    """SELFPLAY_SCHEMA columns: one row per game (planes of s_{U+1}, one-hot pi, z)."""
    rows = len(samples.positions)
    if rows != len(game_ids) or rows == 0:
        raise ValueError(f"{rows} samples but {len(game_ids)} game ids")
    size = samples.positions[0].size
    pi = np.zeros((rows, size * size + 1), np.float32)
    pi[np.arange(rows), samples.next_moves] = 1.0
    return {
        "encoder": np.full(rows, features.get_encoder(encoder).name, dtype=object),
        "size": np.full(rows, size, np.int8),
        "planes": features.pack_planes(position_planes.encode_batch(samples.positions, encoder)),
        "pi": pi,
        "z": samples.z.astype(np.int8),
        "game_id": np.asarray(game_ids, dtype=object),
        "move_number": np.array([p.move_number for p in samples.positions], np.int16),
        "generation": np.full(rows, generation, np.int32),
        "model_version": np.full(rows, model_version, dtype=object),
        "symmetry": np.zeros(rows, np.int8),
        "komi": np.full(rows, samples.positions[0].komi, np.float32),
    }
