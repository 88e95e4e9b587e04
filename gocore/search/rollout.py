"""AlphaGo's fast rollout policy played in numba: whole games sampled from a linear softmax.

`PatternRollouts(weights).scores(position, count, seed)` plays `count` games from `position`,
each move drawn from softmax(sum of the candidate's feature weights) over the mover's candidates
(`gocore.nn.patterns`: legal, not its own eye, not the ko point), passing only when there is none,
and returns their Tromp-Taylor scores, as `board.random_playouts` does for uniform moves.

Speed comes from incremental updates (`gocore.search.rollout_updates`; start reading at
`_play_games`): every empty point keeps
exp(logit without the distance term) for each colour in `weights_of`, and after a move only the
points whose features can have changed are recomputed: the orthogonal neighbours of the stone,
the 3x3 around captured stones, and the liberties of chains whose liberty count changed (unless
it stayed at 4 or more). A diagonal neighbour that is none of these only sees one digit of its
pattern code change: its weight is updated from the ids it keeps (`_add_diagonal`). A point's weight is a product of precomputed exponentials (`exp_tables`: the raw
pattern's, and the tactics-and-line pair's), so no exp() runs during a game. The
distance-to-previous-move term touches 20 points around the last stone; it is applied at sampling
time as a second mixture component (their extra weights), or, when a distance weight is below the
far one (negative extras), added to their weights for one scan (`_scan_shifted`). Sampling is one
vectorised sum over the board and one scan over the empty points. Simple ko only, as for every rollout.

The per-move helpers are inlined into the game loop (`_play_games`) and it works on `unmanaged`
views of its arrays: a numba call passes each array as 7 words and increments and decrements its
reference count atomically, once per argument and per inlined helper, and with ~20 arrays per call
calls and counts together were over 40 % of a rollout's time (9.6k -> 17k rollouts/s, same games).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

from gocore.nn.patterns import (
    DISTANCE0,
    LINE0,
    NUM_DISTANCES,
    NUM_LINES,
    NUM_TACTICS,
    TACTICS0,
    WINDOW,
    compact_table,
    count_all_liberties,
)
from gocore.rules.batch import xorshift
from gocore.rules.board import Position, zobrist_table
from gocore.rules.kernels import (
    EMPTY,
    KO_H,
    PASSES_H,
    TO_PLAY_H,
    area_score,
    from_padded,
    place,
    play_pass,
    to_padded,
)
from gocore.search.rollout_updates import _joined_liberties, _refresh, _update_after

PATTERN_LOGIT_CAP = 80.0  # exp(+-80) fits float32; a pattern weight beyond it would be clipped at 30 anyway


@intrinsic
def unmanaged(typingctx, array):
    """A view of `array` without its reference count (a null meminfo): passing it to jitted
    functions costs no atomic increment and decrement per call and per inlined helper, which
    took about a third of a rollout's time. The array must outlive the view: make views of a
    function's array arguments at its start (the caller holds them until it returns), never of
    an array the function allocates, and never return one."""
    def codegen(context, builder, signature, args):
        view = cgutils.create_struct_proxy(signature.args[0])(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    return array(array), codegen


def exp_tables(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(exp of each compact pattern's weight (COMPACT_PATTERNS,) float32, exp of tactics + line + the
    far distance (NUM_TACTICS, NUM_LINES) float64): a point's weight is one product, no exp() per move."""
    raw = np.clip(weights[compact_table()], -PATTERN_LOGIT_CAP, PATTERN_LOGIT_CAP)
    tactics = weights[TACTICS0:TACTICS0 + NUM_TACTICS, None]
    lines = weights[None, LINE0:LINE0 + NUM_LINES]
    return np.exp(raw).astype(np.float32), np.exp(tactics + lines + weights[DISTANCE0])


