"""The Baghchal board: its 25 points, its lines, the fixed action space and the 8 symmetries.

Points are ints ``0..24``, row-major from the top-left, as Go's (`gocore.rules.coords`): point
``5 * row + col`` with row and col ``0..4``. The library's notation counts rows and columns from 1
(``33`` is the centre), so this module is the only place that converts between the two.

Lines: every orthogonal neighbour is joined; diagonal lines pass only through the points whose
row + col is even (the centre, the corners, the middles of the edges and the four points between
them), so a diagonal step or jump starts, passes and lands on even points only.

Actions (217, as the `baghchal` library's count, in our own order; moves travel between us and
the library as text, never as indices):

    0 .. 24      place a goat on point p
    25 .. 136    steps: for each from point in order, its neighbours in `DIRECTIONS` order (112)
    137 .. 216   jumps: for each from point in order, its jumps in `DIRECTIONS` order (80)

A step is a goat's move (movement phase) or a tiger's; a jump is a tiger's capture over the
goat on the point between. Tables are built once at import from the geometry (a few thousand
integer operations) and are read-only.
"""

from __future__ import annotations

import numpy as np

from gocore.rules import symmetry

SIZE = 5
POINTS = SIZE * SIZE
# (row, col) steps: N, NE, E, SE, S, SW, W, NW; the odd entries are diagonals.
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
NO_POINT = -1


def is_even_point(point: int) -> bool:
    """True if diagonal lines pass through `point` (row + col even)."""
    row, col = divmod(point, SIZE)
    return (row + col) % 2 == 0


def _along(point: int, direction: int, steps: int) -> int:
    """The point `steps` along `direction` from `point` on a line, or NO_POINT."""
    row, col = divmod(point, SIZE)
    d_row, d_col = DIRECTIONS[direction]
    is_diagonal = d_row != 0 and d_col != 0
    if is_diagonal and not is_even_point(point):
        return NO_POINT
    row, col = row + steps * d_row, col + steps * d_col
    return row * SIZE + col if 0 <= row < SIZE and 0 <= col < SIZE else NO_POINT


def _line_tables() -> tuple[np.ndarray, np.ndarray]:
    """(NEIGHBOUR (25, 8), BEYOND (25, 8)) int8: the point one and two steps along each direction
    on a line, NO_POINT where there is none."""
    neighbour = np.full((POINTS, 8), NO_POINT, np.int8)
    beyond = np.full((POINTS, 8), NO_POINT, np.int8)
    for point in range(POINTS):
        for direction in range(8):
            neighbour[point, direction] = _along(point, direction, 1)
            beyond[point, direction] = _along(point, direction, 2)
    return _frozen(neighbour, beyond)


def _frozen(*tables: np.ndarray) -> tuple[np.ndarray, ...]:
    """The tables, read-only."""
    for table in tables:
        table.flags.writeable = False
    return tables


NEIGHBOUR, BEYOND = _line_tables()


def _action_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(FROM, TO, OVER) (A,) int8 per action (FROM and OVER NO_POINT for a placement, OVER for a
    step), and ACTION_OF (25, 25) int16: the step or jump from a to b, -1 if none."""
    frm, to, over = [NO_POINT] * POINTS, list(range(POINTS)), [NO_POINT] * POINTS
    for jumps in (False, True):
        for point in range(POINTS):
            for direction in range(8):
                near, far = NEIGHBOUR[point, direction], BEYOND[point, direction]
                target = far if jumps else near
                if target != NO_POINT:
                    frm.append(point)
                    to.append(int(target))
                    over.append(int(near) if jumps else NO_POINT)
    action_of = np.full((POINTS, POINTS), -1, np.int16)
    for action in range(POINTS, len(frm)):
        action_of[frm[action], to[action]] = action
    return _frozen(np.array(frm, np.int8), np.array(to, np.int8), np.array(over, np.int8), action_of)


ACTION_FROM, ACTION_TO, ACTION_OVER, ACTION_OF = _action_tables()
NUM_ACTIONS = len(ACTION_FROM)  # 217
FIRST_STEP = POINTS
FIRST_JUMP = int(np.flatnonzero(ACTION_OVER != NO_POINT)[0])  # 137


def is_placement(action: int) -> bool:
    """True if `action` places a goat."""
    return 0 <= action < FIRST_STEP


def is_jump(action: int) -> bool:
    """True if `action` is a tiger's jump (a capture)."""
    return FIRST_JUMP <= action < NUM_ACTIONS


def adjacency() -> np.ndarray:
    """(25, 25) uint8: 1 where a line joins two points (symmetric)."""
    joined = np.zeros((POINTS, POINTS), np.uint8)
    for point in range(POINTS):
        for near in NEIGHBOUR[point]:
            if near != NO_POINT:
                joined[point, near] = 1
    return joined


def point_permutation(k: int) -> np.ndarray:
    """(25,) int64: ``perm[p]`` is where point p goes under symmetry k (`gocore.rules.symmetry`'s
    convention: ``symmetry.apply(planes, k)`` moves a plane's value at p to ``perm[p]``)."""
    return symmetry.move_permutation(k, SIZE)[:POINTS]


def _action_permutations() -> np.ndarray:
    """(8, A) int16: row k maps each action to its image under symmetry k."""
    table = np.empty((8, NUM_ACTIONS), np.int16)
    for k in symmetry.SYMMETRIES:
        points = point_permutation(k)
        table[k, :POINTS] = points
        moved_from, moved_to = points[ACTION_FROM[POINTS:]], points[ACTION_TO[POINTS:]]
        table[k, POINTS:] = ACTION_OF[moved_from, moved_to]
    if (table < 0).any():  # a symmetry that took a line off the lines: the geometry is wrong
        raise AssertionError("a symmetry of the square maps a Baghchal line off the board's lines")
    table.flags.writeable = False
    return table


ACTION_PERMUTATIONS = _action_permutations()


def action_permutation(k: int) -> np.ndarray:
    """(A,) int16: ``perm[a]`` is action a under symmetry k (placements go where their point goes;
    a step or jump goes from and to the images of its points)."""
    return ACTION_PERMUTATIONS[k]


# -------------------------------------------------------------- coordinates
def point_text(point: int) -> str:
    """The library's two digits of a point: row then column, counted from 1 (``"33"`` the centre)."""
    if not 0 <= point < POINTS:
        raise ValueError(f"point {point} is outside 0..{POINTS - 1}")
    row, col = divmod(point, SIZE)
    return f"{row + 1}{col + 1}"


def point_of_text(text: str) -> int:
    """The point of two digits row, column, each 1..5 (``"11"`` top-left); ValueError otherwise."""
    if len(text) != 2 or not all(ch in "12345" for ch in text):
        raise ValueError(f"{text!r} is not a point: two digits 1-5, row then column")
    return (int(text[0]) - 1) * SIZE + int(text[1]) - 1
