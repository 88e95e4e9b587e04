"""Games between two players, scored by Tromp-Taylor area.

`play_game` is the loop every match, self-play run and demo uses: alternate `select_move`,
refuse nothing silently (an illegal move loses the game for its player, with the reason).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gocore.agents import Agent
from gocore.board import IllegalMove, Position


@dataclass(frozen=True)
class GameResult:
    """How a game went: moves (colour, move), final position, winner and the reason it ended."""

    moves: list[tuple[int, int]]
    final: Position
    winner: int  # +1 black, -1 white, 0 jigo
    result: str  # SGF RE text, e.g. "B+3.5", "W+R" (illegal move), "0"
    reason: str  # "two-passes", "move-cap", "illegal-move: <detail>"


def play_game(black: Agent, white: Agent, size: int = 9, komi: float = 7.5,
              max_moves: int | None = None,
              on_move: Callable[[Position, int], None] | None = None) -> GameResult:
    """Play one game; `on_move(position_after, move)` is called after every move."""
    position = Position.initial(size, komi)
    cap = 3 * size * size if max_moves is None else max_moves
    moves: list[tuple[int, int]] = []
    while not position.is_game_over() and len(moves) < cap:
        color = position.to_play
        move = (black if color == 1 else white).select_move(position)
        try:
            position = position.play(move)
        except IllegalMove as error:
            winner = -color
            return GameResult(moves, position, winner, f"{'B' if winner == 1 else 'W'}+F",
                              f"illegal-move: {error}")
        moves.append((color, move))
        if on_move is not None:
            on_move(position, move)
    score = position.score()
    winner = 1 if score > 0 else -1 if score < 0 else 0
    reason = "two-passes" if position.is_game_over() else "move-cap"
    return GameResult(moves, position, winner, position.result(), reason)
