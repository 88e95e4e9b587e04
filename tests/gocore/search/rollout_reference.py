"""A slow, plain-Python statement of the rollout features (`gocore.nn.patterns`), from a board
array and flood fills, written without the numba kernels: the tests pin the kernels to it."""

from __future__ import annotations

import numpy as np

from gocore.nn import patterns

ORTH = ((-1, 0), (0, 1), (1, 0), (0, -1))  # N, E, S, W
DIAG = ((-1, 1), (1, 1), (1, -1), (-1, -1))  # NE, SE, SW, NW


def chains(board: np.ndarray) -> tuple[dict, dict]:
    """(chain id per stone point, (liberties set, stones list) per chain id)."""
    size = board.shape[0]
    of, info = {}, {}
    for start in np.ndindex(board.shape):
        if board[start] == 0 or start in of:
            continue
        stack, stones, libs = [start], [], set()
        of[start] = start
        while stack:
            r, c = stack.pop()
            stones.append((r, c))
            for dr, dc in ORTH:
                q = (r + dr, c + dc)
                if not (0 <= q[0] < size and 0 <= q[1] < size):
                    continue
                if board[q] == 0:
                    libs.add(q)
                elif board[q] == board[start] and q not in of:
                    of[q] = start
                    stack.append(q)
        info[start] = (libs, stones)
    return of, info


def canonical_raw(orth: list[int], diag: list[int]) -> int:
    """The smallest raw code of the pattern under the 8 symmetries."""
    best = None
    for o, d in ((orth, diag), ([orth[0], orth[3], orth[2], orth[1]], [diag[3], diag[2], diag[1], diag[0]])):
        for turn in range(4):
            raw = sum(o[(k - turn) % 4] << (3 * k) for k in range(4))
            raw += sum(d[(k - turn) % 4] << (12 + 2 * k) for k in range(4))
            best = raw if best is None else min(best, raw)
    return best


def features(board: np.ndarray, point: tuple[int, int], color: int, last: tuple[int, int] | None
             ) -> tuple[int, int, int, int] | None:
    """(canonical raw pattern, tactics id, line id, distance id) of a `color` (+1/-1) stone at
    an empty point, or None if it is no candidate (suicide or own eye). Ko is not looked at."""
    size = board.shape[0]
    of, info = chains(board)
    r, c = point

    def at(dr: int, dc: int) -> int | None:
        q = (r + dr, c + dc)
        return int(board[q]) if 0 <= q[0] < size and 0 <= q[1] < size else None

    orth, legal, own_atari, captured_chains, after = [], False, False, set(), set()
    for dr, dc in ORTH:
        value, q = at(dr, dc), (r + dr, c + dc)
        if value is None:
            orth.append(1)
        elif value == 0:
            orth.append(0)
            legal = True
            after.add(q)
        else:
            libs, stones = info[of[q]]
            orth.append((1 if value == color else 4) + min(len(libs), 3))
            if value == color:
                legal |= len(libs) >= 2
                own_atari |= len(libs) == 1
                after |= libs - {point}
            elif len(libs) == 1:
                legal = True
                captured_chains.add(of[q])
                after.add(q)
    diag_values = [at(dr, dc) for dr, dc in DIAG]
    diag = [1 if v is None else 0 if v == 0 else 2 if v == color else 3 for v in diag_values]
    own_sides = all(v is None or v == color for v in (at(dr, dc) for dr, dc in ORTH))
    is_eye = own_sides and sum(v == -color for v in diag_values) + any(v is None for v in diag_values) < 2
    if not legal or is_eye:
        return None
    captured = sum(len(info[h][1]) for h in captured_chains)
    tactics = patterns.TACTICS0 + min(captured, 2) * 6 + 3 * own_atari + min(len(after), 3) - 1
    line = patterns.LINE0 + min(r, c, size - 1 - r, size - 1 - c, 3)
    distance = 0
    if last is not None:
        dr, dc = abs(r - last[0]), abs(c - last[1])
        d = dr + dc + max(dr, dc)
        distance = d - 1 if d <= 5 else 0
    return canonical_raw(orth, diag), tactics, line, patterns.DISTANCE0 + distance
