"""The `baghchal` library's minimax engine (PyPI baghchal 1.0.1, `baghchal.engine.Engine`) in numba:
the same value and the same move for every position and depth, a few hundred times faster.

The library's engine, as this module reproduces it:

- minimax with alpha-beta to `depth` plies, Goat maximizing and Tiger minimizing; a node at depth 0
  or at the game's end is worth its static evaluation;
- static evaluation ``150 * tigers trapped - 120 * goats captured`` (a tiger is trapped when it has
  no step and no jump, whoever is to move), +1e6 when Goat has won, -1e6 when Tiger has, 0 a draw;
- the game is over at 5 captures, with all 4 tigers trapped (Goat wins, whoever is to move), with
  Goat to move and no goat able to move once all 20 are placed (Tiger wins), or at the third
  occurrence of an arrangement of pieces after the 20th goat is placed (a draw; the count includes
  the game so far and the moves searched, as the library deep-copies its board with its history);
  there is no ply cap;
- fail-soft alpha-beta with strict comparisons, starting from the full window (-1e6, 1e6).

Why the move agrees: at the root the library keeps the first move in its order whose value beats
the best so far. A root move searched with window (best, 1e6) returns its exact value when that
value beats `best`, and at most `best` otherwise, whatever order the inner nodes try their moves
in; so with the library's root order (`root_actions`, which only the library's board can give:
its moves come from a Python set of strings, in hash order) the chosen move and the value are the
library's. Inner nodes try Tiger's jumps first, for speed.

When every move loses by force (no value beats -1e6 for Goat, or 1e6 for Tiger), the library
returns move 0, not a move: `best_move` says so with index NO_MOVE. Start reading at `best_move`,
then `_search`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from gocore.rules.baghchal.geometry import BEYOND, NEIGHBOUR, NUM_ACTIONS, POINTS
from gocore.rules.baghchal.kernels import GOATS, apply, arrangement, legal_actions
from gocore.rules.baghchal.position import GOAT, Position

INF = 1e6  # the library's win value (Goat's win +INF, Tiger's -INF)
TRAPPED_WEIGHT, CAPTURE_WEIGHT = 150, 120
CAPTURES_TO_WIN, REPETITION = 5, 3  # fixed in the library
TIGERS = 4
NO_MOVE = -1  # `best_move`'s index when every move loses by force (the library's move 0)

_NEIGHBOUR = NEIGHBOUR.astype(np.int64)
_BEYOND = BEYOND.astype(np.int64)
_STEP_MASK = np.array([sum(1 << int(n) for n in NEIGHBOUR[p] if n >= 0) for p in range(POINTS)], np.int64)


@njit(cache=True)
def _is_tiger_trapped(point, goats, empty):
    """True if the tiger on `point` has no step and no jump."""
    if _STEP_MASK[point] & empty:
        return False
    for direction in range(8):
        near, far = _NEIGHBOUR[point, direction], _BEYOND[point, direction]
        if near >= 0 and far >= 0 and (goats >> near) & 1 and (empty >> far) & 1:
            return False
    return True


@njit(cache=True)
def tigers_trapped(goats, tigers):
    """Tigers with no legal step or jump (the library's `baghs_trapped`)."""
    empty = ~(goats | tigers) & ((1 << POINTS) - 1)
    trapped = 0
    for point in range(POINTS):
        if (tigers >> point) & 1 and _is_tiger_trapped(point, goats, empty):
            trapped += 1
    return trapped


@njit(cache=True)
def _can_goat_step(goats, tigers):
    """True if some goat has an empty neighbour (lines join both ways: the empty points' neighbours)."""
    empty = ~(goats | tigers) & ((1 << POINTS) - 1)
    beside_empty = 0
    for point in range(POINTS):
        if (empty >> point) & 1:
            beside_empty |= _STEP_MASK[point]
    return beside_empty & goats != 0


@njit(cache=True)
def static_evaluation(goats, tigers, placed, captured, goat_to_move, repeats):
    """(is the game over, the library's static evaluation): Goat's win +INF, Tiger's -INF, a draw 0,
    else 150 * tigers trapped - 120 * goats captured. `repeats`: occurrences of this arrangement."""
    goat_stuck = goat_to_move and placed >= GOATS and not _can_goat_step(goats, tigers)
    if captured >= CAPTURES_TO_WIN or goat_stuck:
        return True, -INF
    trapped = tigers_trapped(goats, tigers)
    if trapped == TIGERS:
        return True, INF
    if repeats >= REPETITION:
        return True, 0.0
    return False, float(TRAPPED_WEIGHT * trapped - CAPTURE_WEIGHT * captured)


@njit(cache=True)
def _repeats(key, history_keys, history_counts, path, length):
    """Occurrences of `key` in the game (sorted distinct keys, their counts) and in `path[:length]`,
    the arrangements on the searched line (-1 where a node was still in the placement phase)."""
    seen = 0
    index = np.searchsorted(history_keys, key)
    if index < len(history_keys) and history_keys[index] == key:
        seen = history_counts[index]
    for i in range(length):
        if path[i] == key:
            seen += 1
    return seen


@njit(cache=True)
def _search(goats, tigers, placed, captured, goat_to_move, depth, root_actions, history_keys, history_counts):
    """The library's `minimax` from the root (its moves `root_actions`, in its order) with an
    explicit stack, one row per ply below the root: (index of the chosen root move or NO_MOVE,
    value). Inner nodes try their moves last-listed first (Tiger's jumps first)."""
    state = np.empty((depth + 1, 4), np.int64)  # goats, tigers, placed, captured
    moves = np.empty((depth + 1, NUM_ACTIONS), np.int64)
    count, tried = np.zeros(depth + 1, np.int64), np.zeros(depth + 1, np.int64)
    alpha, beta, best = np.empty(depth + 1), np.empty(depth + 1), np.empty(depth + 1)
    path = np.full(depth + 1, -1, np.int64)
    state[0] = goats, tigers, placed, captured
    count[0] = len(root_actions)
    moves[0, :count[0]] = root_actions
    alpha[0], beta[0], best[0] = -INF, INF, -INF if goat_to_move else INF
    chosen, level = NO_MOVE, 0
    while True:
        is_goat = goat_to_move == (level % 2 == 0)
        if tried[level] == count[level]:  # every move searched, or a cut-off
            if level == 0:
                return chosen, best[0]
            value, level = best[level], level - 1
        else:
            index = tried[level] if level == 0 else count[level] - 1 - tried[level]
            tried[level] += 1
            g, t, p, c = apply(state[level, 0], state[level, 1], state[level, 2], state[level, 3], is_goat,
                               moves[level, index])
            child = level + 1
            state[child] = g, t, p, c
            path[child] = arrangement(g, t) if p >= GOATS else -1
            repeats = _repeats(path[child], history_keys, history_counts, path[1:], child) if p >= GOATS else 0
            is_over, value = static_evaluation(g, t, p, c, not is_goat, repeats)
            if child < depth and not is_over:
                count[child] = legal_actions(g, t, p, not is_goat, moves[child])
                tried[child] = 0
                alpha[child], beta[child], best[child] = alpha[level], beta[level], INF if is_goat else -INF
                level = child
                continue
        is_goat = goat_to_move == (level % 2 == 0)
        if is_goat and value > best[level] or not is_goat and value < best[level]:
            best[level] = value
            if level == 0:
                chosen = tried[0] - 1
        if is_goat:
            alpha[level] = max(alpha[level], value)
        else:
            beta[level] = min(beta[level], value)
        if beta[level] <= alpha[level]:
            tried[level] = count[level]


def best_move(position: Position, depth: int, root_actions: Sequence[int]) -> tuple[int, float]:
    """(index into `root_actions` of the library engine's move, or NO_MOVE where every move loses by
    force; the minimax value, + good for Goat). `root_actions`: the legal actions of the unfinished
    `position` in the library's order (its set order for Goat, jumps first for Tiger)."""
    if depth < 1:
        raise ValueError(f"the engine's depth must be at least 1, not {depth}")
    keys, counts = np.unique(np.asarray(position.seen, np.int64), return_counts=True)
    chosen, value = _search(position.goats, position.tigers, position.placed, position.captured,
                            position.to_play == GOAT, depth, np.asarray(root_actions, np.int64), keys,
                            counts.astype(np.int64))
    return int(chosen), float(value)
