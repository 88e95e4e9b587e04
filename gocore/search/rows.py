"""Training rows of self-play games, for any game of the boundary (`gocore.rules.game.Game`).

Both games' self-play (`gocore.search.selfplay` for Go, `gocore.search.baghchal_selfplay`) turn
their finished games into rows through these functions; only the input planes are the game's own
(Go's bit-packed encoder planes, Baghchal's piece masks), as the boundary puts them in `gocore.nn`:

- `recorded_moves`: which moves make a row, the fully searched ones of the playout cap (every move
  of a game that kept no record of search kinds); fast searches make none;
- `value_targets`: z of each row, from the mover's view: +1 the side to move won, -1 it lost and
  **0 a draw** (Go's jigo, Baghchal's repetition and ply cap);
- `symmetric_policies`: a row's policy target under one of the 8 symmetries of the square, moved by
  the game's `action_permutation` (Baghchal stores all 8; Go's loader applies one per row when it
  reads, on the device);
- `id_columns`: the game id, generation and model version of every row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gocore.rules.game import Game


def recorded_moves(full: Sequence[bool], moves: int) -> np.ndarray:
    """(moves,) bool: the moves of a game that make training rows, its full searches (`full`, one
    flag per move), or every move when the game recorded no flags."""
    if not len(full):
        return np.ones(moves, dtype=bool)
    if len(full) != moves:
        raise ValueError(f"{len(full)} search flags for {moves} moves")
    return np.asarray(full, dtype=bool)


def value_targets(winners: np.ndarray, movers: np.ndarray) -> np.ndarray:
    """(R,) int8: each row's z from its mover's view (`winners` and `movers` (R,): +1 the first
    player, -1 the second, winner 0 a draw): +1 won, -1 lost, 0 drawn."""
    return (np.asarray(winners, np.int8) * np.asarray(movers, np.int8)).astype(np.int8)


def symmetric_policies(game: Game, policies: np.ndarray, k: int) -> np.ndarray:
    """(B, A): each policy's probability of action a moved to a's image under symmetry k."""
    out = np.empty_like(policies)
    out[:, game.action_permutation(k)] = policies
    return out


def id_columns(game_ids: Sequence[str], counts: Sequence[int], generation: int,
               model_version: str) -> dict[str, np.ndarray]:
    """game_id, generation and model_version columns of rows that come `counts[i]` from game i."""
    if len(game_ids) != len(counts):
        raise ValueError(f"{len(counts)} games but {len(game_ids)} ids")
    rows = int(sum(counts))
    return {"game_id": np.repeat(np.asarray(game_ids, dtype=object), counts),
            "generation": np.full(rows, generation, np.int32),
            "model_version": np.full(rows, model_version, dtype=object)}
