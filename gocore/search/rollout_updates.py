"""The fast rollout policy's incremental updates: after a move, recompute only the points whose
features can have changed (see `gocore.search.rollout`, whose game loop inlines these).

Every empty point keeps exp(logit without the distance term) for each colour in `weights_of`; after a
move only the orthogonal neighbours of the stone, the 3x3 around captured stones and the liberties
of chains whose liberty count changed (unless it stayed at 4 or more) are recomputed (`_refresh`,
`_recount`, `_update_after`); a diagonal neighbour that is none of these only sees one digit of its
pattern code change, and its weight is updated from the ids it keeps (`_add_diagonal`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gocore.nn.patterns import LIB_CAP, LINE0, TACTICS0, collect_liberties, count_liberties, point_features
from gocore.rules.kernels import EMPTY

MAX_LOGIT = 30.0  # weights are exp(logit): clipped so that no sum overflows or swamps the rest
MIN_WEIGHT, MAX_WEIGHT = float(np.exp(-MAX_LOGIT)), float(np.exp(MAX_LOGIT))


@njit(cache=True, inline="always")
def _refresh(state, width, points, p, libcount, libs_of, mark, tick, exp_raw, exp_rest, weights_of, ids_of, ids):
    """Recompute both colours' weight of padded point p and its ids (compact pattern first; -1: no candidate)."""
    mask = point_features(state, width, points, p, libcount, libs_of, mark, tick, ids) if state[p] == EMPTY else 0
    for ci in range(2):
        weights_of[ci, p] = 0.0
        ids_of[ci, p, 0] = -1
        if mask & (ci + 1):
            ids_of[ci, p, 0], ids_of[ci, p, 1], ids_of[ci, p, 2] = ids[ci, 0], ids[ci, 1], ids[ci, 2]
            _reweigh(p, ci, exp_raw, exp_rest, weights_of, ids_of)


@njit(cache=True, inline="always")
def _reweigh(p, ci, exp_raw, exp_rest, weights_of, ids_of):
    """weights_of[ci, p] from the ids it holds: one product of precomputed exponentials."""
    weight = exp_raw[ids_of[ci, p, 0]] * exp_rest[ids_of[ci, p, 1] - TACTICS0, ids_of[ci, p, 2] - LINE0]
    weights_of[ci, p] = min(max(weight, MIN_WEIGHT), MAX_WEIGHT)


@njit(cache=True, inline="always")
def _add_diagonal(state, width, p, color, exp_raw, exp_rest, weights_of, ids_of, dirty, n_dirty, mark_dirty, stamp):
    """A `color` stone now at p: shift the pattern of each empty diagonal neighbour not already
    dirty, whose other features cannot have changed. Its legality cannot change either, and only
    the other colour's own-eye test can (a new opponent diagonal): if that colour may not play
    there now, the point is marked dirty instead."""
    digit = 4096  # p is the diagonal NE, SE, SW, NW of these points in turn
    for q in (p + width - 1, p - width - 1, p - width + 1, p + width + 1):
        if state[q] == EMPTY and mark_dirty[q] != stamp:
            if weights_of[2 - color, q] == 0.0:
                n_dirty = _mark(q, dirty, n_dirty, mark_dirty, stamp)
            else:
                for ci in range(2):
                    if ids_of[ci, q, 0] >= 0:
                        ids_of[ci, q, 0] += digit if ci == color - 1 else 2 * digit
                        _reweigh(q, ci, exp_raw, exp_rest, weights_of, ids_of)
        digit *= 3
    return n_dirty


@njit(cache=True, inline="always")
def _mark(q, dirty, n_dirty, mark_dirty, stamp):
    if mark_dirty[q] != stamp:
        mark_dirty[q] = stamp
        dirty[n_dirty] = q
        n_dirty += 1
    return n_dirty


@njit(cache=True, inline="always")
def _recount(state, width, points, h, old, libcount, libs_of, mark, tick, buf, dirty, n_dirty, mark_dirty, stamp):
    """Count h's liberties; mark them dirty unless the count was `old` >= LIB_CAP and still is."""
    k = count_liberties(state, width, points, h, libcount, libs_of, mark, tick, buf)
    if old >= LIB_CAP and k >= LIB_CAP:
        return n_dirty  # 3+ liberties before and after: no feature of its liberties changed
    if k >= LIB_CAP:
        k = collect_liberties(state, width, points, h, mark, tick, buf, points)
    for j in range(k):
        n_dirty = _mark(buf[j], dirty, n_dirty, mark_dirty, stamp)
    return n_dirty


@njit(cache=True, inline="always")
def _update_after(state, width, points, p, joined, freed, n_freed, libcount, libs_of, mark, tick, buf, exp_raw,
                  exp_rest, weights_of, ids_of, ids, dirty, mark_dirty, stamp):
    """After a stone at p captured freed[:n_freed]: fix chain liberty counts, then refresh the
    points whose features may have changed. joined: the smallest liberty count, before the move,
    of the own chains the stone joined (LIB_CAP if none: its liberties are its neighbours)."""
    head = 2 * points
    color = state[p]
    own_head = state[head + p]
    n_dirty = _recount(state, width, points, own_head, joined, libcount, libs_of, mark, tick, buf, dirty, 0,
                       mark_dirty, stamp)
    done0 = done1 = done2 = -1  # an opponent chain may touch p on up to 4 sides: recount it once
    for q in (p - width, p + 1, p + width, p - 1):
        h = state[head + q]
        if state[q] == 3 - color and h != done0 and h != done1 and h != done2:
            done0, done1, done2 = h, done0, done1
            n_dirty = _recount(state, width, points, h, libcount[h], libcount, libs_of, mark, tick, buf, dirty, n_dirty,
                               mark_dirty, stamp)
    for q in (p - width, p + 1, p + width, p - 1):
        if state[q] == EMPTY:
            n_dirty = _mark(q, dirty, n_dirty, mark_dirty, stamp)
    for j in range(n_freed):
        f = freed[j]
        for q in (f - width - 1, f - width, f - width + 1, f - 1, f, f + 1, f + width - 1, f + width, f + width + 1):
            if state[q] == EMPTY:
                n_dirty = _mark(q, dirty, n_dirty, mark_dirty, stamp)
            elif state[q] == color and state[head + q] != own_head and libcount[state[head + q]] < LIB_CAP:
                h = state[head + q]
                n_dirty = _recount(state, width, points, h, libcount[h], libcount, libs_of, mark, tick, buf, dirty, n_dirty,
                                   mark_dirty, stamp)
    n_dirty = _add_diagonal(state, width, p, color, exp_raw, exp_rest, weights_of, ids_of, dirty, n_dirty, mark_dirty,
                            stamp)
    weights_of[0, p] = weights_of[1, p] = 0.0
    ids_of[0, p, 0] = ids_of[1, p, 0] = -1
    for j in range(n_dirty):
        _refresh(state, width, points, dirty[j], libcount, libs_of, mark, tick, exp_raw, exp_rest, weights_of, ids_of,
                 ids)


@njit(cache=True, inline="always")
def _joined_liberties(state, width, points, p, color, libcount):
    """Smallest liberty count among `color`'s chains next to p (LIB_CAP if there are none)."""
    least = LIB_CAP
    for q in (p - width, p + 1, p + width, p - 1):
        if state[q] == color:
            least = min(least, libcount[state[2 * points + q]])
    return least