@njit(cache=True, fastmath=True)
def _total(weights):
    """Sum of one colour's weights over every padded point (0 wherever it may not play): one
    contiguous, vectorised pass instead of a walk over the empty points."""
    total = 0.0
    for p in range(weights.shape[0]):
        total += weights[p]
    return total


@njit(cache=True)
def _scan_shifted(weights, empties, k, near_row, extra, saved, u):
    """The empty point where u falls when the window's extras (some negative) are added to its
    weights; the weights are restored exactly after."""
    for j in range(near_row.shape[0]):
        if near_row[j] >= 0:
            saved[j] = weights[near_row[j]]
            weights[near_row[j]] += extra[j]
    chosen = -1
    for i in range(k):
        chosen = empties[i] if weights[empties[i]] > 0.0 else chosen
        u -= weights[empties[i]]
        if u < 0.0 and chosen >= 0:
            break
    for j in range(near_row.shape[0]):
        if near_row[j] >= 0:
            weights[near_row[j]] = saved[j]
    return chosen


@njit(cache=True)
def _window_table(n):
    """(padded points, 20) neighbours near each point (-1 off the board) and their buckets."""
    width = n + 2
    near = np.full((width * width, WINDOW.shape[0]), -1, dtype=np.int64)
    for m in range(n * n):
        r, c = divmod(m, n)
        for j in range(WINDOW.shape[0]):
            rr, cc = r + WINDOW[j, 0], c + WINDOW[j, 1]
            if 0 <= rr < n and 0 <= cc < n:
                near[to_padded(m, n), j] = to_padded(rr * n + cc, n)
    return near


@njit(cache=True)
def _setup(state0, n, exp_raw, exp_rest):
    """(libcount, libs_of, weights_of, ids_of) of the start position, computed once per call."""
    width = n + 2
    points = width * width
    libcount = np.zeros(points, dtype=np.int64)
    mark = np.zeros(points, dtype=np.int64)
    tick = np.zeros(1, dtype=np.int64)
    buf = np.empty(points, dtype=np.int64)
    libs_of = np.zeros((points, 3), dtype=np.int64)
    count_all_liberties(state0, n, libcount, libs_of, mark, tick, buf)
    weights_of = np.zeros((2, points))
    ids_of = np.full((2, points, 3), -1, dtype=np.int64)
    ids = np.empty((2, 3), dtype=np.int64)
    for m in range(n * n):
        _refresh(state0, width, points, to_padded(m, n), libcount, libs_of, mark, tick, exp_raw, exp_rest, weights_of,
                 ids_of, ids)
    return libcount, libs_of, weights_of, ids_of


@njit(cache=True)
def policy_playouts(state0, n, last0, count, max_moves, seed, zobrist, exp_raw, exp_rest, boost, trace_moves,
                    trace_weights, trace_ids):
    """Play `count` games from state0 by the rollout policy; their area scores.

    exp_raw, exp_rest: the weights as `exp_tables` gives them; boost (NUM_DISTANCES - 1,): the
    factors exp(w[distance d] - w[far]) of the distance buckets 1..4.

    last0: padded point of the previous stone (-1: none). With trace_moves of length > 0 (tests),
    the first game records each move (unpadded, N*N = pass; -1 after the end), the mover's
    sampling weight of every padded point before it (trace_weights (T, P)) and the ids both
    colours' points hold (trace_ids (T, 2, P, 3), compact patterns first).

    Allocates here; the games run in `_play_games`.
    """
    width = n + 2
    points = width * width
    libcount0, libs_of0, weights0, ids0 = _setup(state0, n, exp_raw, exp_rest)
    near = _window_table(n)
    gain = np.empty(WINDOW.shape[0])  # a window point's weight times this is its extra weight
    for j in range(WINDOW.shape[0]):
        gain[j] = boost[WINDOW[j, 2] - 1] - 1.0
    scores = np.empty(count, dtype=np.int64)
    state, libcount, libs_of = np.empty_like(state0), np.empty_like(libcount0), np.empty_like(libs_of0)
    weights_of, ids_of = np.empty_like(weights0), np.empty_like(ids0)
    empties, where, freed = np.empty(points, np.int64), np.empty(points, np.int64), np.empty(points, np.int64)
    mark, mark_dirty, tick = np.zeros(points, np.int64), np.zeros(points, np.int64), np.zeros(1, np.int64)
    buf, dirty, ids = np.empty(points, np.int64), np.empty(points, np.int64), np.empty((2, 3), np.int64)
    extra, saved = np.empty(WINDOW.shape[0]), np.empty(WINDOW.shape[0])
    _play_games(state0, n, last0, count, max_moves, seed, zobrist, exp_raw, exp_rest, trace_moves, trace_weights,
                trace_ids, libcount0, libs_of0, weights0, ids0, near, gain, scores, state, libcount, libs_of, weights_of,
                ids_of, empties, where, freed, mark, mark_dirty, tick, buf, dirty, ids, extra, saved)
    return scores


