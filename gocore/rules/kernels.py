"""numba kernels of the rules engine: one flat int64 state array per position.

Start reading at ``place`` (play a stone, merge chains, capture) and ``legal_code`` (occupied,
ko and suicide without playing). `board.Position` is the thin Python wrapper around these.

Layout, for a board of size N padded with a border ring (``W = N + 2``, ``P = W * W`` points;
point ``(r, c)`` is ``(r + 1) * W + c + 1``)::

    state[0      : P]    colour per padded point (EMPTY, BLACK, WHITE, BORDER)
    state[P      : 2P]   next stone of the same chain (circular linked list)
    state[2P     : 3P]   head (representative stone) of the chain
    state[3P     : 4P]   pseudo-liberties, at the head: (stone, empty neighbour) pairs
    state[4P     : 5P]   chain size, at the head
    state[5P     : 5P+8] header: KO, TO_PLAY, PASSES, HASH, SIZE, MOVES, spare, spare

Pseudo-liberties make the legality test exact: placing a stone at ``p`` removes exactly
``adjacent(chain, p)`` pairs from every neighbouring chain, so a chain survives the move iff
``libs > adjacent`` and is captured iff ``libs == adjacent``.

Positional superko needs the whole game's board hashes, which the state does not hold: callers
pass them in (``seen``, sorted) and playouts use simple ko only, as is usual for rollouts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3
LEGAL, OCCUPIED, SUICIDE, KO, SUPERKO = 0, 1, 2, 3, 4
REASONS = ("legal", "occupied", "suicide", "ko", "superko")
KO_H, TO_PLAY_H, PASSES_H, HASH_H, SIZE_H, MOVES_H = 0, 1, 2, 3, 4, 5
HEADER = 8


@njit(cache=True, inline="always")
def _dims(n):
    width = n + 2
    return width, width * width


@njit(cache=True)
def new_state(n):
    """Empty board of size n, black to play."""
    width, points = _dims(n)
    state = np.zeros(5 * points + HEADER, dtype=np.int64)
    for p in range(points):
        r, c = divmod(p, width)
        if r == 0 or c == 0 or r == width - 1 or c == width - 1:
            state[p] = BORDER
    hdr = 5 * points
    state[hdr + KO_H] = -1
    state[hdr + TO_PLAY_H] = BLACK
    state[hdr + SIZE_H] = n
    return state


@njit(cache=True, inline="always")
def to_padded(move, n):
    r, c = divmod(move, n)
    return (r + 1) * (n + 2) + c + 1


@njit(cache=True, inline="always")
def from_padded(p, n):
    r, c = divmod(p, n + 2)
    return (r - 1) * n + c - 1


@njit(cache=True)
def _merge(state, points, a, b):
    """Merge chains with heads a and b; the larger keeps its head."""
    nxt, head, libs, size = points, 2 * points, 3 * points, 4 * points
    if state[size + a] < state[size + b]:
        a, b = b, a
    x = b
    while True:
        state[head + x] = a
        x = state[nxt + x]
        if x == b:
            break
    state[nxt + a], state[nxt + b] = state[nxt + b], state[nxt + a]
    state[libs + a] += state[libs + b]
    state[size + a] += state[size + b]


@njit(cache=True)
def _remove_chain(state, width, points, h, zobrist, freed, n_freed):
    """Empty the chain headed by h; neighbours gain liberties. Returns (stones, hash delta, n_freed)."""
    nxt, head, libs = points, 2 * points, 3 * points
    color = state[h]
    delta = np.int64(0)
    count = 0
    x = h
    while True:
        state[x] = EMPTY
        delta ^= zobrist[color, x]
        count += 1
        if n_freed >= 0:
            freed[n_freed] = x
            n_freed += 1
        for q in (x - 1, x + 1, x - width, x + width):
            cq = state[q]
            if cq == BLACK or cq == WHITE:
                state[libs + state[head + q]] += 1
        x = state[nxt + x]
        if x == h:
            break
    return count, delta, n_freed


@njit(cache=True)
def place(state, width, points, p, color, zobrist, freed, n_freed):
    """Put a stone of `color` at padded point p (legality already checked) and capture.

    Returns (stones captured, n_freed); captured points are appended to `freed` when
    n_freed >= 0. Updates the header's ko point, side to move, passes, hash and move count.
    """
    nxt, head, libs, size, hdr = points, 2 * points, 3 * points, 4 * points, 5 * points
    opp = 3 - color
    state[p] = color
    state[nxt + p] = p
    state[head + p] = p
    state[size + p] = 1
    own_libs = 0
    for q in (p - 1, p + 1, p - width, p + width):
        cq = state[q]
        if cq == EMPTY:
            own_libs += 1
        elif cq == BLACK or cq == WHITE:
            state[libs + state[head + q]] -= 1
    state[libs + p] = own_libs
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] == color:
            hq, hp = state[head + q], state[head + p]
            if hq != hp:
                _merge(state, points, hp, hq)
    delta = zobrist[color, p]
    captured = 0
    ko_point = -1
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] == opp and state[libs + state[head + q]] == 0:
            removed, removed_hash, n_freed = _remove_chain(
                state, width, points, state[head + q], zobrist, freed, n_freed
            )
            captured += removed
            delta ^= removed_hash
            ko_point = q
    hp = state[head + p]
    is_ko = captured == 1 and state[size + hp] == 1 and state[libs + hp] == 1
    state[hdr + KO_H] = ko_point if is_ko else -1
    state[hdr + TO_PLAY_H] = opp
    state[hdr + PASSES_H] = 0
    state[hdr + HASH_H] ^= delta
    state[hdr + MOVES_H] += 1
    return captured, n_freed


@njit(cache=True)
def play_pass(state, points, color):
    """`color` passes: the ko point clears and the other side is to move."""
    hdr = 5 * points
    state[hdr + KO_H] = -1
    state[hdr + TO_PLAY_H] = 3 - color
    state[hdr + PASSES_H] += 1
    state[hdr + MOVES_H] += 1


@njit(cache=True)
def legal_code(state, width, points, p, color):
    """LEGAL, OCCUPIED, KO or SUICIDE for a stone of `color` at padded point p (no superko)."""
    if state[p] != EMPTY:
        return OCCUPIED
    if p == state[5 * points + KO_H] and color == state[5 * points + TO_PLAY_H]:
        return KO  # only the side whose stone was just taken may not retake at once
    head, libs = 2 * points, 3 * points
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] == EMPTY:
            return LEGAL
    for q in (p - 1, p + 1, p - width, p + width):
        cq = state[q]
        if cq == BLACK or cq == WHITE:
            h = state[head + q]
            adjacent = 0
            for r in (p - 1, p + 1, p - width, p + width):
                if state[r] == cq and state[head + r] == h:
                    adjacent += 1
            if cq == color and state[libs + h] > adjacent:
                return LEGAL
            if cq != color and state[libs + h] == adjacent:
                return LEGAL
    return SUICIDE


@njit(cache=True)
def hash_after(state, width, points, p, color, zobrist):
    """Board hash after a legal stone at p, captures included, without playing it."""
    head, libs, nxt = 2 * points, 3 * points, points
    h_new = state[5 * points + HASH_H] ^ zobrist[color, p]
    opp = 3 - color
    done0 = done1 = done2 = -1  # heads already captured: at most 3 other neighbours
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] != opp:
            continue
        h = state[head + q]
        if h == done0 or h == done1 or h == done2:
            continue
        done0, done1, done2 = h, done0, done1
        adjacent = 0
        for r in (p - 1, p + 1, p - width, p + width):
            if state[r] == opp and state[head + r] == h:
                adjacent += 1
        if state[libs + h] == adjacent:
            x = h
            while True:
                h_new ^= zobrist[opp, x]
                x = state[nxt + x]
                if x == h:
                    break
    return h_new


@njit(cache=True)
def _is_seen(seen, h):
    i = np.searchsorted(seen, h)
    return i < seen.shape[0] and seen[i] == h


@njit(cache=True)
def full_code(state, n, move, color, zobrist, seen):
    """Legality code of `move` (unpadded; n*n = pass) for `color`, positional superko included."""
    if move == n * n:
        return LEGAL
    width, points = _dims(n)
    p = to_padded(move, n)
    code = legal_code(state, width, points, p, color)
    if code == LEGAL and _is_seen(seen, hash_after(state, width, points, p, color, zobrist)):
        return SUPERKO
    return code


@njit(cache=True)
def legal_mask(state, n, color, zobrist, seen):
    """bool[n*n+1]: every legal move for `color` (pass always legal)."""
    mask = np.zeros(n * n + 1, dtype=np.bool_)
    for move in range(n * n):
        mask[move] = full_code(state, n, move, color, zobrist, seen) == LEGAL
    mask[n * n] = True
    return mask


@njit(cache=True)
def play_copy(state, n, move, color, zobrist, seen):
    """(code, new state, new seen): `move` played on a copy, its board hash added to `seen`.

    On a refusal the code says why and both arrays are empty.
    """
    code = full_code(state, n, move, color, zobrist, seen)
    if code != LEGAL:
        return code, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    width, points = _dims(n)
    out = state.copy()
    if move == n * n:
        play_pass(out, points, color)
        return LEGAL, out, seen.copy()
    place(out, width, points, to_padded(move, n), color, zobrist, out[:0], -1)
    h = out[5 * points + HASH_H]
    i = np.searchsorted(seen, h)
    new_seen = np.empty(seen.shape[0] + 1, dtype=np.int64)
    new_seen[:i] = seen[:i]
    new_seen[i] = h
    new_seen[i + 1:] = seen[i:]
    return LEGAL, out, new_seen


@njit(cache=True)
def add_setup_stone(state, n, move, color, zobrist):
    """Place a setup stone without captures (AB/AW); the caller checks liberties after."""
    width, points = _dims(n)
    p = to_padded(move, n)
    nxt, head, libs, size = points, 2 * points, 3 * points, 4 * points
    state[p] = color
    state[nxt + p] = p
    state[head + p] = p
    state[size + p] = 1
    state[libs + p] = 0
    for q in (p - 1, p + 1, p - width, p + width):
        cq = state[q]
        if cq == EMPTY:
            state[libs + p] += 1
        elif cq == BLACK or cq == WHITE:
            state[libs + state[head + q]] -= 1
    for q in (p - 1, p + 1, p - width, p + width):
        if state[q] == color and state[head + q] != state[head + p]:
            _merge(state, points, state[head + p], state[head + q])
    state[5 * points + HASH_H] ^= zobrist[color, p]


@njit(cache=True)
def has_dead_chain(state, n):
    """True if some chain has no liberty (an impossible setup)."""
    width, points = _dims(n)
    for p in range(points):
        if (state[p] == BLACK or state[p] == WHITE) and state[3 * points + state[2 * points + p]] <= 0:
            return True
    return False


@njit(cache=True)
def stones_of(state, n, out):
    """Write the board as int8 (n, n) into out: +1 black, -1 white, 0 empty."""
    width = n + 2
    for r in range(n):
        for c in range(n):
            v = state[(r + 1) * width + c + 1]
            out[r, c] = 1 if v == BLACK else (-1 if v == WHITE else 0)


@njit(cache=True)
def area_ownership(state, n, out):
    """Write Tromp-Taylor area ownership as int8 (n, n) into out: +1 black (a black stone, or an
    empty region touching only black), -1 white, 0 neither (an empty region touching both colours,
    or an empty board)."""
    width, points = _dims(n)
    region = np.zeros(points, dtype=np.bool_)
    stack = np.empty(points, dtype=np.int64)
    members = np.empty(points, dtype=np.int64)
    owner = np.zeros(points, dtype=np.int8)
    for p in range(points):
        cp = state[p]
        if cp == BLACK:
            owner[p] = 1
        elif cp == WHITE:
            owner[p] = -1
        elif cp == EMPTY and not region[p]:
            region[p] = True
            stack[0] = p
            top, size, touches = 1, 0, 0
            while top > 0:
                top -= 1
                x = stack[top]
                members[size] = x
                size += 1
                for q in (x - 1, x + 1, x - width, x + width):
                    cq = state[q]
                    if cq == EMPTY and not region[q]:
                        region[q] = True
                        stack[top] = q
                        top += 1
                    elif cq == BLACK or cq == WHITE:
                        touches |= cq
            value = 1 if touches == BLACK else (-1 if touches == WHITE else 0)
            for i in range(size):
                owner[members[i]] = value
    for r in range(n):
        for c in range(n):
            out[r, c] = owner[(r + 1) * width + c + 1]


@njit(cache=True)
def area_score(state, n):
    """Tromp-Taylor area: black points minus white points (komi not included)."""
    owner = np.empty((n, n), dtype=np.int8)
    area_ownership(state, n, owner)
    score = 0
    for r in range(n):
        for c in range(n):
            score += owner[r, c]
    return score
