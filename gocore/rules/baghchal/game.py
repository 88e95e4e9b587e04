"""Baghchal through the game boundary (`gocore.rules.game.Game`): what search, self-play, matches
and the loop ask of the game, answered by `position`, `geometry` and `notation`.

Values are from the side to move's view; a draw (repetition, the ply cap) is 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gocore.rules.baghchal import geometry, notation
from gocore.rules.baghchal.position import DEFAULT_RULES, BaghchalRules, Position


class BaghchalGame:
    """Baghchal under one set of rules (`BaghchalRules`)."""

    name = "baghchal"
    board_size = geometry.SIZE
    num_actions = geometry.NUM_ACTIONS
    players = ("Goat", "Tiger")  # to_play +1, -1

    def __init__(self, rules: BaghchalRules = DEFAULT_RULES):
        self.rules = rules

    def initial(self) -> Position:
        """The start: tigers on the corners, Goat to place."""
        return Position.initial(self.rules)

    def legal_masks(self, positions: Sequence[Position]) -> np.ndarray:
        """(B, A) bool: the legal actions of each position (none in a finished game)."""
        return np.stack([position.legal_moves() for position in positions])

    def candidate_masks(self, positions: Sequence[Position], sensible: bool = True,
                        pass_when_settled: bool = False) -> np.ndarray:
        """(B, A) bool: what a search expands: every legal action (Go's sensible-move and pass
        options have no meaning here)."""
        return self.legal_masks(positions)

    def terminal_value(self, position: Position, max_moves: int | None) -> float | None:
        """+1/-1/0 for the side to move if the game is over (by the rules, or at `max_moves`
        plies when a search sets a cap of its own: a draw), else None."""
        if position.is_game_over():
            return float(position.winner * position.to_play)
        if max_moves is not None and position.ply >= max_moves:
            return 0.0
        return None

    def winner(self, position: Position) -> int | None:
        """+1 Goat, -1 Tiger, 0 a draw, None while the game goes on."""
        return position.winner

    def is_over(self, position: Position) -> bool:
        """True once the game has ended by any rule (the ply cap of the rules included)."""
        return position.is_game_over()

    def opening_mask(self, position: Position) -> np.ndarray:
        """(A,) bool: every legal action (a random opening may play any of them)."""
        return position.legal_moves()

    def action_permutation(self, k: int) -> np.ndarray:
        """(A,) int: action a under symmetry k (`gocore.rules.symmetry`'s numbering)."""
        return geometry.action_permutation(k)

    def move_text(self, position: Position, action: int) -> str:
        """The library's text of `action` for the side to move (G33, B1122, Bx1133)."""
        return notation.move_text(position, action)

    def action_of_text(self, position: Position, text: str) -> int:
        """The action a move text names for the side to move (RecordError if none)."""
        return notation.action_of_text(position, text)

    def board_text(self, position: Position) -> str:
        """The board with its lines, and whose turn it is (or the result)."""
        return notation.board_text(position)


BAGHCHAL = BaghchalGame()
