"""Ladder reading on a small mutable board, in numba: the primitives `gocore.rules.tactics` reads with.

A board here is a flat int8 array padded with a border ring (``W = N + 2``): +1 black, -1 white,
0 empty, `BORDER` off the board; point ``(r, c)`` is ``(r + 1) * W + c + 1``, as in
`gocore.rules.kernels`. `play_stone` puts a stone down with its captures and logs them, so that
`take_back` restores the board: a reading walks one board forward and back instead of copying it.
Start reading at `is_caught`.

Ladders are read to the end as GNU Go's `simple_ladder` reads them: the attacker may only play
one of the two liberties of the chain (leaving it in atari); the defender may only extend at its
last liberty or capture an adjacent attacking chain in atari; the chain escapes with 3 or more
liberties, is caught with 1 (or when no defence is legal), and 2 liberties recurse. Simple ko
holds inside a reading. A reading past its node budget counts as a failed capture: a ladder is
only claimed when proven.

Scratch space comes in from the caller, made once per board (`new_work`): `work` rows MARK and
STACK for flood fills (a fill marks what it visits with a fresh tick of counters[CLOCK], so
nothing is ever cleared), MEMBERS for `chain_members`, SPARE for the caller; counters[BUDGET]
counts the plies a reading may still open.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BORDER = 3
MARK, STACK, MEMBERS, SPARE = range(4)  # rows of `work`
CLOCK, BUDGET = range(2)  # cells of `counters`
# A reading is a depth-first search with an explicit stack (numba cannot cache recursive
# functions: loading one from the cache crashes, numba issue #6061). One row of `frames` per ply:
_ATTACKER, _KO, _START, _K, _COUNT, _END, _OPTIONS = range(7)  # then the options themselves
MAX_OPTIONS = 12  # defences read at one node; a node with more counts as an escape
MAX_DEPTH = 256  # plies; a 19x19 ladder across the board is about 80
LOG_BOARDS = 8  # the capture log holds this many boards' worth of points


@njit(cache=True)
def new_work(points):
    """(work (4, points) int64, counters (2,) int64, log, frames, found (4,)) for one padded board."""
    return (np.zeros((4, points), np.int64), np.zeros(2, np.int64), np.empty(LOG_BOARDS * points, np.int64),
            np.empty((MAX_DEPTH, _OPTIONS + MAX_OPTIONS), np.int64), np.empty(4, np.int64))


@njit(cache=True)
def padded_board(board, n):
    """(W*W,) int8 from a flat (N*N,) board: +1 black, -1 white, 0 empty, BORDER off the board."""
    w = n + 2
    b = np.full(w * w, BORDER, dtype=np.int8)
    for i in range(n * n):
        b[(i // n + 1) * w + i % n + 1] = board[i]
    return b


@njit(cache=True)
def count_liberties(b, w, start, work, counters, found, cap):
    """Liberties of the chain on `start`, counted until `cap`; the first len(found) are written
    to `found`."""
    counters[CLOCK] += 1
    tick, mark, stack = counters[CLOCK], work[MARK], work[STACK]
    colour = b[start]
    mark[start] = tick
    stack[0] = start
    top, count = 1, 0
    while top > 0:
        top -= 1
        x = stack[top]
        for q in (x - 1, x + 1, x - w, x + w):
            if mark[q] == tick:
                continue
            if b[q] == colour:
                mark[q] = tick
                stack[top] = q
                top += 1
            elif b[q] == 0:
                mark[q] = tick
                if count < found.shape[0]:
                    found[count] = q
                count += 1
                if count >= cap:
                    return count
    return count


@njit(cache=True)
def chain_members(b, w, start, work, counters):
    """The number of stones of the chain on `start`; they are written to work[MEMBERS]."""
    counters[CLOCK] += 1
    tick, mark, stack, out = counters[CLOCK], work[MARK], work[STACK], work[MEMBERS]
    colour = b[start]
    mark[start] = tick
    stack[0] = start
    top, count = 1, 0
    while top > 0:
        top -= 1
        x = stack[top]
        out[count] = x
        count += 1
        for q in (x - 1, x + 1, x - w, x + w):
            if mark[q] != tick and b[q] == colour:
                mark[q] = tick
                stack[top] = q
                top += 1
    return count


@njit(cache=True)
def play_stone(b, w, p, colour, ko, log, start, work, counters, found):
    """Play `colour` at p on b with captures; captured points are logged in log[start:]. Returns
    (end of the log, new ko point), or (-1, -1) and b unchanged if the move is illegal (occupied,
    the ko point, suicide, or no room left in the log)."""
    if b[p] != 0 or p == ko:
        return -1, -1
    b[p] = colour
    end, last, stack = start, -1, work[STACK]
    for q in (p - 1, p + 1, p - w, p + w):
        if b[q] == -colour and count_liberties(b, w, q, work, counters, found, 1) == 0:
            if end + b.shape[0] > log.shape[0]:
                take_back(b, p, colour, log, start, end)
                return -1, -1
            stack[0], b[q], top = q, 0, 1
            while top > 0:  # remove the chain: emptied points are its visited marks
                top -= 1
                x = stack[top]
                log[end] = x
                end += 1
                for y in (x - 1, x + 1, x - w, x + w):
                    if b[y] == -colour:
                        b[y] = 0
                        stack[top] = y
                        top += 1
            last = q
    own = count_liberties(b, w, p, work, counters, found, 2)
    if own == 0:
        b[p] = 0
        return -1, -1
    alone = b[p - 1] != colour and b[p + 1] != colour and b[p - w] != colour and b[p + w] != colour
    return end, last if (end - start == 1 and alone and own == 1) else -1


@njit(cache=True)
def take_back(b, p, colour, log, start, end):
    """Take back `play_stone(b, w, p, colour, ...)` whose captures were logged in log[start:end]."""
    b[p] = 0
    for k in range(start, end):
        b[log[k]] = -colour


@njit(cache=True)
def _open(frames, d, attacker, ko, start, b, w, target, work, counters, found):
    """Set up ply d: whose move, the ko point, where its captures log from, its options. False if
    the defender has more options than a row holds."""
    frames[d, _ATTACKER], frames[d, _KO], frames[d, _START], frames[d, _K] = attacker, ko, start, 0
    if attacker:  # an atari that lets the defender extend to 3 open points fails: not worth a ply
        count_liberties(b, w, target, work, counters, found, 3)
        first, second, count = found[0], found[1], 0
        if open_points(b, w, second, first) < 3:
            frames[d, _OPTIONS] = first
            count = 1
        if open_points(b, w, first, second) < 3:
            frames[d, _OPTIONS + count] = second
            count += 1
        frames[d, _COUNT] = count
    else:
        frames[d, _COUNT] = _defences(b, w, target, frames[d, _OPTIONS:], work, counters, found)
    return frames[d, _COUNT] >= 0


@njit(cache=True, inline="always")
def open_points(b, w, p, other):
    """Empty neighbours of p other than `other`: at least the liberties a chain extending to p
    has once `other` is filled."""
    return (b[p - 1] == 0 and p - 1 != other) + (b[p + 1] == 0 and p + 1 != other) \
        + (b[p - w] == 0 and p - w != other) + (b[p + w] == 0 and p + w != other)


@njit(cache=True)
def is_caught(b, w, target, attacker_to_move, ko, log, start, frames, work, counters, found):
    """True if the chain on `target` is caught by a ladder: with the attacker to move it has 2
    liberties; with the defender to move it is in atari. counters[BUDGET] plies may be opened; a
    line read past it (or past MAX_DEPTH) counts as an escape. b is left as it was."""
    defender = b[target]
    counters[BUDGET] -= 1
    if counters[BUDGET] < 0 or not _open(frames, 0, attacker_to_move, ko, start, b, w, target, work, counters,
                                         found):
        return False
    depth, result = 0, -1  # result: the verdict of the ply just closed (1 caught, 0 escaped)
    while True:
        attacker = frames[depth, _ATTACKER] == 1
        mover = -defender if attacker else defender
        verdict = -1
        if result >= 0:  # back from the ply that followed option K
            k = frames[depth, _K]
            take_back(b, frames[depth, _OPTIONS + k], mover, log, frames[depth, _START], frames[depth, _END])
            if result == (1 if attacker else 0):
                verdict = result  # the attack works / the defence works: no need to try others
            frames[depth, _K] = k + 1
            result = -1
        descended = False
        while verdict < 0 and frames[depth, _K] < frames[depth, _COUNT]:
            k = frames[depth, _K]
            x = frames[depth, _OPTIONS + k]
            end, new_ko = play_stone(b, w, x, mover, frames[depth, _KO], log, frames[depth, _START], work, counters,
                                     found)
            if end < 0:  # illegal: the attacker fails here, the defender has no such defence
                frames[depth, _K] = k + 1
                continue
            left = count_liberties(b, w, target, work, counters, found, 3)
            if left == (1 if attacker else 2):  # the ladder goes on
                frames[depth, _END] = end
                counters[BUDGET] -= 1
                if depth + 1 < frames.shape[0] and counters[BUDGET] >= 0 and _open(
                        frames, depth + 1, not attacker, new_ko, end, b, w, target, work, counters, found):
                    depth += 1
                    descended = True
                    break
                child = 0  # too deep or too long to read: not proven caught
            else:  # attacker: no atari; defender: 3+ liberties (escaped) or still 1 (caught)
                child = 1 if (not attacker and left < 2) else 0
            take_back(b, x, mover, log, frames[depth, _START], end)
            if child == (1 if attacker else 0):
                verdict = child
            frames[depth, _K] = k + 1
        if descended:
            continue
        if verdict < 0:
            verdict = 0 if attacker else 1  # no attack worked / every defence failed (or none existed)
        if depth == 0:
            return verdict == 1
        depth -= 1
        result = verdict


@njit(cache=True)
def _defences(b, w, target, options, work, counters, found):
    """Write the defender's ladder moves for the chain on `target` (in atari) into `options`: its
    liberty, then the liberty of every adjacent attacking chain in atari (capturing it). Returns
    their count, or -1 if they do not fit."""
    first_tick = counters[CLOCK] + 1  # a stone marked from this tick on had its chain looked at here
    count_liberties(b, w, target, work, counters, found, 2)
    options[0] = found[0]
    count = 1
    for i in range(chain_members(b, w, target, work, counters)):
        x = work[MEMBERS, i]
        for q in (x - 1, x + 1, x - w, x + w):
            if b[q] == -b[target] and work[MARK, q] < first_tick and \
                    count_liberties(b, w, q, work, counters, found, 2) == 1:
                is_new = True
                for j in range(count):
                    is_new = is_new and options[j] != found[0]
                if is_new:
                    if count == options.shape[0]:
                        return -1
                    options[count] = found[0]
                    count += 1
    return count
