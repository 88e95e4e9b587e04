"""Batch kernels for the hot paths: replaying a whole game, random playouts, and the move masks of a
batch of positions (a search's leaves).

All run entirely inside numba on the flat state of `gocore.rules.kernels`, so a game, a playout or
a batch of masks costs one Python call. `board.replay_moves`, `board.random_playouts` and
`board.legal_masks` / `board.candidate_masks` are the public wrappers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gocore.rules.kernels import (
    BLACK,
    BORDER,
    EMPTY,
    HASH_H,
    KO_H,
    LEGAL,
    PASSES_H,
    SUPERKO,
    TO_PLAY_H,
    WHITE,
    area_score,
    hash_after,
    legal_code,
    place,
    play_copy,
    play_pass,
    stones_of,
    to_padded,
)


@njit(cache=True)
def replay(state0, n, moves, colors, zobrist, stones_out, color_out):
    """Replay `moves` (unpadded, n*n = pass) from state0, positional superko enforced.

    colors[i] is +1 (black) or -1 (white); anything else means "the side to move". Fills
    stones_out (T+1, n, n) int8 with the board before each move and after the last, and
    color_out (T,) int8 with the mover (+1 black, -1 white). Returns (-1, LEGAL) or (index of
    the first illegal move, its code).
    """
    width = n + 2
    points = width * width
    hdr = 5 * points
    state = state0.copy()
    seen = np.empty(moves.shape[0] + 1, dtype=np.int64)
    seen[0] = state[hdr + HASH_H]
    n_seen = 1
    for i in range(moves.shape[0]):
        stones_of(state, n, stones_out[i])
        sign = colors[i]
        color = BLACK if sign == 1 else WHITE if sign == -1 else state[hdr + TO_PLAY_H]
        color_out[i] = 1 if color == 1 else -1
        move = moves[i]
        if move == n * n:
            play_pass(state, points, color)
            continue
        p = to_padded(move, n)
        code = legal_code(state, width, points, p, color)
        if code != LEGAL:
            return i, code
        place(state, width, points, p, color, zobrist, state[:0], -1)
        h = state[hdr + HASH_H]
        for j in range(n_seen):
            if seen[j] == h:
                return i, SUPERKO
        seen[n_seen] = h
        n_seen += 1
    stones_of(state, n, stones_out[moves.shape[0]])
    return -1, LEGAL


@njit(cache=True, inline="always")
def xorshift(x):
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    return x


@njit(cache=True)
def is_eye(state, width, p, color):
    """True if p is an empty point the `color` side should never fill (a one-point eye)."""
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] != color and state[q] != BORDER:
            return False
    opp = 3 - color
    bad = 0
    edge = 0
    for q in (p - width - 1, p - width + 1, p + width - 1, p + width + 1):
        if state[q] == BORDER:
            edge = 1
        elif state[q] == opp:
            bad += 1
    return bad + edge < 2


@njit(cache=True)
def playouts(state0, n, count, max_moves, seed, zobrist):
    """Play `count` uniform random games from state0; returns their Tromp-Taylor area scores.

    Each move is uniform over the mover's legal points that are not its own eye (rejection
    sampling without replacement over the empty points); no legal move means pass; a playout
    ends at two consecutive passes or `max_moves`. Simple ko only, as usual for rollouts.
    """
    width = n + 2
    points = width * width
    hdr = 5 * points
    scores = np.empty(count, dtype=np.int64)
    state = np.empty_like(state0)
    empties = np.empty(points, dtype=np.int64)
    where = np.empty(points, dtype=np.int64)
    freed = np.empty(points, dtype=np.int64)
    rng = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x2545F4914F6CDD1D)
    for g in range(count):
        state[:] = state0
        k = 0
        for p in range(points):
            if state[p] == EMPTY:
                empties[k] = p
                where[p] = k
                k += 1
        color = state[hdr + TO_PLAY_H]
        passes = state[hdr + PASSES_H]
        moves = 0
        while moves < max_moves and passes < 2:
            m = k
            chosen = -1
            while m > 0:
                rng = xorshift(rng)
                i = np.int64((rng >> np.uint64(16)) % np.uint64(m))
                p = empties[i]
                if not is_eye(state, width, p, color) and legal_code(state, width, points, p, color) == LEGAL:
                    chosen = p
                    break
                m -= 1
                q = empties[m]
                empties[i], empties[m] = q, p
                where[q], where[p] = i, m
            if chosen < 0:
                play_pass(state, points, color)
                passes += 1
            else:
                i = where[chosen]
                last = empties[k - 1]
                empties[i] = last
                where[last] = i
                k -= 1
                _, n_freed = place(state, width, points, chosen, color, zobrist, freed, 0)
                for j in range(n_freed):
                    empties[k] = freed[j]
                    where[freed[j]] = k
                    k += 1
                passes = 0
            color = 3 - color
            moves += 1
        scores[g] = area_score(state, n)
    return scores


@njit(cache=True)
def eye_mask(state, n, color):
    """bool[n*n+1]: points that are one-point eyes of `color` (pass is False)."""
    width = n + 2
    mask = np.zeros(n * n + 1, dtype=np.bool_)
    for move in range(n * n):
        p = to_padded(move, n)
        mask[move] = state[p] == EMPTY and is_eye(state, width, p, color)
    return mask


_BLOOM_BITS = 4096  # per position's seen hashes: ~100 of them leave ~2 % of the lookups to the binary search


@njit(cache=True)
def _masks_of(state, n, zobrist, hashes, bloom, legal_out, eyes_out):
    """legal_out (n*n+1,) ← the side to move's legal moves (pass legal; = `kernels.legal_mask`),
    eyes_out ← its own one-point eyes (pass False; = `eye_mask`); hashes: the game's sorted board
    hashes, bloom: scratch of _BLOOM_BITS bits.

    The superko lookup of every legal point was most of a 19x19 mask (22 of 26 us here): a
    Bloom filter of the game's hashes (one bit each) answers most lookups, and only a set bit
    goes on to `kernels.full_code`'s binary search, so the result is the same."""
    width = n + 2
    points = width * width
    color, ko, board_hash = state[5 * points + TO_PLAY_H], state[5 * points + KO_H], state[5 * points + HASH_H]
    opponent = 3 - color
    low_bits = np.uint64(_BLOOM_BITS - 1)
    bloom[:] = 0
    for h in hashes:
        bit = np.uint64(h) & low_bits
        bloom[bit >> np.uint64(6)] |= np.uint64(1) << (bit & np.uint64(63))
    for row in range(n):  # by rows: no division a point (`to_padded`)
        p = (row + 1) * width
        for move in range(row * n, row * n + n):
            p += 1
            if state[p] != EMPTY:
                legal_out[move] = eyes_out[move] = False
                continue
            west, east, north, south = state[p - 1], state[p + 1], state[p - width], state[p + width]
            if p != ko and (west == EMPTY or east == EMPTY or north == EMPTY or south == EMPTY):
                # most points: a liberty, so legal (but for superko) and no eye; no opponent beside: no capture
                is_legal, is_own_eye = True, False
                if west != opponent and east != opponent and north != opponent and south != opponent:
                    h = board_hash ^ zobrist[color, p]
                else:
                    h = hash_after(state, width, points, p, color, zobrist)
            else:  # what `legal_code`, `hash_after` and `is_eye` say in general
                is_legal = legal_code(state, width, points, p, color) == LEGAL
                h = hash_after(state, width, points, p, color, zobrist) if is_legal else 0
                is_own_eye = is_eye(state, width, p, color)
            if is_legal:
                bit = np.uint64(h) & low_bits
                if bloom[bit >> np.uint64(6)] & (np.uint64(1) << (bit & np.uint64(63))):
                    j = np.searchsorted(hashes, h)
                    is_legal = not (j < hashes.shape[0] and hashes[j] == h)
            legal_out[move] = is_legal
            eyes_out[move] = is_own_eye
    legal_out[n * n] = True
    eyes_out[n * n] = False


