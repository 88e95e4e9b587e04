"""Handicap stone placement: GTP's fixed placements and the engine's own free placement.

`fixed_placement` is the GTP v2 specification's table (section 4.1.1) as GNU Go 3.8 answers it: star
points on the third line from the edge below 12x12, the fourth from 12x12 up; 2 to 9 stones on odd
boards from 9x9, 2 to 4 on even boards and 7x7, none below 7x7. `free_placement` (GTP's
``place_free_handicap``) takes the fixed placement while the table has one, then adds each further
stone on the empty point farthest from the stones already placed, keeping off the first two lines
while it can (ties: nearer the centre, then the lower point index), so small boards and large
handicaps get an even spread too. Start reading at `fixed_placement`.
"""

from __future__ import annotations

import numpy as np

from gocore.rules.coords import from_rowcol

MIN_FIXED_SIZE = 7


def max_fixed(size: int) -> int:
    """The most stones the fixed table places on a `size` board (0: no fixed handicap there)."""
    if size < MIN_FIXED_SIZE:
        return 0
    return 9 if size % 2 == 1 and size > MIN_FIXED_SIZE else 4


def fixed_placement(size: int, count: int) -> list[int] | None:
    """The standard points of `count` handicap stones, in the specification's order; None if the
    table has no such placement (count below 2 or above `max_fixed`)."""
    if not 2 <= count <= max_fixed(size):
        return None
    low, high = (2, size - 3) if size < 12 else (3, size - 4)  # 0-based lines from the edges
    mid = size // 2

    def point(col: int, up: int) -> int:  # `up` lines counted from the bottom, as GTP counts rows
        return from_rowcol(size - 1 - up, col, size)

    corners = [point(low, low), point(high, high), point(low, high), point(high, low)]
    sides = [point(low, mid), point(high, mid), point(mid, low), point(mid, high)]
    center = [point(mid, mid)] if count % 2 == 1 and count >= 5 else []
    chosen = corners[:count] if count <= 4 else corners + sides[:(count - 4) // 2 * 2] + center
    return chosen


def free_placement(size: int, count: int) -> list[int]:
    """`count` handicap points (2 <= count < size*size): the fixed ones while the table has them,
    then each next stone as far as it can be from the others (see the module doc)."""
    if not 2 <= count < size * size:
        raise ValueError(f"a {size}x{size} board takes 2..{size * size - 1} handicap stones, not {count}")
    stones = fixed_placement(size, min(count, max_fixed(size))) or []
    rows, cols = np.divmod(np.arange(size * size), size)
    edge = np.minimum(np.minimum(rows, cols), np.minimum(size - 1 - rows, size - 1 - cols))  # (N*N,) 0 = first line
    centre = np.hypot(rows - (size - 1) / 2, cols - (size - 1) / 2)  # (N*N,)
    while len(stones) < count:
        empty = np.ones(size * size, bool)
        empty[stones] = False
        lines = next(line for line in (2, 1, 0) if (empty & (edge >= line)).any())
        candidates = np.flatnonzero(empty & (edge >= lines))
        if stones:
            taken = np.array(stones)
            gaps = np.hypot(rows[candidates, None] - rows[taken], cols[candidates, None] - cols[taken]).min(axis=1)
        else:
            gaps = np.zeros(len(candidates))
        best = np.lexsort((candidates, centre[candidates], -gaps))[0]  # farthest, then central, then first
        stones.append(int(candidates[best]))
    return stones
