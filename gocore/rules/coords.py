"""Coordinates: the only module that converts between move ints and human or file notations.

A move is an int. For a board of size N the points are ``0 .. N*N-1``, row-major from the
top-left corner, and ``pass_move(N) == N*N`` (also the policy index of pass).

=============  ========================  =====================  =====================
system         top-left corner           bottom-left corner     pass
=============  ========================  =====================  =====================
move (int)     ``0``                     ``(N-1)*N``            ``N*N``
(row, col)     ``(0, 0)``                ``(N-1, 0)``           ``None``
GTP vertex     ``"A<N>"`` (``A9``)       ``"A1"``               ``"pass"``
SGF point      ``"aa"``                  ``"a<N-th letter>"``   ``""`` (``"tt"`` read)
=============  ========================  =====================  =====================

GTP columns skip the letter ``I`` (``A..H, J..T``) and count rows from the bottom; SGF counts
columns then rows from the top-left with lower-case letters. Board sizes are 2..25 here (GTP's
letters run out at 25); the engine itself supports 5..19.
"""

from __future__ import annotations

from gocore.errors import GozeroError

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_SIZE = len(GTP_COLUMNS)


class CoordinateError(GozeroError, ValueError):
    """A vertex or point that does not name a move on this board."""


def _check_size(size: int) -> None:
    if not 2 <= size <= MAX_SIZE:
        raise CoordinateError(f"board size {size} is outside 2..{MAX_SIZE}")


def pass_move(size: int) -> int:
    """The pass move (and the policy index of pass) for a board of this size."""
    return size * size


def is_pass(move: int, size: int) -> bool:
    """True if `move` is the pass move for this board size."""
    return move == size * size


def _check_move(move: int, size: int) -> None:
    if not 0 <= move <= size * size:
        raise CoordinateError(f"move {move} is outside 0..{size * size} for a {size}x{size} board")


def to_rowcol(move: int, size: int) -> tuple[int, int] | None:
    """(row, col) from the top-left of a move, or None for pass."""
    _check_move(move, size)
    if move == size * size:
        return None
    return divmod(move, size)


def from_rowcol(row: int, col: int, size: int) -> int:
    """The move at (row, col), row 0 being the top line."""
    if not (0 <= row < size and 0 <= col < size):
        raise CoordinateError(f"(row={row}, col={col}) is off a {size}x{size} board")
    return row * size + col


def to_gtp(move: int, size: int) -> str:
    """GTP vertex such as ``"D4"`` (column letters skip ``I``), or ``"pass"``."""
    _check_size(size)
    rowcol = to_rowcol(move, size)
    if rowcol is None:
        return "pass"
    row, col = rowcol
    return f"{GTP_COLUMNS[col]}{size - row}"


def from_gtp(text: str, size: int) -> int:
    """Move for a GTP vertex (case-insensitive; ``"pass"``); raises CoordinateError if off-board."""
    _check_size(size)
    vertex = text.strip().upper()
    if vertex == "PASS":
        return pass_move(size)
    digits = vertex[1:]
    if len(vertex) < 2 or vertex[0] not in GTP_COLUMNS or not (digits.isascii() and digits.isdigit()):
        raise CoordinateError(f"{text!r} is not a GTP vertex (like 'D4' or 'pass')")
    col = GTP_COLUMNS.index(vertex[0])
    row = size - int(vertex[1:])
    if not (0 <= row < size and col < size):
        raise CoordinateError(f"{text!r} is off a {size}x{size} board")
    return from_rowcol(row, col, size)


def to_sgf(move: int, size: int) -> str:
    """SGF point such as ``"dd"`` (column then row from the top-left); ``""`` for pass (FF[4])."""
    _check_size(size)
    rowcol = to_rowcol(move, size)
    if rowcol is None:
        return ""
    row, col = rowcol
    return SGF_LETTERS[col] + SGF_LETTERS[row]


def from_sgf(text: str, size: int) -> int:
    """Move for an SGF point; ``""`` is pass, and so is ``"tt"`` on boards up to 19x19."""
    _check_size(size)
    point = text.strip()
    if point == "" or (point == "tt" and size <= 19):
        return pass_move(size)
    if len(point) != 2 or point[0] not in SGF_LETTERS or point[1] not in SGF_LETTERS:
        raise CoordinateError(f"{text!r} is not an SGF point (two lower-case letters)")
    col, row = SGF_LETTERS.index(point[0]), SGF_LETTERS.index(point[1])
    if not (row < size and col < size):
        raise CoordinateError(f"SGF point {text!r} is off a {size}x{size} board")
    return from_rowcol(row, col, size)
