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


def values_from_readings(readings: np.ndarray, boards: np.ndarray, movers: np.ndarray,
                         age: np.ndarray) -> np.ndarray:
    """(R, len(VALUE_KINDS), N*N) int8 `values` from tactics readings (R, ROWS, N*N), boards
    (R, N*N) int8, movers (R,) +1/-1 and `ages` (R, N*N)."""
    libs, legal = readings[:, tactics.LIBERTIES], readings[:, tactics.LEGAL] > 0  # (R, N*N)
    mine = boards == movers[:, None]
    moves = {"capture_size": readings[:, tactics.CAPTURES], "self_atari_size": readings[:, tactics.SELF_ATARI],
             "liberties_after": readings[:, tactics.LIBERTIES_AFTER],
             "ladder_capture": readings[:, tactics.LADDER_CAPTURE], "ladder_escape": readings[:, tactics.LADDER_ESCAPE],
             "sensible": 1 - readings[:, tactics.EYE]}
    stones = {"turns_since": age, "liberties": libs, "own_liberties": np.where(mine, libs, 0),
              "opponent_liberties": np.where(boards == -movers[:, None], libs, 0)}
    values = np.empty((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
    for k, kind in enumerate(VALUE_KINDS):
        number = stones[kind] if kind in stones else np.where(legal, moves[kind].astype(np.int32) + 1, 0)
        values[:, k] = np.minimum(number, VALUE_CAP)
    return values


def position_values(positions: Sequence[Position], kinds: frozenset[str], ladders: bool) -> np.ndarray:
    """`values` of positions (each for its side to move): the `kinds` asked for (turns_since alone
    needs no reading), ladders read only if `ladders`."""
    boards = np.stack([p.stones.reshape(-1) for p in positions])  # (B, N*N) int8
    movers = np.array([p.to_play for p in positions], np.int8)
    age = np.zeros(boards.shape, np.int8)
    for i, position in enumerate(positions):
        past = [h.reshape(-1) for h in position.history[:TURNS_CAP - 1]]
        stacked = np.stack([boards[i], *past])  # (1 + lags, N*N) most recent first
        age[i] = ages(stacked[::-1], np.arange(len(stacked)))[-1]
    if kinds == {"turns_since"}:
        values = np.zeros((len(boards), len(VALUE_KINDS), boards.shape[1]), np.int8)
        values[:, 0] = age
        return values
    readings = tactics.analyse_positions(list(positions), ladders)
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
    readings = tactics.analyse_games(boards, movers, starts, size, wanted, ladders)
    return values_from_readings(readings, boards, movers, ages(boards, moves_in))


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