@njit(cache=True)
def move_masks(states, n, zobrist, seen, seen_starts, out):
    """out (B, 2, n*n+1) bool ← for each position's side to move, row 0 its legal moves and row 1
    its own one-point eyes (`_masks_of`). states (B, 5P+8) int64 stacked flat states; position i's
    sorted board hashes are seen[seen_starts[i]:seen_starts[i+1]]. One call for a batch instead of
    two per position."""
    bloom = np.empty(_BLOOM_BITS // 64, dtype=np.uint64)
    for i in range(states.shape[0]):
        _masks_of(states[i], n, zobrist, seen[seen_starts[i]:seen_starts[i + 1]], bloom, out[i, 0], out[i, 1])


@njit(cache=True)
def play_leaf(state, n, move, zobrist, seen, boards, boards_out, masks_out, head_out):
    """`kernels.play_copy` by the side to move, and on a legal move the new position's board and
    the ones before it into boards_out (H, n, n) (its board, then boards[:-1]: the position's own
    `recent_boards`), its masks into masks_out (2, n*n+1) (`move_masks`' rows) and its header into
    head_out (HEADER,): all a search asks of a new leaf, computed while its state is in the cache.
    The new state itself is dropped (a leaf makes it again if it is ever asked). Returns the code."""
    color = state[5 * (n + 2) * (n + 2) + TO_PLAY_H]
    code, new_state, new_seen = play_copy(state, n, move, color, zobrist, seen)
    if code == LEGAL:
        stones_of(new_state, n, boards_out[0])
        boards_out[1:] = boards[:-1]
        bloom = np.empty(_BLOOM_BITS // 64, dtype=np.uint64)
        _masks_of(new_state, n, zobrist, new_seen, bloom, masks_out[0], masks_out[1])
        head_out[:] = new_state[new_state.shape[0] - head_out.shape[0]:]
    return code
