"""The numbers behind the value plane kinds of `gocore.nn.features`: one value per point and kind.

A *value kind* gives every point a small number: the age of the stone on it (``turns_since``),
its chain's liberties, or what the side to move's move there would do (captures, self-atari,
liberties after, ladders; from `gocore.rules.tactics`). A plane of that kind is 1 where the
number lies in the plane's range. The batch paths (`features.encode_games`,
`features.encode_positions`, `gocore.nn.packed`) all read the same table, `values`:

    values  # (R, len(VALUE_KINDS), N*N) int8

Stone kinds hold their number (always >= 1) on stones and 0 elsewhere. Move kinds hold
number + 1 on the points where the mover may play and 0 elsewhere, so that "captures 0 stones"
(stored 1) differs from "may not play here" (0); `stored_range` applies the same offset to a
plane's range. Numbers are clipped to `VALUE_CAP` (every plane's range starts far below).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from gocore.rules import tactics
from gocore.rules.board import HISTORY_LENGTH, Position

STONE_VALUE_KINDS = ("turns_since", "liberties", "own_liberties", "opponent_liberties")
MOVE_VALUE_KINDS = ("capture_size", "self_atari_size", "liberties_after", "ladder_capture", "ladder_escape",
                    "sensible")
VALUE_KINDS = STONE_VALUE_KINDS + MOVE_VALUE_KINDS
LADDER_KINDS = ("ladder_capture", "ladder_escape")
BINARY_KINDS = ("ladder_capture", "ladder_escape", "sensible")  # 1 or 0: their planes take no range
VALUE_CAP = 127  # int8 storage; a plane's range must start below RANGE_LIMIT
RANGE_LIMIT = 100
TURNS_CAP = 1 + HISTORY_LENGTH  # stones older than the history Position keeps read as this age


def stored_range(kind: str, low: int, high: int | None) -> tuple[int, int]:
    """(low, high) of a plane's range in the units of `values` (inclusive; high None = no bound)."""
    offset = 1 if kind in MOVE_VALUE_KINDS else 0
    return low + offset, VALUE_CAP if high is None else high + offset


def ages(boards: np.ndarray, moves_in: np.ndarray) -> np.ndarray:
    """(R, N*N) int8 turns since the stone on each point was placed (1 = by the last move; up to
    TURNS_CAP), 0 on empty points. boards (R, N*N): the positions of games in order; moves_in
    (R,): moves played in each position's game before it (boards before a game are empty)."""
    rows = np.arange(len(boards))
    age = np.full(boards.shape, TURNS_CAP, np.int8)
    for lag in range(TURNS_CAP - 1, 0, -1):  # the smallest lag whose board differs wins
        earlier = np.where((moves_in >= lag)[:, None], boards[np.maximum(rows - lag, 0)], 0)
        age[earlier != boards] = lag
    age[boards == 0] = 0
    return age


_TURNS, _LIBS, _OWN_LIBS, _OPPONENT_LIBS, _CAPTURES, _SELF_ATARI, _LIBS_AFTER, _LADDER_CAPTURE, _LADDER_ESCAPE, \
    _SENSIBLE = range(len(VALUE_KINDS))  # rows of `values`, in VALUE_KINDS order


