"""Helpers shared by tests: ASCII boards and random legal games."""

from __future__ import annotations

import numpy as np

from gocore.board import Position


def position_from_ascii(diagram: str, to_play: int = 1, komi: float = 7.5) -> Position:
    """Position from rows of X (black), O (white) and . (empty); the one way tests draw boards."""
    return Position.from_ascii(diagram, to_play=to_play, komi=komi)


def random_game(size: int, rng: np.random.Generator, max_moves: int | None = None,
                komi: float = 7.5) -> tuple[list[int], Position]:
    """A random game of legal moves (passes only when forced or at the cap); returns (moves, final)."""
    position = Position.initial(size, komi)
    moves: list[int] = []
    cap = max_moves if max_moves is not None else 2 * size * size
    while len(moves) < cap and not position.is_game_over():
        legal = np.flatnonzero(position.legal_moves()[:-1])
        move = int(rng.choice(legal)) if len(legal) else size * size
        position = position.play(move)
        moves.append(move)
    return moves, position
