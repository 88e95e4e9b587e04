"""The game boundary: the few things search, self-play, matches and the zero loop ask of a game.

A `Game` answers, for its positions (immutable values with ``play(action)``, ``play_leaf(action)``,
``to_play`` (+1 the first player, -1 the second), ``move_number`` and ``size``):

- `num_actions` (the policy's length A), `initial`, `legal_masks` and `candidate_masks` (B, A);
- `terminal_value` (+1/-1/0 for the side to move once the game is over; a draw is 0) and `winner`;
- `action_permutation(k)`, the 8 symmetries of the square on actions (planes move by
  `gocore.rules.symmetry.apply`);
- `move_text` / `action_of_text` and `board_text`, the game's notation for people and records;
- `is_over` (the game has ended by its rules) and `opening_mask`, the actions a match's random
  opening draws from (`gocore.play.game_match.random_actions`). A player resigns in any game by
  answering `RESIGN`.

Input planes are the other half of the boundary, in `gocore.nn` (it may not be imported here): Go's
encoders in `gocore.nn.features`, Baghchal's in `gocore.nn.baghchal_planes`.

Both games' self-play runs through one lockstep driver over this boundary
(`gocore.search.lockstep.play_lockstep`), their rows' targets through one core
(`gocore.search.rows`: recorded moves, z with draws 0, policy symmetries, ids), their matches
through `gocore.play.game_match` and their loops through `flows.loop_driver`; what a game records
per move and its rows' planes stay with the game (`gocore.search.selfplay`,
`gocore.search.baghchal_selfplay`).

Go (`GO`) answers with `gocore.rules.board`'s batched kernels exactly as `gocore.search.mcts` called
them before the boundary existed, so its search keeps its speed; Baghchal is
`gocore.rules.baghchal.game.BAGHCHAL`. `game_named` finds either by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from gocore.rules import coords, symmetry
from gocore.rules.baghchal.game import BAGHCHAL, BaghchalGame
from gocore.rules.board import Position, candidate_masks, legal_masks

RESIGN = -1  # what a player's select_move returns to resign, in any game (an action is otherwise >= 0)
OPENING_MARGIN = 2  # Go's opening moves keep off the first two lines (boards of 7 and up)


class Game(Protocol):
    """What a game offers search, self-play, matches and the loop (see the module doc)."""

    name: str
    board_size: int  # N of the (C, N, N) input planes

    def initial(self) -> Any: ...

    def legal_masks(self, positions: Sequence[Any]) -> np.ndarray: ...

    def candidate_masks(self, positions: Sequence[Any], sensible: bool = True,
                        pass_when_settled: bool = False) -> np.ndarray: ...

    def terminal_value(self, position: Any, max_moves: int | None) -> float | None: ...

    def winner(self, position: Any) -> int | None: ...

    def is_over(self, position: Any) -> bool: ...

    def opening_mask(self, position: Any) -> np.ndarray: ...

    def action_permutation(self, k: int) -> np.ndarray: ...

    def move_text(self, position: Any, action: int) -> str: ...

    def action_of_text(self, position: Any, text: str) -> int: ...

    def board_text(self, position: Any) -> str: ...


def go_terminal_value(position: Position, max_moves: int) -> float | None:
    """+1/-1/0 (Tromp-Taylor result for the side to move) if the game is over, else None."""
    if not position.is_game_over() and position.move_number < max_moves:
        return None
    return float(np.sign(position.score() * position.to_play))


class GoGame:
    """Go on an N x N board with komi, over `gocore.rules.board`."""

    name = "go"
    players = ("Black", "White")

    def __init__(self, size: int = 9, komi: float = 7.5):
        self.board_size, self.komi = size, komi
        self.num_actions = size * size + 1

    def initial(self) -> Position:
        return Position.initial(self.board_size, self.komi)

    def legal_masks(self, positions: Sequence[Position]) -> np.ndarray:
        return legal_masks(positions)

    def candidate_masks(self, positions: Sequence[Position], sensible: bool = True,
                        pass_when_settled: bool = False) -> np.ndarray:
        """(B, N*N+1) bool: `board.candidate_masks` (no own-eye filling, pass when settled)."""
        return candidate_masks(positions, sensible, pass_when_settled)

    def terminal_value(self, position: Position, max_moves: int | None) -> float | None:
        """Scored by Tromp-Taylor after two passes or at the cap (default 3*N*N moves)."""
        cap = 3 * position.size * position.size if max_moves is None else max_moves
        return go_terminal_value(position, cap)

    def winner(self, position: Position) -> int | None:
        return int(np.sign(position.score())) if position.is_game_over() else None

    def is_over(self, position: Position) -> bool:
        """True after two passes in a row."""
        return position.is_game_over()

    def opening_mask(self, position: Position) -> np.ndarray:
        """(N*N+1,) bool: the legal points off the first two lines (off the first line on boards
        under 7) while one is free, else every legal point; never a pass."""
        size = position.size
        legal = position.legal_moves().copy()
        legal[size * size] = False
        margin = OPENING_MARGIN if size >= 7 else 1
        rows, cols = np.divmod(np.arange(size * size + 1), size)
        inner = legal & (np.minimum(rows, cols) >= margin) & (np.maximum(rows, cols) < size - margin)
        return inner if inner.any() else legal

    def action_permutation(self, k: int) -> np.ndarray:
        return symmetry.move_permutation(k, self.board_size)

    def move_text(self, position: Position, action: int) -> str:
        return coords.to_gtp(action, position.size)

    def action_of_text(self, position: Position, text: str) -> int:
        return coords.from_gtp(text, position.size)

    def board_text(self, position: Position) -> str:
        return position.to_ascii()


GO = GoGame()


def game_named(name: str, size: int = 9, komi: float = 7.5) -> Game:
    """The game called `name`: ``go`` (on `size` with `komi`) or ``baghchal``."""
    if name == "go":
        return GO if (size, komi) == (GO.board_size, GO.komi) else GoGame(size, komi)
    if name == BAGHCHAL.name:
        return BAGHCHAL
    raise ValueError(f"unknown game {name!r}: go or baghchal")


__all__ = ["BAGHCHAL", "GO", "RESIGN", "BaghchalGame", "Game", "GoGame", "game_named", "go_terminal_value"]
