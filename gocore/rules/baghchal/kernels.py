"""numba kernels of Baghchal: legal actions, playing an action, the game's end, random playouts.

A state is five numbers: ``goats`` and ``tigers`` (bit p set = a piece on point p), ``placed``
(goats placed so far, 0..20), ``captured`` (goats taken) and ``goat_to_move``. The arrangement of
the pieces, the key repetitions are counted on, is ``goats | tigers << 25`` (side to move not
compared, as the `baghchal` library counts). Actions and lines are `geometry`'s tables.

Statuses (`status`): ONGOING, or how the game ended, checked in this order: the tiger's
`captures_to_win`-th capture, the side to move without a legal action (it loses), the
`repetition`-th occurrence of an arrangement once every goat is placed (a draw), the ply cap (a
draw). `position.Position` wraps these; `random_playouts` plays whole games in one call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gocore.rules.baghchal.geometry import (
    ACTION_FROM,
    ACTION_OVER,
    ACTION_TO,
    FIRST_JUMP,
    FIRST_STEP,
    NUM_ACTIONS,
    POINTS,
)

GOATS = 20  # goats Goat places before any goat moves
ALL_POINTS = (1 << POINTS) - 1
ONGOING, CAPTURES, TIGERS_TRAPPED, GOATS_TRAPPED, REPETITION, MOVE_CAP = range(6)
REASONS = ("ongoing", "captures", "tigers-trapped", "goats-trapped", "repetition", "move-cap")
WINNER_OF_STATUS = (0, -1, 1, -1, 0, 0)  # +1 Goat, -1 Tiger, 0 a draw (or no result yet)

_FROM = ACTION_FROM.astype(np.int64)
_TO = ACTION_TO.astype(np.int64)
_OVER = ACTION_OVER.astype(np.int64)


@njit(cache=True, inline="always")
def arrangement(goats, tigers):
    """The key of a piece arrangement: goats in bits 0..24, tigers in 25..49."""
    return goats | (tigers << POINTS)


@njit(cache=True)
def legal_actions(goats, tigers, placed, goat_to_move, out):
    """Write the legal actions into `out` (at least A long); their count."""
    empty = ~(goats | tigers) & ALL_POINTS
    count = 0
    if goat_to_move and placed < GOATS:
        for point in range(POINTS):
            if (empty >> point) & 1:
                out[count] = point
                count += 1
        return count
    movers = goats if goat_to_move else tigers
    for action in range(FIRST_STEP, FIRST_JUMP):
        if (movers >> _FROM[action]) & 1 and (empty >> _TO[action]) & 1:
            out[count] = action
            count += 1
    if not goat_to_move:
        for action in range(FIRST_JUMP, NUM_ACTIONS):
            if (tigers >> _FROM[action]) & 1 and (goats >> _OVER[action]) & 1 and (empty >> _TO[action]) & 1:
                out[count] = action
                count += 1
    return count


@njit(cache=True)
def legal_mask(goats, tigers, placed, goat_to_move, mask):
    """Set mask[a] (bool, A) for every legal action, clear the rest; their count."""
    actions = np.empty(NUM_ACTIONS, np.int64)
    count = legal_actions(goats, tigers, placed, goat_to_move, actions)
    mask[:] = False
    for i in range(count):
        mask[actions[i]] = True
    return count


@njit(cache=True)
def apply(goats, tigers, placed, captured, goat_to_move, action):
    """(goats, tigers, placed, captured) after the legal `action` of the side to move."""
    if action < FIRST_STEP:
        return goats | (1 << action), tigers, placed + 1, captured
    step = (1 << _FROM[action]) | (1 << _TO[action])
    if goat_to_move:
        return goats ^ step, tigers, placed, captured
    if action >= FIRST_JUMP:
        return goats & ~(1 << _OVER[action]), tigers ^ step, placed, captured + 1
    return goats, tigers ^ step, placed, captured


@njit(cache=True)
def status(captured, legal_count, goat_to_move, repeats, ply, captures_to_win, repetition, max_plies):
    """How the game stands: ONGOING or the reason it ended (see the module doc). `repeats`: times
    the current arrangement has occurred since the last goat was placed, this one included (0
    before); `repetition` and `max_plies` 0 = no such rule."""
    if captured >= captures_to_win:
        return CAPTURES
    if legal_count == 0:
        return GOATS_TRAPPED if goat_to_move else TIGERS_TRAPPED
    if repetition > 0 and repeats >= repetition:
        return REPETITION
    if max_plies > 0 and ply >= max_plies:
        return MOVE_CAP
    return ONGOING


@njit(cache=True, inline="always")
def _count(keys, length, key):
    seen = 0
    for i in range(length):
        if keys[i] == key:
            seen += 1
    return seen


@njit(cache=True)
def random_playouts(goats, tigers, placed, captured, goat_to_move, ply, history, captures_to_win, repetition,
                    max_plies, count, seed, winners, lengths, reasons):
    """Play `count` uniformly random games from the state; per game its winner (+1 Goat, -1 Tiger,
    0 draw), its plies from the start and its end reason (a status code). `history`: the
    arrangements since the last goat was placed, the current one last (empty before). Without a
    ply cap (`max_plies` 0) a game goes on until it ends by the rules."""
    np.random.seed(seed)
    actions = np.empty(NUM_ACTIONS, np.int64)
    for game in range(count):
        keys = np.empty(len(history) + 256, np.int64)
        keys[:len(history)] = history
        known = len(history)
        g, t, p, c, goat, plies = goats, tigers, placed, captured, goat_to_move, ply
        while True:
            legal = legal_actions(g, t, p, goat, actions)
            key = arrangement(g, t)
            repeats = _count(keys, known, key) if p >= GOATS else 0
            code = status(c, legal, goat, repeats, plies, captures_to_win, repetition, max_plies)
            if code != ONGOING:
                winners[game], lengths[game], reasons[game] = WINNER_OF_STATUS[code], plies - ply, code
                break
            g, t, p, c = apply(g, t, p, c, goat, actions[np.random.randint(legal)])
            goat, plies = not goat, plies + 1
            if p >= GOATS:
                if known == len(keys):
                    grown = np.empty(2 * len(keys), np.int64)
                    grown[:known] = keys[:known]
                    keys = grown
                keys[known] = arrangement(g, t)
                known += 1
