"""Coordinate conversions: round trips over every point of every size, pass, and refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gocore.rules.coords import (
    GTP_COLUMNS,
    MAX_SIZE,
    CoordinateError,
    from_gtp,
    from_rowcol,
    from_sgf,
    is_pass,
    pass_move,
    to_gtp,
    to_rowcol,
    to_sgf,
)

SIZES = st.integers(min_value=2, max_value=MAX_SIZE)


@st.composite
def size_and_point(draw: st.DrawFn) -> tuple[int, int]:
    """A board size in 2..25 and an on-board point (never pass)."""
    size = draw(SIZES)
    return size, draw(st.integers(min_value=0, max_value=size * size - 1))


@st.composite
def size_and_move(draw: st.DrawFn) -> tuple[int, int]:
    """A board size in 2..25 and any move, pass included."""
    size = draw(SIZES)
    return size, draw(st.integers(min_value=0, max_value=size * size))


# --- round trips -----------------------------------------------------------------------------

@given(size_and_move())
def test_gtp_round_trip_for_every_move(case: tuple[int, int]) -> None:
    size, move = case
    assert from_gtp(to_gtp(move, size), size) == move


@given(size_and_move())
def test_sgf_round_trip_for_every_move(case: tuple[int, int]) -> None:
    size, move = case
    assert from_sgf(to_sgf(move, size), size) == move


@given(size_and_point())
def test_rowcol_round_trip_for_every_point(case: tuple[int, int]) -> None:
    size, move = case
    row, col = to_rowcol(move, size)
    assert 0 <= row < size and 0 <= col < size
    assert from_rowcol(row, col, size) == move


@given(SIZES, st.data())
def test_rowcol_is_row_major_from_the_top_left(size: int, data: st.DataObject) -> None:
    row = data.draw(st.integers(0, size - 1))
    col = data.draw(st.integers(0, size - 1))
    assert from_rowcol(row, col, size) == row * size + col


@pytest.mark.parametrize("size", range(2, MAX_SIZE + 1))
def test_every_point_has_a_distinct_gtp_and_sgf_name(size: int) -> None:
    points = range(size * size)
    gtp = {to_gtp(move, size) for move in points}
    sgf = {to_sgf(move, size) for move in points}
    assert len(gtp) == len(sgf) == size * size
    assert "pass" not in gtp and "" not in sgf


@given(size_and_point())
def test_gtp_and_sgf_agree_on_the_point(case: tuple[int, int]) -> None:
    """GTP counts rows from the bottom, SGF from the top: both name the same (row, col)."""
    size, move = case
    row, col = to_rowcol(move, size)
    gtp = to_gtp(move, size)
    sgf = to_sgf(move, size)
    assert gtp[0] == GTP_COLUMNS[col] and int(gtp[1:]) == size - row
    assert sgf == "abcdefghijklmnopqrstuvwxyz"[col] + "abcdefghijklmnopqrstuvwxyz"[row]


@given(size_and_point())
def test_lowercase_and_padded_gtp_vertices_are_accepted(case: tuple[int, int]) -> None:
    size, move = case
    vertex = to_gtp(move, size)
    assert from_gtp(vertex.lower(), size) == move
    assert from_gtp(f"  {vertex}\n", size) == move


@given(size_and_point())
def test_gtp_never_uses_the_letter_i(case: tuple[int, int]) -> None:
    size, move = case
    assert "I" not in to_gtp(move, size).upper()


# --- pass -------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", range(2, MAX_SIZE + 1))
def test_pass_is_n_squared_in_every_notation(size: int) -> None:
    assert pass_move(size) == size * size
    assert is_pass(size * size, size) and not is_pass(size * size - 1, size)
    assert to_rowcol(size * size, size) is None
    assert to_gtp(size * size, size) == "pass"
    assert to_sgf(size * size, size) == ""


@pytest.mark.parametrize("text", ["pass", "PASS", "Pass", " pass "])
def test_gtp_pass_is_case_insensitive(text: str) -> None:
    assert from_gtp(text, 9) == 81


@pytest.mark.parametrize("size", range(2, MAX_SIZE + 1))
def test_empty_sgf_point_is_pass(size: int) -> None:
    assert from_sgf("", size) == size * size


@pytest.mark.parametrize("size", range(2, 20))
def test_sgf_tt_is_pass_up_to_19x19(size: int) -> None:
    assert from_sgf("tt", size) == size * size


@pytest.mark.parametrize("size", range(20, MAX_SIZE + 1))
def test_sgf_tt_is_a_real_point_above_19x19(size: int) -> None:
    move = from_sgf("tt", size)
    assert move == from_rowcol(19, 19, size)
    assert to_sgf(move, size) == "tt"


# --- fixed examples ---------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("size", "move", "gtp", "sgf", "rowcol"),
    [
        (9, 0, "A9", "aa", (0, 0)),
        (9, 8, "J9", "ia", (0, 8)),
        (9, 72, "A1", "ai", (8, 0)),
        (9, 80, "J1", "ii", (8, 8)),
        (9, 40, "E5", "ee", (4, 4)),
        (9, 7, "H9", "ha", (0, 7)),
        (19, 15 * 19 + 3, "D4", "dp", (15, 3)),
        (19, 3 * 19 + 15, "Q16", "pd", (3, 15)),
        (19, 9 * 19 + 9, "K10", "jj", (9, 9)),
        (19, 360, "T1", "ss", (18, 18)),
        (13, 12, "N13", "ma", (0, 12)),
        (25, 24, "Z25", "ya", (0, 24)),
        (5, 24, "E1", "ee", (4, 4)),
    ],
)
def test_known_coordinates(size: int, move: int, gtp: str, sgf: str, rowcol: tuple[int, int]) -> None:
    assert to_gtp(move, size) == gtp
    assert to_sgf(move, size) == sgf
    assert to_rowcol(move, size) == rowcol
    assert from_gtp(gtp, size) == move
    assert from_sgf(sgf, size) == move
    assert from_rowcol(*rowcol, size) == move


def test_gtp_column_after_h_is_j() -> None:
    assert to_gtp(from_rowcol(8, 8, 9), 9) == "J1"
    assert from_gtp("J1", 9) == from_rowcol(8, 8, 9)
    assert from_gtp("H1", 9) == from_rowcol(8, 7, 9)


# --- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "vertex",
    ["I5", "i5", "Z99", "", " ", "A0", "A10", "K1", "J0", "A", "5", "AA1", "A-1", "A1.5", "pas", "tt",
     "D 4", "A+5", "A 5"],
)
def test_bad_gtp_vertices_raise_coordinate_error_on_9x9(vertex: str) -> None:
    with pytest.raises(CoordinateError):
        from_gtp(vertex, 9)


@pytest.mark.parametrize("vertex", ["A\u00b2", "A\u0663", "A\uff13"])
def test_gtp_vertex_with_non_ascii_digits_raises_coordinate_error(vertex: str) -> None:
    """GTP rows are ASCII digits; superscript two, Arabic-Indic three and full-width three are not."""
    with pytest.raises(CoordinateError):
        from_gtp(vertex, 9)


@given(st.integers(min_value=3, max_value=MAX_SIZE), st.data())
def test_top_row_and_last_column_are_off_a_board_one_line_smaller(size: int, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, size - 1))
    top_row = to_gtp(from_rowcol(0, index, size), size)  # GTP row `size`
    last_column = to_gtp(from_rowcol(index, size - 1, size), size)  # column letter `size`
    for vertex in (top_row, last_column):
        with pytest.raises(CoordinateError):
            from_gtp(vertex, size - 1)


@pytest.mark.parametrize("point", ["a", "abc", "AA", "a1", "1a", "jj", "za", "aj", "a ", "?a", "t"])
def test_bad_sgf_points_raise_coordinate_error_on_9x9(point: str) -> None:
    with pytest.raises(CoordinateError):
        from_sgf(point, 9)


@pytest.mark.parametrize(("row", "col"), [(-1, 0), (0, -1), (9, 0), (0, 9), (9, 9), (100, 100)])
def test_off_board_rowcol_raises_coordinate_error(row: int, col: int) -> None:
    with pytest.raises(CoordinateError):
        from_rowcol(row, col, 9)


@pytest.mark.parametrize("move", [-1, 82, 1000])
def test_moves_outside_the_board_raise_coordinate_error(move: int) -> None:
    for convert in (to_rowcol, to_gtp, to_sgf):
        with pytest.raises(CoordinateError):
            convert(move, 9)


@pytest.mark.parametrize("size", [0, 1, MAX_SIZE + 1, 30])
def test_unsupported_sizes_raise_coordinate_error(size: int) -> None:
    for convert in (to_gtp, to_sgf):
        with pytest.raises(CoordinateError):
            convert(0, size)
    for parse, text in ((from_gtp, "A1"), (from_sgf, "aa")):
        with pytest.raises(CoordinateError):
            parse(text, size)


def test_coordinate_error_is_a_value_error() -> None:
    assert issubclass(CoordinateError, ValueError)