@njit(cache=True)  # never inline="always": the caller's arrays must stay alive until it returns
def _play_games(state0, n, last0, count, max_moves, seed, zobrist, exp_raw, exp_rest, trace_moves, trace_weights,
                trace_ids, libcount0, libs_of0, weights0, ids0, near, gain, scores, state, libcount, libs_of,
                weights_of, ids_of, empties, where, freed, mark, mark_dirty, tick, buf, dirty, ids, extra, saved):
    """`policy_playouts`' games, into scores. Works on `unmanaged` views of its arrays, which the
    caller's frame keeps alive until this returns."""
    state0, zobrist, exp_raw, exp_rest = unmanaged(state0), unmanaged(zobrist), unmanaged(exp_raw), unmanaged(exp_rest)
    trace_moves, trace_weights, trace_ids = unmanaged(trace_moves), unmanaged(trace_weights), unmanaged(trace_ids)
    libcount0, libs_of0, weights0, ids0 = unmanaged(libcount0), unmanaged(libs_of0), unmanaged(weights0), unmanaged(ids0)
    near, gain, scores, state = unmanaged(near), unmanaged(gain), unmanaged(scores), unmanaged(state)
    libcount, libs_of, weights_of, ids_of = unmanaged(libcount), unmanaged(libs_of), unmanaged(weights_of), unmanaged(ids_of)
    empties, where, freed, mark = unmanaged(empties), unmanaged(where), unmanaged(freed), unmanaged(mark)
    mark_dirty, tick, buf, dirty = unmanaged(mark_dirty), unmanaged(tick), unmanaged(buf), unmanaged(dirty)
    ids, extra, saved = unmanaged(ids), unmanaged(extra), unmanaged(saved)
    width = n + 2
    points = width * width
    hdr = 5 * points
    mixture = gain.min() >= 0.0  # else the extras go into the window's weights for each move
    stamp = 0
    rng = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x2545F4914F6CDD1D)
    trace_moves[:] = -1
    for g in range(count):
        state[:] = state0
        libcount[:] = libcount0
        libs_of[:] = libs_of0
        weights_of[:] = weights0
        ids_of[:] = ids0
        k = 0
        for p in range(points):
            if state[p] == EMPTY:
                empties[k] = p
                where[p] = k
                k += 1
        color, passes, last, moves = state[hdr + TO_PLAY_H], state[hdr + PASSES_H], last0, 0
        while moves < max_moves and passes < 2:
            ci = color - 1
            ko = state[hdr + KO_H]
            ko_weight = 0.0
            if ko >= 0:  # the ko point is no candidate this move: take it out of the sums
                ko_weight, weights_of[ci, ko] = weights_of[ci, ko], 0.0
            base = _total(weights_of[ci])
            total = base
            extra[:] = 0.0
            if last >= 0:
                for j in range(WINDOW.shape[0]):
                    q = near[last, j]
                    if q >= 0:
                        extra[j] = weights_of[ci, q] * gain[j]
                        total += extra[j]
            if g == 0 and moves < trace_moves.shape[0]:
                trace_weights[moves] = weights_of[ci]
                for j in range(WINDOW.shape[0]):
                    q = near[last, j] if last >= 0 else -1
                    if q >= 0:
                        trace_weights[moves, q] += extra[j]
                trace_ids[moves] = ids_of
            chosen = -1
            if total > 0.0:
                rng = xorshift(rng)
                u = (np.float64(rng >> np.uint64(11)) / 9007199254740992.0) * total
                if not mixture and last >= 0:
                    chosen = _scan_shifted(weights_of[ci], empties, k, near[last], extra, saved, u)
                elif u < base:
                    for i in range(k):
                        chosen = empties[i] if weights_of[ci, empties[i]] > 0.0 else chosen
                        u -= weights_of[ci, empties[i]]
                        if u < 0.0 and chosen >= 0:
                            break
                else:
                    u -= base
                    for j in range(WINDOW.shape[0]):
                        chosen = near[last, j] if extra[j] != 0.0 else chosen
                        u -= extra[j]
                        if u < 0.0 and chosen >= 0:
                            break
            if ko >= 0:
                weights_of[ci, ko] = ko_weight
            if g == 0 and moves < trace_moves.shape[0]:
                trace_moves[moves] = n * n if chosen < 0 else from_padded(chosen, n)
            if chosen < 0:
                play_pass(state, points, color)
                passes += 1
                last = -1
            else:
                i = where[chosen]
                empties[i] = empties[k - 1]
                where[empties[i]] = i
                k -= 1
                joined = _joined_liberties(state, width, points, chosen, color, libcount)
                _, n_freed = place(state, width, points, chosen, color, zobrist, freed, 0)
                for j in range(n_freed):
                    empties[k] = freed[j]
                    where[freed[j]] = k
                    k += 1
                stamp += 1
                _update_after(state, width, points, chosen, joined, freed, n_freed, libcount, libs_of, mark, tick, buf,
                              exp_raw, exp_rest, weights_of, ids_of, ids, dirty, mark_dirty, stamp)
                passes = 0
                last = chosen
            color = 3 - color
            moves += 1
        scores[g] = area_score(state, n)


