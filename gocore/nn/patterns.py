"""Local features of a candidate move for AlphaGo's fast rollout policy: sparse ids, numba.

The rollout policy (`gocore.nn.nets.RolloutPolicy`, played by `gocore.search.rollout`) is a
linear softmax: a candidate's logit is the sum of the weights of its feature ids. Every
candidate has exactly `FEATURES_PER_MOVE` ids, one from each group (offsets into one weight
vector of `NUM_FEATURES`):

    pattern   the 3x3 neighbourhood, colours relative to the mover, canonical under the 8
              symmetries (`canonical_table`). Orthogonal neighbours: empty, off-board, own stone
              whose chain has 1 / 2 / 3+ liberties, opponent stone with 1 / 2 / 3+ liberties
              (8 codes); diagonal neighbours: empty, off-board, own, opponent (4 codes).
              8^4 * 4^4 raw patterns fall into NUM_PATTERNS classes.
    tactics   captures (none / one stone / two or more) x saves an own chain in atari (an own
              neighbour chain has one liberty) x liberties of the new stone's chain after the
              move (1 = self-atari / 2 / 3+): 18 ids. "Liberties after" counts the empty
              neighbours of the move, the other liberties of the own chains it joins, and the
              stones of adjacent opponent chains it captures that touch it (captured stones
              touching only the rest of the chain are not counted: exact in all but rare shapes).
    line      distance to the nearest edge: first, second, third, fourth line or more (4 ids).
    distance  to the previous move (the opponent's last stone), d = |dr| + |dc| + max(|dr|,|dc|)
              (CrazyStone's measure): d = 2, 3, 4, 5, or farther / no previous stone (5 ids).

Candidates are the mover's empty points that are legal (no suicide; the simple-ko point is
excluded by the caller) and not its own one-point eyes (`gocore.rules.batch.is_eye`'s rule), as in the
random playouts; passing is not a candidate (a rollout passes only when nothing else is left).

Chain liberties come from `libcount[head]`, true liberties (not the engine's pseudo-liberties)
capped at `LIB_CAP`, and `libs_of[head]`, the first three of them, kept per chain head by the
caller (`count_liberties`), so that no feature walks a chain.

The kernels index a pattern by its compact code (`COMPACT_PATTERNS`, 1.3 MB as a float32 table
instead of the 4 MB the raw codes need: the rollout's weight lookups miss the cache less): the
orthogonal codes as in the raw pattern, then each diagonal as empty-or-off-board / own / opponent
in base 3. A diagonal is off the board exactly when an orthogonal neighbour next to it is, so no
pattern is lost; `compact_table` maps compact codes to the same class ids as `canonical_table`.
Start reading at `point_features`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from gocore.rules import kernels
from gocore.rules.kernels import BLACK, BORDER, EMPTY, WHITE

NUM_PATTERNS = 134_280  # classes of the 8^4 * 4^4 raw patterns under the 8 symmetries (tested)
NUM_TACTICS, NUM_LINES, NUM_DISTANCES = 18, 4, 5
TACTICS0 = NUM_PATTERNS
LINE0 = TACTICS0 + NUM_TACTICS
DISTANCE0 = LINE0 + NUM_LINES
NUM_FEATURES = DISTANCE0 + NUM_DISTANCES
FEATURES_PER_MOVE = 4  # pattern, tactics, line, distance
RAW_PATTERNS = 8**4 * 4**4
COMPACT_PATTERNS = 8**4 * 3**4
LIB_CAP = 4  # libcount holds min(liberties, LIB_CAP): enough to tell 1, 2, 3+ and "3+ before and after"
# The 20 points near the previous move: (dr, dc) and the distance bucket 1..4 (d = 2..5).
WINDOW = np.array([(dr, dc, abs(dr) + abs(dc) + max(abs(dr), abs(dc)) - 1)
                   for dr in range(-2, 3) for dc in range(-2, 3)
                   if 0 < abs(dr) + abs(dc) + max(abs(dr), abs(dc)) <= 5], dtype=np.int64)


def _line_table(max_size: int = 19) -> np.ndarray:
    """(W + 1, W * W) int64 for W = max_size + 2: LINE_TABLE[width, p] = the line id of padded point
    p on a board of that padded width (a lookup: point_features' hot path has no division)."""
    top = max_size + 2
    table = np.zeros((top + 1, top * top), dtype=np.int64)
    for width in range(3, top + 1):
        n = width - 2
        for p in range(width * width):
            r, c = divmod(p, width)
            table[width, p] = LINE0 + max(0, min(r - 1, c - 1, n - r, n - c, 3))
    return table


LINE_TABLE = _line_table()


@lru_cache(maxsize=1)
def canonical_table() -> tuple[np.ndarray, np.ndarray]:
    """(table (RAW_PATTERNS,) int32: raw pattern -> class id, representatives (NUM_PATTERNS,) int64:
    class id -> its smallest raw pattern). Raw = orthogonal codes N, E, S, W in 3 bits each, then
    diagonal codes NE, SE, SW, NW in 2 bits each. Built once per process (~0.5 s)."""
    raw = np.arange(RAW_PATTERNS, dtype=np.int64)
    orth = [(raw >> (3 * k)) & 7 for k in range(4)]
    diag = [(raw >> (12 + 2 * k)) & 3 for k in range(4)]
    best = raw.copy()
    for o, d in ((orth, diag), ([orth[0], orth[3], orth[2], orth[1]], [diag[3], diag[2], diag[1], diag[0]])):
        for turn in range(4):  # a quarter turn moves N to E and NE to SE
            best = np.minimum(best, sum((o[(k - turn) % 4] << (3 * k)) + (d[(k - turn) % 4] << (12 + 2 * k))
                                        for k in range(4)))
    representatives, table = np.unique(best, return_inverse=True)
    if len(representatives) != NUM_PATTERNS:
        raise AssertionError(f"{len(representatives)} pattern classes, NUM_PATTERNS says {NUM_PATTERNS}")
    return table.astype(np.int32), representatives


@lru_cache(maxsize=1)
def compact_table() -> np.ndarray:
    """(COMPACT_PATTERNS,) int32: compact pattern code (what `point_features` gives) -> class id."""
    compact = np.arange(COMPACT_PATTERNS, dtype=np.int64)
    orth = [(compact >> (3 * k)) & 7 for k in range(4)]
    raw = compact & 4095
    for k in range(4):  # diagonal k (NE, SE, SW, NW) lies between orthogonals k and k + 1
        digit = (compact >> 12) // 3**k % 3
        code = np.where((orth[k] == 1) | (orth[(k + 1) % 4] == 1), 1, np.where(digit == 0, 0, digit + 1))
        raw += code << (12 + 2 * k)
    return canonical_table()[0][raw]


@njit(cache=True)
def collect_liberties(state, width, points, h, mark, tick, out, cap):
    """Distinct liberties of the chain headed by h into out[:k], stopping at k = cap; returns k.
    mark/tick: a scratch array of stamps and its counter (tick[0] is bumped per call)."""
    tick[0] += 1
    stamp = tick[0]
    nxt = points
    count = 0
    x = h
    while True:
        for q in (x - width, x + 1, x + width, x - 1):
            if state[q] == EMPTY and mark[q] != stamp:
                mark[q] = stamp
                out[count] = q
                count += 1
                if count >= cap:
                    return count
        x = state[nxt + x]
        if x == h:
            return count


@njit(cache=True)
def count_liberties(state, width, points, h, libcount, libs_of, mark, tick, buf):
    """Set libcount[h] = min(liberties, LIB_CAP) and libs_of[h] to its first 3 liberties; the
    count, with those liberties in buf[:count]."""
    k = collect_liberties(state, width, points, h, mark, tick, buf, LIB_CAP)
    libcount[h] = k
    for j in range(min(k, 3)):
        libs_of[h, j] = buf[j]
    return k


@njit(cache=True)
def count_all_liberties(state, n, libcount, libs_of, mark, tick, buf):
    """`count_liberties` of every chain on the board."""
    width = n + 2
    points = width * width
    for p in range(points):
        c = state[p]
        if (c == BLACK or c == WHITE) and state[2 * points + p] == p:
            count_liberties(state, width, points, p, libcount, libs_of, mark, tick, buf)


@njit(cache=True, inline="always")
def _liberties_after(state, width, points, p, color, libcount, libs_of, mark, tick):
    """Liberties (capped at 3) of the chain a `color` stone at p would make (see module doc).
    Only called when every own neighbour chain has at most 3 liberties, all listed in libs_of."""
    tick[0] += 1
    stamp = tick[0]
    mark[p] = stamp
    count = 0
    for q in (p - width, p + 1, p + width, p - 1):
        c = state[q]
        if c == EMPTY or (c == 3 - color and libcount[state[2 * points + q]] == 1):
            mark[q] = stamp
            count += 1
    for q in (p - width, p + 1, p + width, p - 1):
        if state[q] == color:
            h = state[2 * points + q]
            for j in range(libcount[h]):
                r = libs_of[h, j]
                if mark[r] != stamp:
                    mark[r] = stamp
                    count += 1
    return min(count, 3)


# An orthogonal neighbour, looked up by key = colour * (LIB_CAP + 1) + libcount of its chain (any count
# for an empty or off-board point): its code in the black and in the white pattern, and what it says
# about a stone of either colour at the point (flag bits below). Tables instead of branches: the
# neighbours' colours are what a branch predictor cannot guess.
LEGAL_B, LEGAL_W, ATARI_B, ATARI_W, BIG_B, BIG_W, OPEN_B, OPEN_W = (1 << k for k in range(8))


def _orthogonal_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keys = 4 * (LIB_CAP + 1)
    code_b, code_w, flags = np.zeros(keys, np.int64), np.zeros(keys, np.int64), np.zeros(keys, np.int64)
    for libs in range(LIB_CAP + 1):
        code_b[BORDER * (LIB_CAP + 1) + libs] = code_w[BORDER * (LIB_CAP + 1) + libs] = 1
        flags[EMPTY * (LIB_CAP + 1) + libs] = LEGAL_B | LEGAL_W | OPEN_B | OPEN_W
        for color, own, other in ((BLACK, 0, 1), (WHITE, 1, 0)):  # bit shifts of the stone's side, the other's
            key = color * (LIB_CAP + 1) + libs
            codes = (1 + min(libs, 3), 4 + min(libs, 3))
            code_b[key], code_w[key] = codes if color == BLACK else codes[::-1]
            flags[key] = (((LEGAL_B << own) if libs >= 2 else 0) | ((LEGAL_B << other) if libs == 1 else 0)
                          | ((ATARI_B << own) if libs == 1 else 0) | ((BIG_B << own) if libs >= LIB_CAP else 0)
                          | (OPEN_B << other))
    return code_b, code_w, flags


ORTH_CODE_B, ORTH_CODE_W, ORTH_FLAGS = _orthogonal_tables()


@njit(cache=True, inline="always")
def point_features(state, width, points, p, libcount, libs_of, mark, tick, out):
    """The compact pattern (`compact_table` maps it to its id), tactics id and line id of a black
    (out[0, :3]) and a white (out[1, :3]) stone at the empty padded point p, from one look.
    Returns a bit mask: 1 if p is a candidate for black, 2 if for white (legal, not an own eye).
    Ko is the caller's to exclude; the distance id is the caller's too."""
    head, size = 2 * points, 4 * points
    raw_b = raw_w = flags = empties = 0
    captures_b = captures_w = 0
    seen0 = seen1 = seen2 = -1  # heads of chains in atari already counted
    shift = 0
    for q in (p - width, p + 1, p + width, p - 1):
        c = state[q]
        h = state[head + q]  # stale on an empty or off-board point: its table rows ignore the count
        key = c * (LIB_CAP + 1) + libcount[h]
        raw_b += ORTH_CODE_B[key] << shift
        raw_w += ORTH_CODE_W[key] << shift
        flags |= ORTH_FLAGS[key]
        empties += c == EMPTY
        shift += 3
        if ORTH_FLAGS[key] & (ATARI_B | ATARI_W) and h != seen0 and h != seen1 and h != seen2:
            seen0, seen1, seen2 = h, seen0, seen1
            if c == BLACK:
                captures_w += state[size + h]
            else:
                captures_b += state[size + h]
    edge = black_diag = white_diag = 0
    digit = 4096  # the diagonals' base-3 digits follow the orthogonals' 12 bits
    for q in (p - width + 1, p + width + 1, p + width - 1, p - width - 1):
        c = state[q]
        is_black, is_white = c == BLACK, c == WHITE
        raw_b += (is_black + 2 * is_white) * digit
        raw_w += (is_white + 2 * is_black) * digit
        edge |= c == BORDER
        black_diag += is_black
        white_diag += is_white
        digit *= 3
    line = LINE_TABLE[width, p]
    mask = 0
    if flags & LEGAL_B and (flags & OPEN_B or white_diag + edge >= 2):
        after = 3 if empties >= 3 or flags & BIG_B else _liberties_after(state, width, points, p, BLACK, libcount,
                                                                         libs_of, mark, tick)
        out[0, 0], out[0, 2] = raw_b, line
        out[0, 1] = TACTICS0 + min(captures_b, 2) * 6 + (3 if flags & ATARI_B else 0) + after - 1
        mask |= 1
    if flags & LEGAL_W and (flags & OPEN_W or black_diag + edge >= 2):
        after = 3 if empties >= 3 or flags & BIG_W else _liberties_after(state, width, points, p, WHITE, libcount,
                                                                         libs_of, mark, tick)
        out[1, 0], out[1, 2] = raw_w, line
        out[1, 1] = TACTICS0 + min(captures_w, 2) * 6 + (3 if flags & ATARI_W else 0) + after - 1
        mask |= 2
    return mask


@njit(cache=True)
def distance_bucket(p, last, width):
    """0 (far, or no previous stone: last < 0) or 1..4 for d = 2..5 between padded points."""
    if last < 0:
        return 0
    dr = abs(p // width - last // width)
    dc = abs(p % width - last % width)
    d = dr + dc + max(dr, dc)
    return d - 1 if d <= 5 else 0


@njit(cache=True)
def board_candidates(boards, last, captured, n, table, out):
    """Candidate features of many positions, each from the mover's view.

    boards (R, N*N) int8: +1 the mover's stones, -1 the opponent's; last (R,) the previous move
    (-1: none or a pass); captured (R,) the single stone it captured (-1: none or several), from
    which the ko point is found. Writes out (R, N*N, FEATURES_PER_MOVE) int32 ids, -1 on the
    moves that are no candidate (occupied, suicide, own eye, ko).
    """
    width = n + 2
    points = width * width
    zobrist = np.zeros((3, points), dtype=np.int64)
    libcount = np.zeros(points, dtype=np.int64)
    libs_of = np.zeros((points, 3), dtype=np.int64)
    mark = np.zeros(points, dtype=np.int64)
    tick = np.zeros(1, dtype=np.int64)
    scratch = np.empty(points, dtype=np.int64)
    ids = np.empty((2, 3), dtype=np.int64)
    out[:] = -1
    for i in range(boards.shape[0]):
        state = kernels.new_state(n)
        for m in range(n * n):
            if boards[i, m] != 0:
                kernels.add_setup_stone(state, n, m, BLACK if boards[i, m] > 0 else WHITE, zobrist)
        count_all_liberties(state, n, libcount, libs_of, mark, tick, scratch)
        last_p = kernels.to_padded(last[i], n) if last[i] >= 0 else -1
        ko = -1
        if last_p >= 0 and captured[i] >= 0 and state[last_p] == WHITE:
            h = state[2 * points + last_p]
            cap_p = kernels.to_padded(captured[i], n)
            if state[4 * points + h] == 1 and libcount[h] == 1 and state[cap_p] == EMPTY:
                ko = cap_p
        for m in range(n * n):
            p = kernels.to_padded(m, n)
            if state[p] != EMPTY or p == ko:
                continue
            if point_features(state, width, points, p, libcount, libs_of, mark, tick, ids) & 1:
                out[i, m, 0] = table[ids[0, 0]]
                out[i, m, 1] = ids[0, 1]
                out[i, m, 2] = ids[0, 2]
                out[i, m, 3] = DISTANCE0 + distance_bucket(p, last_p, width)


def planes_to_boards(planes: np.ndarray, plane_names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boards (R, N*N) int8 mover-relative, last (R,), captured (R,)) from encoder planes.

    Needs planes ``own[t]`` and ``opponent[t]``; the previous move and its capture also need
    ``own[t-1]`` and ``opponent[t-1]`` (agz17 has them; without them there is no last move).
    """
    if "own[t]" not in plane_names or "opponent[t]" not in plane_names:
        raise ValueError(f"rollout features need own[t] and opponent[t] planes, not {plane_names}")
    rows = planes.shape[0]
    flat = planes.reshape(rows, len(plane_names), -1) > 0  # (R, C, N*N)
    own, opp = flat[:, plane_names.index("own[t]")], flat[:, plane_names.index("opponent[t]")]
    boards = own.astype(np.int8) - opp.astype(np.int8)
    last = np.full(rows, -1, np.int64)
    captured = np.full(rows, -1, np.int64)
    if "own[t-1]" in plane_names and "opponent[t-1]" in plane_names:
        placed = opp & ~flat[:, plane_names.index("opponent[t-1]")]  # the opponent's new stone
        taken = flat[:, plane_names.index("own[t-1]")] & ~own  # the mover's stones it captured
        single = placed.sum(axis=1) == 1
        last[single] = placed[single].argmax(axis=1)
        one = single & (taken.sum(axis=1) == 1)
        captured[one] = taken[one].argmax(axis=1)
    return boards, last, captured


def candidate_features(planes: np.ndarray, plane_names: tuple[str, ...], size: int) -> np.ndarray:
    """(R, N*N, FEATURES_PER_MOVE) int32 feature ids of every candidate (-1 elsewhere) of encoder planes."""
    boards, last, captured = planes_to_boards(planes, plane_names)
    out = np.empty((len(boards), size * size, FEATURES_PER_MOVE), np.int32)
    board_candidates(boards, last, captured, size, compact_table(), out)
    return out
