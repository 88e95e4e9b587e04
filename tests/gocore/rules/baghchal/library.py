"""The PyPI `baghchal` library (1.0.1, a test dependency) as a referee for our rules.

Importing `baghchal.env` changes the process's working directory (it chdirs to its package to load
images): `library()` imports it once and restores the directory. Its FEN reader is buggy (it puts
tigers where a FEN has goats), so games reach it as moves only.
"""

from __future__ import annotations

import os
import types
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gocore.rules.baghchal.geometry import ACTION_OF, POINTS, point_of_text
from gocore.rules.baghchal.notation import move_text, write_fen
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, TIGER, Position

WINNER = {"G": GOAT, "B": TIGER, 0: 0}


def library() -> types.ModuleType:
    """`baghchal.env`, imported with the working directory put back."""
    cwd = os.getcwd()
    try:
        import baghchal.env as env
    finally:
        os.chdir(cwd)
    return env


def library_vector_actions(board: object) -> set[int]:
    """Our actions for the 1s of the library's `possible_moves_vector` (its 217 indices, its order)."""
    from baghchal.lookup_table import action_space

    names = {index: name for name, index in action_space.items()}
    actions = set()
    for index in np.flatnonzero(board.possible_moves_vector()):
        name = names[int(index)]
        if len(name) == 2:
            actions.add(point_of_text(name))
        else:
            actions.add(int(ACTION_OF[point_of_text(name[:2]), point_of_text(name[2:])]))
    return actions


@dataclass
class Agreement:
    """What a differential run compared, and where the two rules disagreed."""

    games: int = 0
    plies: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # our end reasons
    disagreements: list[str] = field(default_factory=list)  # the first few, as sentences
    count: int = 0  # all disagreements

    def disagree(self, game: int, ply: int, what: str) -> None:
        self.count += 1
        if len(self.disagreements) < 10:
            self.disagreements.append(f"game {game} ply {ply}: {what}")


def compare_game(choose: object, game: int, agreement: Agreement) -> list[int]:
    """Play one game with `choose(position) -> action` on our rules and the library's side by side,
    comparing at every ply the legal moves (as text and as the library's vector), the FEN, the
    captures and whether the game is over, and at the end the winner and the record; the actions."""
    env = library()
    board, position, actions = env.Board(), Position.initial(LIBRARY_RULES), []
    while True:
        ours = {move_text(position, int(a)) for a in np.flatnonzero(position.legal_moves())}
        theirs = set(board.possible_moves() or ())
        checks = (("legal moves", ours, theirs),
                  ("move vector", set(np.flatnonzero(position.legal_moves()).tolist()), library_vector_actions(board)),
                  ("FEN", write_fen(position), board.fen),
                  ("captures", position.captured, board.goats_captured),
                  ("game over", position.is_game_over(), board.is_game_over()))
        for what, a, b in checks:
            if a != b:
                agreement.disagree(game, position.ply, f"{what}: ours {sorted(a) if isinstance(a, set) else a}, "
                                                       f"library {sorted(b) if isinstance(b, set) else b}")
        if position.is_game_over() or board.is_game_over():
            break
        action = int(choose(position))
        board.move(move_text(position, action))
        position = position.play(action)
        actions.append(action)
    if position.is_game_over() and board.is_game_over() and position.winner != WINNER[board.winner()]:
        agreement.disagree(game, position.ply, f"winner: ours {position.winner}, library {board.winner()}")
    agreement.games += 1
    agreement.plies += position.ply
    agreement.outcomes[position.reason] = agreement.outcomes.get(position.reason, 0) + 1
    return actions


def replay_in_library(texts: Sequence[str]) -> object:
    """The library's board after the move texts, in order (raises as the library does on a bad move)."""
    board = library().Board()
    for text in texts:
        board.move(text)
    return board


__all__ = ["POINTS", "Agreement", "compare_game", "library", "replay_in_library"]
