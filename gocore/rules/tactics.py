"""Tactical readings of one board, point by point: AlphaGo 2016's tactical inputs, in numba.

For a board and the side to move (the *mover*), the readings are `ROWS` rows of N*N int16 values
(names in `ROW_NAMES`): the liberties of the chain on each stone, and for each empty point the
mover may play, what the move would do: stones captured, its own chain's liberties after the
move, the size of that chain if the move leaves it in atari, whether it is a working ladder
capture or a successful ladder escape (read to the end by `gocore.rules.reading`); plus the
mover's legal points and own one-point eyes. Legality is judged here, independently of
`gocore.rules.kernels`: occupied, suicide, the simple-ko point, and positional superko against
the board hashes of the game so far (`Position`'s own for `analyse_positions`, the replayed
boards' for `analyse_games`). Start reading at `_analyse`.

Liberties are counted up to `LIBERTY_CAP` (the feature planes' last bucket is ">= 8"); captures
and chain sizes are exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gocore.rules.board import Position, zobrist_table
from gocore.rules.reading import (
    BORDER,
    BUDGET,
    MEMBERS,
    SPARE,
    chain_members,
    count_liberties,
    is_caught,
    new_work,
    open_points,
    padded_board,
    play_stone,
    take_back,
)

# Rows of the readings: one value per point (N*N,). Move rows are 0 where the mover may not play.
LIBERTIES = 0  # stones: liberties of the chain on the point (at most LIBERTY_CAP); 0 elsewhere
CAPTURES = 1  # legal empty points: opponent stones the move captures
SELF_ATARI = 2  # legal empty points: stones of the mover's chain left in atari by the move (0: none)
LIBERTIES_AFTER = 3  # legal empty points: liberties of the mover's chain after it (at most LIBERTY_CAP)
LADDER_CAPTURE = 4  # 1: the move ataris a 2-liberty opponent chain and the ladder catches it
LADDER_ESCAPE = 5  # 1: the move saves an own chain in atari, ladders included
LEGAL = 6  # 1: the mover may play here
EYE = 7  # 1: an empty point that is a one-point eye of the mover (gocore.rules.batch.is_eye)
ROWS = 8
ROW_NAMES = ("liberties", "captures", "self_atari", "liberties_after", "ladder_capture",
             "ladder_escape", "legal", "eye")
LIBERTY_CAP = 8  # liberties are counted up to here: the planes' last bucket is ">= 8"
LADDER_NODES = 1000  # plies per ladder question: a ladder 15 lines across 19x19 reads in 57; 2 of 6,389
# questions on random 19x19 positions needed more than 1,000 (their answers the same at 20,000)


@njit(cache=True)
def _label(b, w, chain, sizes, libs, work, counters):
    """chain[p] = index of the chain on p (-1 off stones); sizes and liberty counts per index
    (liberties counted to LIBERTY_CAP). Returns the number of chains."""
    chain[:] = -1
    count = 0
    for p in range(b.shape[0]):
        if (b[p] == 1 or b[p] == -1) and chain[p] < 0:
            stones = chain_members(b, w, p, work, counters)
            for k in range(stones):
                chain[work[MEMBERS, k]] = count
            sizes[count] = stones
            libs[count] = count_liberties(b, w, p, work, counters, work[SPARE, :0], LIBERTY_CAP)
            count += 1
    return count


@njit(cache=True)
def _move_effects(b, w, p, mover, chain, sizes, libs, zobrist, work, counters):
    """(captured stones, liberties after (to LIBERTY_CAP), size of the mover's chain after, board
    hash change) of a stone of `mover` at empty p, without playing it. 0 liberties: suicide."""
    captured, size, taken = 0, 1, 0  # taken: bit k set if neighbour k's chain is captured
    delta = zobrist[1 if mover == 1 else 2, p]
    c0, c1, c2, c3 = chain[p - 1], chain[p + 1], chain[p - w], chain[p + w]  # -1: no stone
    for k in range(4):
        c = c0 if k == 0 else c1 if k == 1 else c2 if k == 2 else c3
        if c < 0 or (k > 0 and c == c0) or (k > 1 and c == c1) or (k > 2 and c == c2):
            continue  # no chain, or one already counted
        if b[p - 1 if k == 0 else p + 1 if k == 1 else p - w if k == 2 else p + w] == mover:
            size += sizes[c]
        elif libs[c] == 1:  # p is its last liberty
            captured += sizes[c]
            taken |= 1 << k
    no_room = work[SPARE, :0]
    if captured == 0:
        b[p] = mover
        after = count_liberties(b, w, p, work, counters, no_room, LIBERTY_CAP)
        b[p] = 0
        return 0, after, size, delta
    code = 2 if mover == 1 else 1
    for x in range(b.shape[0]):  # captured stones become liberties where they touch the new chain
        c = chain[x]
        if c >= 0 and ((taken & 1 and c == c0) or (taken & 2 and c == c1) or (taken & 4 and c == c2)
                       or (taken & 8 and c == c3)):
            b[x] = 0
            delta ^= zobrist[code, x]
    b[p] = mover
    after = count_liberties(b, w, p, work, counters, no_room, LIBERTY_CAP)
    b[p] = 0
    for x in range(b.shape[0]):
        if b[x] == 0 and chain[x] >= 0:
            b[x] = -mover
    return captured, after, size, delta


@njit(cache=True)
def _is_eye(b, w, p, colour):
    """gocore.rules.batch.is_eye on the padded int8 board: the mover should not fill p."""
    for q in (p - 1, p + 1, p - w, p + w):
        if b[q] != colour and b[q] != BORDER:
            return False
    bad, edge = 0, 0
    for q in (p - w - 1, p - w + 1, p + w - 1, p + w + 1):
        if b[q] == BORDER:
            edge = 1
        elif b[q] == -colour:
            bad += 1
    return bad + edge < 2


# ---------------------------------------------------------------- every point of one board
@njit(cache=True)
def _is_repeat(seen, seen_times, until, h):
    """True if hash h is in `seen` (sorted) at a time <= until: positional superko."""
    i = np.searchsorted(seen, h)
    while i < seen.shape[0] and seen[i] == h:
        if seen_times[i] <= until:
            return True
        i += 1
    return False


@njit(cache=True)
def _board_hash(b, zobrist):
    """Zobrist hash of the stones of padded board b (as `gocore.rules.kernels` keeps it)."""
    h = np.int64(0)
    for p in range(b.shape[0]):
        if b[p] == 1:
            h ^= zobrist[1, p]
        elif b[p] == -1:
            h ^= zobrist[2, p]
    return h


@njit(cache=True)
def _analyse(board, n, mover, ko, seen, seen_times, until, zobrist, ladders, out):
    """Fill out (ROWS, N*N) for flat board (N*N,) with `mover` to play. Legality: occupied,
    suicide, `ko` (padded point, -1 none) and positional superko against `seen`."""
    w = n + 2
    b = padded_board(board, n)
    size = b.shape[0]
    work, counters, log, frames, found = new_work(size)
    chain, sizes, libs = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64)
    _label(b, w, chain, sizes, libs, work, counters)
    h = _board_hash(b, zobrist)
    out[:] = 0
    for i in range(n * n):
        p = (i // n + 1) * w + i % n + 1
        if b[p] != 0:
            out[LIBERTIES, i] = libs[chain[p]]
            continue
        out[EYE, i] = _is_eye(b, w, p, mover)
        captured, after, grown, delta = _move_effects(b, w, p, mover, chain, sizes, libs, zobrist, work, counters)
        if after == 0 or p == ko or _is_repeat(seen, seen_times, until, h ^ delta):
            continue
        out[LEGAL, i], out[CAPTURES, i], out[LIBERTIES_AFTER, i] = 1, captured, after
        out[SELF_ATARI, i] = grown if after == 1 else 0
        if ladders:
            out[LADDER_CAPTURE, i] = _is_ladder_capture(b, w, p, mover, chain, libs, log, frames, work, counters,
                                                        found)
            out[LADDER_ESCAPE, i] = _is_ladder_escape(b, w, p, mover, after, chain, libs, log, frames, work,
                                                      counters, found)


@njit(cache=True)
def _is_ladder_capture(b, w, p, mover, chain, libs, log, frames, work, counters, found):
    """True if the mover's stone at p ataris an opponent chain of 2 liberties that then cannot
    escape the ladder."""
    for q in (p - 1, p + 1, p - w, p + w):
        if b[q] != -mover or libs[chain[q]] != 2:
            continue
        count_liberties(b, w, q, work, counters, found, 3)
        if open_points(b, w, found[1] if found[0] == p else found[0], p) >= 3:
            continue  # extending at the other liberty gives 3 at once: no ladder
        end, ko = play_stone(b, w, p, mover, -1, log, 0, work, counters, found)
        counters[BUDGET] = LADDER_NODES
        caught = end >= 0 and count_liberties(b, w, q, work, counters, found, 2) == 1 and \
            is_caught(b, w, q, False, ko, log, end, frames, work, counters, found)
        if end >= 0:
            take_back(b, p, mover, log, 0, end)
        if caught:
            return True
    return False


@njit(cache=True)
def _is_ladder_escape(b, w, p, mover, after, chain, libs, log, frames, work, counters, found):
    """True if the mover's stone at p (its chain then has `after` liberties) is a ladder defence
    (extending, or capturing an attacker in atari) of an own chain in atari after which no ladder
    catches that chain."""
    candidates, count = work[SPARE], 0  # a stone of each own chain in atari that p defends
    for q in (p - 1, p + 1, p - w, p + w):
        if b[q] == mover and libs[chain[q]] == 1:
            if after >= 3:
                return True  # the extension has 3 liberties: no ladder to read
            candidates[count] = q
            count += 1
        elif b[q] == -mover and libs[chain[q]] == 1:  # p captures it: every own chain in atari it touches
            for k in range(chain_members(b, w, q, work, counters)):
                x = work[MEMBERS, k]
                for y in (x - 1, x + 1, x - w, x + w):
                    if b[y] == mover and libs[chain[y]] == 1 and count < candidates.shape[0]:
                        candidates[count] = y
                        count += 1
    if count == 0:
        return False
    end, ko = play_stone(b, w, p, mover, -1, log, 0, work, counters, found)
    escaped = False
    for k in range(count):
        if end < 0 or escaped:
            break
        left = count_liberties(b, w, candidates[k], work, counters, found, 3)
        counters[BUDGET] = LADDER_NODES
        escaped = left >= 3 or (left == 2 and not is_caught(b, w, candidates[k], True, ko, log, end, frames, work,
                                                            counters, found))
    if end >= 0:
        take_back(b, p, mover, log, 0, end)
    return escaped


# ---------------------------------------------------------------- public: positions and games
@njit(cache=True)
def _analyse_many(boards, n, movers, kos, seen, seen_starts, zobrist, ladders, out):
    """`_analyse` for each board b of boards (B, N*N), its seen hashes seen[seen_starts[b]:...]."""
    for k in range(boards.shape[0]):
        mine = seen[seen_starts[k]:seen_starts[k + 1]]
        _analyse(boards[k], n, movers[k], kos[k], mine, np.zeros(mine.shape[0], np.int64), 0, zobrist,
                 ladders, out[k])


@njit(cache=True)
def _analyse_games(boards, n, movers, starts, wanted, zobrist, ladders, out):
    """`_analyse` for each wanted position r of the games (boards (R, N*N) before each move, game
    g = rows starts[g]:starts[g+1]); superko against the game's boards up to r."""
    for g in range(starts.shape[0] - 1):
        first, last = starts[g], starts[g + 1]
        hashes = np.empty(last - first, np.int64)
        for t in range(last - first):
            hashes[t] = _board_hash(padded_board(boards[first + t], n), zobrist)
        order = np.argsort(hashes, kind="mergesort")
        ordered = hashes[order]
        for t in range(last - first):
            if wanted[first + t]:
                _analyse(boards[first + t], n, movers[first + t], -1, ordered, order, t, zobrist, ladders,
                         out[first + t])