def values_from_readings(readings: np.ndarray, boards: np.ndarray, movers: np.ndarray,
                         age: np.ndarray) -> np.ndarray:
    """(R, len(VALUE_KINDS), N*N) int8 `values` from tactics readings (R, ROWS, N*N), boards
    (R, N*N) int8, movers (R,) +1/-1 and `ages` (R, N*N)."""
    values = np.empty((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
    _fill_values(readings, boards, np.asarray(movers, np.int8), age, values)
    return values


@njit(cache=True)
def _fill_values(readings, boards, movers, age, values):
    """`values_from_readings` in one pass (instead of a dozen (R, N*N) numpy temporaries)."""
    for r in range(boards.shape[0]):
        for i in range(boards.shape[1]):
            v, libs = boards[r, i], min(readings[r, tactics.LIBERTIES, i], VALUE_CAP)
            values[r, _TURNS, i], values[r, _LIBS, i] = age[r, i], libs
            values[r, _OWN_LIBS, i] = libs if v == movers[r] else 0
            values[r, _OPPONENT_LIBS, i] = libs if v == -movers[r] else 0
            legal = readings[r, tactics.LEGAL, i] > 0  # move kinds: number + 1 where legal, else 0
            values[r, _CAPTURES, i] = min(readings[r, tactics.CAPTURES, i] + 1, VALUE_CAP) if legal else 0
            values[r, _SELF_ATARI, i] = min(readings[r, tactics.SELF_ATARI, i] + 1, VALUE_CAP) if legal else 0
            values[r, _LIBS_AFTER, i] = readings[r, tactics.LIBERTIES_AFTER, i] + 1 if legal else 0
            values[r, _LADDER_CAPTURE, i] = readings[r, tactics.LADDER_CAPTURE, i] + 1 if legal else 0
            values[r, _LADDER_ESCAPE, i] = readings[r, tactics.LADDER_ESCAPE, i] + 1 if legal else 0
            values[r, _SENSIBLE, i] = 2 - readings[r, tactics.EYE, i] if legal else 0


def position_values(positions: Sequence[Position], movers: np.ndarray, kinds: frozenset[str],
                    ladders: bool) -> np.ndarray:
    """`values` of positions for their movers (B,) (the side to move): the `kinds` asked for
    (turns_since alone needs no reading), ladders read only if `ladders`."""
    size = positions[0].size
    history = np.zeros((len(positions), TURNS_CAP, size * size), np.int8)  # (B, H, N*N) most recent first
    for i, position in enumerate(positions):
        history[i, 0] = position.stones.reshape(-1)
        for lag, board in enumerate(position.history[:TURNS_CAP - 1], start=1):
            history[i, lag] = board.reshape(-1)
    return history_values(positions, history, movers, kinds, ladders)


def history_values(positions: Sequence[Position], history: np.ndarray, movers: np.ndarray, kinds: frozenset[str],
                   ladders: bool) -> np.ndarray:
    """`position_values` from the positions' boards already gathered: history (B, >= TURNS_CAP, N*N)
    int8, the board `lag` moves back in [:, lag] (empty before the game's first move)."""
    boards = history[:, 0]
    age = np.full(boards.shape, TURNS_CAP, np.int8)
    for lag in range(TURNS_CAP - 1, 0, -1):  # the smallest lag whose board differs wins
        age[history[:, lag] != boards] = lag
    age[boards == 0] = 0
    if kinds == {"turns_since"}:
        values = np.zeros((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
        values[:, 0] = age
        return values
    readings = tactics.analyse_positions(list(positions), ladders, movers)
    return values_from_readings(readings, boards, movers, age)


def game_values(boards: np.ndarray, movers: np.ndarray, starts: np.ndarray, size: int, kinds: frozenset[str],
                ladders: bool, wanted: np.ndarray | None = None) -> np.ndarray | None:
    """`values` of every position of replayed games (boards (R, N*N) before each move, movers
    (R,), game g = rows starts[g]:starts[g+1], as `features.concat_games` gives them; superko
    judged on each game's own boards), or None if no value kind is wanted. Only the `kinds`
    asked for are filled (turns_since alone needs no reading); rows not `wanted` stay zero."""
    if not kinds:
        return None
    moves_in = np.arange(len(movers)) - np.repeat(starts[:-1], np.diff(starts))  # (R,) t in its game
    if kinds == {"turns_since"}:
        values = np.zeros((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
        values[:, 0] = ages(boards, moves_in)
        return values
    values = np.empty((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
    age = ages(boards, moves_in)
    wanted = np.ones(len(boards), np.bool_) if wanted is None else np.asarray(wanted, np.bool_)
    for first, last in _chunks(starts, CHUNK_ROWS):  # readings are int16 x 8 rows: read a chunk of games at a time
        part = slice(first, last)
        readings = tactics.analyse_games(boards[part], movers[part], starts[(starts >= first) & (starts <= last)] - first,
                                         size, wanted[part], ladders)
        _fill_values(readings, boards[part], np.asarray(movers[part], np.int8), age[part], values[part])
    return values


CHUNK_ROWS = 4096


def _chunks(starts: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """(first, last) row ranges of whole games, each about `rows` rows (or one longer game)."""
    bounds, first = [], 0
    for end in starts[1:]:
        if end - first >= rows:
            bounds.append((first, int(end)))
            first = int(end)
    if first < starts[-1] or not bounds:
        bounds.append((first, int(starts[-1])))
    return bounds


def reference_plane(kind: str, low: int, high: int | None, boards: Sequence[np.ndarray], to_play: int,
                    readings: np.ndarray | None) -> np.ndarray:
    """The plain reading of one value plane (N, N) bool for `features.encode_position`: boards[k]
    is the board k moves ago (missing = empty), readings (ROWS, N, N) of `tactics` (None if only
    turns_since is asked)."""
    stones = boards[0]

    def in_range(numbers: np.ndarray) -> np.ndarray:
        return (numbers >= low) & (high is None or numbers <= high)

    if kind == "turns_since":
        age = np.where(stones != 0, TURNS_CAP, 0)
        for lag in range(TURNS_CAP - 1, 0, -1):
            earlier = boards[lag] if lag < len(boards) else np.zeros_like(stones)
            age = np.where((stones != 0) & (earlier != stones), lag, age)
        return (stones != 0) & in_range(age)
    assert readings is not None
    libs, legal = readings[tactics.LIBERTIES], readings[tactics.LEGAL] == 1
    owners = {"liberties": stones != 0, "own_liberties": stones == to_play, "opponent_liberties": stones == -to_play}
    if kind in owners:
        return owners[kind] & in_range(libs)
    if kind == "sensible":
        return legal & (readings[tactics.EYE] == 0)
    row = {"capture_size": tactics.CAPTURES, "self_atari_size": tactics.SELF_ATARI,
           "liberties_after": tactics.LIBERTIES_AFTER, "ladder_capture": tactics.LADDER_CAPTURE,
           "ladder_escape": tactics.LADDER_ESCAPE}[kind]
    return legal & in_range(readings[row])
