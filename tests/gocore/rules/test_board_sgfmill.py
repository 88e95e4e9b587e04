"""Differential tests: our engine against `sgfmill.boards.Board` over thousands of random games.

Moves are drawn uniformly from our engine's legal moves (a seeded numpy generator), played on
both boards, and the boards must agree after every move, as must the simple-ko point. On a sample
of positions the whole legal-move mask is checked against sgfmill too: a point is legal iff it is
empty, sgfmill does not self-capture the stone there (suicide), and the resulting board has not
occurred before in the game (positional superko, which includes simple ko).

sgfmill counts rows from the bottom: ``row_sgfmill = N - 1 - our_row``. It allows suicide, which
our engine never proposes, and keeps no ko state, which is why legality needs the board history.
"""

from __future__ import annotations

import numpy as np
import pytest
from sgfmill import boards

from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_rowcol

SGFMILL_COLOUR = {1: "b", -1: "w"}
SGFMILL_POINT = {1: "b", -1: "w", 0: None}

BoardKey = tuple[tuple[str | None, ...], ...]


def sgfmill_rows(stones: np.ndarray) -> list[list[str | None]]:
    """Our (N, N) stones as sgfmill's `board` list of lists (bottom row first)."""
    return [[SGFMILL_POINT[v] for v in row] for row in stones[::-1].tolist()]


def board_key(board: boards.Board) -> BoardKey:
    """A hashable snapshot of an sgfmill board."""
    return tuple(map(tuple, board.board))


def sgfmill_legal_points(board: boards.Board, colour: str, seen: set[BoardKey]) -> np.ndarray:
    """bool[N*N] in our move order: empty, not suicide, and not a repeated board."""
    size = board.side
    legal = np.zeros(size * size, dtype=np.bool_)
    for move in range(size * size):
        row, col = divmod(move, size)
        row = size - 1 - row
        if board.board[row][col] is not None:
            continue
        trial = board.copy()
        trial.play(row, col, colour)
        if trial.board[row][col] is None:  # sgfmill removed the stone itself: suicide
            continue
        legal[move] = board_key(trial) not in seen
    return legal


def describe(seed: int, index: int, position: Position, board: boards.Board) -> str:
    """Both boards as ASCII (top row first) for a failure message."""
    chars = {"b": "X", "w": "O", None: "."}
    theirs = "\n".join(" ".join(chars[v] for v in row) for row in reversed(board.board))
    return f"seed {seed}, move {index}: ours\n{position.to_ascii()}\nsgfmill\n{theirs}"


def play_both(size: int, seed: int, check_legal_every: int = 0) -> tuple[list[int], list[np.ndarray], int, int]:
    """A random game on our Position and on sgfmill, compared after every move.

    Returns (moves, boards: the N*N board before each move and after the last, stones captured,
    kos seen). `check_legal_every` > 0 compares the full legal mask every that many moves.
    """
    rng = np.random.default_rng(seed)
    position = Position.initial(size, komi=7.5)
    board = boards.Board(size)
    seen = {board_key(board)}
    moves: list[int] = []
    history = [position.stones]
    placed = kos = 0
    while len(moves) < 2 * size * size and not position.is_game_over():
        mask = position.legal_moves()
        if check_legal_every and len(moves) % check_legal_every == 0:
            expected = sgfmill_legal_points(board, SGFMILL_COLOUR[position.to_play], seen)
            if not np.array_equal(mask[:-1], expected):
                differ = np.flatnonzero(mask[:-1] != expected).tolist()
                pytest.fail(f"legal moves differ at {differ} (ours {mask[differ].tolist()}); "
                            + describe(seed, len(moves), position, board))
        legal = np.flatnonzero(mask[:-1])
        move = int(legal[rng.integers(len(legal))]) if len(legal) else size * size
        mover = position.to_play
        position = position.play(move)
        if move == size * size:
            assert position.ko is None
        else:
            row, col = divmod(move, size)
            ko = board.play(size - 1 - row, col, SGFMILL_COLOUR[mover])
            expected_ko = None if ko is None else from_rowcol(size - 1 - ko[0], ko[1], size)
            assert position.ko == expected_ko, describe(seed, len(moves), position, board)
            if check_legal_every:
                seen.add(board_key(board))
            placed += 1
            kos += ko is not None
        if sgfmill_rows(position.stones) != board.board:
            pytest.fail("boards differ; " + describe(seed, len(moves), position, board))
        moves.append(move)
        history.append(position.stones)
    captured = placed - int(np.count_nonzero(position.stones))
    return moves, history, captured, kos


def assert_replay_matches(size: int, moves: list[int], history: list[np.ndarray]) -> None:
    stones, movers = replay_moves(Position.initial(size), moves)
    assert stones.shape == (len(moves) + 1, size, size)
    assert np.array_equal(stones, np.stack(history))
    assert np.array_equal(movers[0::2], np.ones_like(movers[0::2]))
    assert np.array_equal(movers[1::2], -np.ones_like(movers[1::2]))


def run_games(size: int, seeds: range, check_legal_every: int = 0) -> tuple[int, int, int]:
    """Play and replay every seed's game; returns (games, stones captured, kos) in total."""
    captured_total = kos_total = 0
    for seed in seeds:
        moves, history, captured, kos = play_both(size, seed, check_legal_every)
        assert_replay_matches(size, moves, history)
        captured_total += captured
        kos_total += kos
    return len(seeds), captured_total, kos_total


# 2,000 9x9 games in chunks, so a failure names a small seed range. About 45 s of CPU for the
# whole file on one core; the `slow` chunks can be left out with -m "not slow" and still leave
# the 2,000 9x9 games.
CHUNK_9 = 200


@pytest.mark.parametrize("first_seed", range(0, 2000, CHUNK_9))
def test_random_9x9_games_match_sgfmill_after_every_move(first_seed: int) -> None:
    games, captured, kos = run_games(9, range(first_seed, first_seed + CHUNK_9))
    # The games must exercise captures and kos, or the comparison proves little.
    assert captured > 20 * games and kos > 0


def test_random_9x9_legal_moves_match_sgfmill_suicide_and_repetition() -> None:
    games, captured, kos = run_games(9, range(10_000, 10_100), check_legal_every=5)
    assert captured > 20 * games and kos > 0


@pytest.mark.parametrize("first_seed", [20_000, pytest.param(20_100, marks=pytest.mark.slow)])
def test_random_13x13_games_match_sgfmill_after_every_move(first_seed: int) -> None:
    games, captured, kos = run_games(13, range(first_seed, first_seed + 100))
    assert captured > 20 * games and kos > 0


def test_random_13x13_legal_moves_match_sgfmill() -> None:
    run_games(13, range(25_000, 25_020), check_legal_every=17)


@pytest.mark.parametrize("first_seed", [30_000, pytest.param(30_050, marks=pytest.mark.slow)])
def test_random_19x19_games_match_sgfmill_after_every_move(first_seed: int) -> None:
    games, captured, kos = run_games(19, range(first_seed, first_seed + 50))
    assert captured > 20 * games and kos > 0
