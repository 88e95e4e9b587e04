"""Baghchal players outside our search: the `baghchal` library's minimax engine, and a person.

- `LibraryEngineAgent(depth)`: ``baghchal.engine.Engine(depth)``, minimax with alpha-beta on
  ``150 * tigers trapped - 120 * goats captured``, played by its exact numba port
  (`gocore.search.baghchal_minimax`: the library's move, in milliseconds where the library takes
  seconds at depth 4); ``slow=True`` asks the library's own engine instead. Either way it keeps
  the library's board, mirrored move by move through `play_game`'s hooks: the order the library
  tries its root moves in (a set's hash order) decides between equal moves, and only that board
  gives it. The library is a test dependency: without it this player says how to install it. Its
  import changes the working directory; we put it back.
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
from gocore.search import baghchal_minimax


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
    """The library's minimax engine at `depth`, on a mirrored library board: its numba port, or with
    `slow` the library's own engine (the same moves; both play as ``library-d<depth>``)."""

    def __init__(self, depth: int = 2, slow: bool = False):
        if depth < 1:
            raise ValueError(f"the engine's depth must be at least 1, not {depth}")
        env, engine = library_modules()
        self.name, self.depth, self.slow = f"library-d{depth}", depth, slow
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
        move, _ = self.best_move(position)
        if not move:
            move = sorted(self._board.possible_moves())[0]
        return action_of_text(position, move)

    def best_move(self, position: Position) -> tuple[str | int, float]:
        """What the library's ``get_best_move`` returns on the mirrored board: (its move text, or 0
        when every move loses by force; the minimax value, + good for Goat)."""
        if self.slow:
            return self._engine.get_best_move(self._board)
        return ported_best_move(self._board, position, self.depth)


def ported_best_move(board: Any, position: Position, depth: int) -> tuple[str | int, float]:
    """The library's ``Engine(depth).get_best_move(board)`` by its numba port: (move text, or 0 when
    every move loses by force; the value). `position`: ours, the same as the library's `board`."""
    order = library_root_order(board)
    chosen, value = baghchal_minimax.best_move(position, depth, [action_of_text(position, move) for move in order])
    return (0 if chosen == baghchal_minimax.NO_MOVE else order[chosen]), value


def library_root_order(board: Any) -> list[str]:
    """The order the library's engine tries the moves of `board` in at its root: its set of moves
    as iterated (hash order) for Goat, stably sorted jumps first for Tiger."""
    moves = list(board.possible_moves())
    return moves if board.next_turn == "G" else sorted(moves, key=lambda move: 5 - len(move))


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

