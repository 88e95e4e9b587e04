"""Baghchal players outside our search: the `baghchal` library's minimax engine, and a person.

- `LibraryEngineAgent(depth)`: ``baghchal.engine.Engine(depth)``, minimax with alpha-beta on
  ``150 * tigers trapped - 120 * goats captured`` (about 3 s a move at depth 4 here). It plays on
  the library's own board, mirrored move by move through `play_game`'s hooks, so the library's
  repetition counts hold too. The library is a test dependency: without it this player says how
  to install it. Its import changes the working directory; we put it back.
- `HumanAgent`: a person at the terminal types moves in the library's text (G33, B1122, Bx1133);
  a bad or illegal move is explained and asked again. Input and output are injectable.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from gocore.errors import GozeroError
from gocore.rules.baghchal.notation import RecordError, action_of_text, board_text, move_text
from gocore.rules.baghchal.position import GOAT, Position, illegal_reason


class LibraryMissing(GozeroError):
    """The `baghchal` library is not installed (it is only a test dependency)."""


def library_modules() -> tuple[Any, Any]:
    """(`baghchal.env`, `baghchal.engine`), imported with the working directory put back."""
    cwd = os.getcwd()
    try:
        import baghchal.engine as engine
        import baghchal.env as env
    except ImportError:
        raise LibraryMissing("the library engine needs PyPI baghchal: pip install baghchal==1.0.1") from None
    finally:
        os.chdir(cwd)
    return env, engine


class LibraryEngineAgent:
    """The library's minimax engine at `depth`, on a mirrored library board."""

    def __init__(self, depth: int = 2):
        if depth < 1:
            raise ValueError(f"the engine's depth must be at least 1, not {depth}")
        env, engine = library_modules()
        self.name, self.depth = f"library-d{depth}", depth
        self._board_class, self._engine = env.Board, engine.Engine(depth)
        self._board = self._board_class()

    def start_game(self, side: int) -> None:
        """A new library board for a new game."""
        self._board = self._board_class()

    def observe(self, position: Position, action: int) -> None:
        """Mirror every action of either side onto the library board."""
        self._board.move(move_text(position, action))

    def select_move(self, position: Position) -> int:
        """The engine's move. Its minimax keeps move 0 when every move scores the worst possible
        (a lost position): then it plays its first legal move, as the library would have to."""
        move, _ = self._engine.get_best_move(self._board)
        if not move:
            move = sorted(self._board.possible_moves())[0]
        return action_of_text(position, move)


class HumanAgent:
    """A person: shows the board and the legal moves, reads a move text until it is legal."""

    def __init__(self, name: str = "human", read: Callable[[str], str] = input,
                 write: Callable[[str], None] = print):
        self.name, self._read, self._write = name, read, write

    def select_move(self, position: Position) -> int:
        self._write(board_text(position))
        legal = " ".join(sorted(move_text(position, int(a)) for a in np.flatnonzero(position.legal_moves())))
        self._write(f"legal: {legal}")
        side = "Goat" if position.to_play == GOAT else "Tiger"
        while True:
            try:
                text = self._read(f"{side}'s move: ").strip()
            except EOFError:
                raise GozeroError("the input ended before the game did") from None
            try:
                action = action_of_text(position, text)
            except RecordError as error:
                self._write(str(error))
                continue
            if position.is_legal(action):
                return action
            self._write(f"{text}: {illegal_reason(position, action)}")