def analyse_positions(positions: list[Position], ladders: bool = True, movers: np.ndarray | None = None
                      ) -> np.ndarray:
    """(B, ROWS, N*N) int16 readings of each position for its side to move (rows: `ROW_NAMES`);
    `movers` (B,), if the caller has them, are each position's side to move."""
    size = positions[0].size
    if any(p.size != size for p in positions):
        raise ValueError("analyse_positions needs positions of one board size")
    boards = np.stack([p.stones.reshape(-1) for p in positions])  # (B, N*N) int8
    movers = np.array([p.to_play for p in positions], np.int8) if movers is None else np.asarray(movers, np.int8)
    kos = np.array([-1 if p.ko is None else (p.ko // size + 1) * (size + 2) + p.ko % size + 1
                    for p in positions], np.int64)  # padded points
    seens = [p._seen for p in positions]  # sorted board hashes of each game so far (rules-internal)
    starts = np.concatenate([[0], np.cumsum([len(s) for s in seens])]).astype(np.int64)
    out = np.empty((len(positions), ROWS, size * size), np.int16)
    _analyse_many(boards, size, movers, kos, np.concatenate(seens), starts, zobrist_table(size), ladders, out)
    return out


def analyse_games(boards: np.ndarray, movers: np.ndarray, starts: np.ndarray, size: int,
                  wanted: np.ndarray | None = None, ladders: bool = True) -> np.ndarray:
    """(R, ROWS, N*N) int16 readings of every position of replayed games: boards (R, N*N) int8
    before each move, movers (R,) +1/-1, game g = rows starts[g]:starts[g+1] (as from
    `gocore.nn.features.concat_games`). Superko is judged against the game's own boards, so a
    game must start at its first board. Rows not `wanted` are left zero."""
    rows = len(movers)
    wanted = np.ones(rows, np.bool_) if wanted is None else np.asarray(wanted, np.bool_)
    out = np.zeros((rows, ROWS, size * size), np.int16)
    _analyse_games(np.ascontiguousarray(boards, np.int8), size, np.asarray(movers, np.int8),
                   np.asarray(starts, np.int64), wanted, zobrist_table(size), ladders, out)
    return out