class PatternRollouts:
    """The rollout policy's games from any position: weights (NUM_FEATURES,) from a trained
    `RolloutPolicy` (`weights_array`)."""

    def __init__(self, weights: np.ndarray):
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        self.exp_raw, self.exp_rest = exp_tables(self.weights)  # exp_raw: 1.3 MB, one lookup per pattern
        self.boost = np.exp(self.weights[DISTANCE0 + 1:DISTANCE0 + NUM_DISTANCES] - self.weights[DISTANCE0])

    def scores(self, start: Position, count: int, seed: int = 0, max_moves: int | None = None) -> np.ndarray:
        """Tromp-Taylor scores (black - white - komi), float64 (count,), of `count` rollouts."""
        return self.trace(start, count, seed, max_moves, 0)[0]

    def trace(self, start: Position, count: int, seed: int = 0, max_moves: int | None = None, record: int = 0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scores, moves (record,), mover weights (record, P), ids (record, 2, P, 3)) of the
        first game's first `record` moves: what tests compare with a slow reference."""
        size = start.size
        cap = 3 * size * size if max_moves is None else max_moves
        last = start.last_move
        last_p = to_padded(last, size) if last is not None and last < size * size else -1
        points = (size + 2) ** 2
        moves, weights = np.empty(record, np.int64), np.zeros((record, points))
        ids = np.zeros((record, 2, points, 3), np.int64)
        scores = policy_playouts(start._state, size, last_p, count, cap, seed, zobrist_table(size), self.exp_raw,
                                 self.exp_rest, self.boost, moves, weights, ids)
        return scores.astype(np.float64) - start.komi, moves, weights, ids
