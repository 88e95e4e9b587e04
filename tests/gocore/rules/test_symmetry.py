"""The 8 dihedral symmetries: pinned to the rot90/fliplr definition, inverses, moves vs planes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gocore.rules import symmetry

sizes = st.integers(5, 19)
symmetries = st.sampled_from(symmetry.SYMMETRIES)
seeds = st.integers(0, 2**32 - 1)


def random_planes(seed: int, size: int, leading: tuple[int, ...] = (3,)) -> np.ndarray:
    """(…, N, N) int16 with (almost surely) distinct values, so every symmetry changes it."""
    return np.random.default_rng(seed).integers(-1000, 1000, size=leading + (size, size), dtype=np.int16)


def by_definition(board: np.ndarray, k: int) -> np.ndarray:
    """The issue's definition for one (N, N) array."""
    turned = np.rot90(board, k % 4)
    return np.fliplr(turned) if k >= 4 else turned


@settings(max_examples=60, deadline=None)
@given(seed=seeds, size=sizes, k=symmetries)
def test_apply_matches_rot90_then_fliplr_on_every_plane(seed, size, k):
    planes = random_planes(seed, size, leading=(2, 3))  # (2, 3, N, N)
    out = symmetry.apply(planes, k)
    assert out.shape == planes.shape
    for index in np.ndindex(2, 3):
        np.testing.assert_array_equal(out[index], by_definition(planes[index], k))


def test_symmetry_1_turns_counter_clockwise_and_4_mirrors_left_right():
    top_right, top_left = 4, 0  # 5x5, row-major from the top-left
    assert symmetry.apply_to_move(top_right, 1, 5) == top_left
    assert symmetry.apply_to_move(top_left, 4, 5) == top_right
    assert symmetry.apply_to_move(top_left, 2, 5) == 24  # 180 degrees: to the bottom-right


@settings(max_examples=60, deadline=None)
@given(seed=seeds, size=sizes, k=symmetries)
def test_inverse_undoes_every_symmetry_on_planes_and_moves(seed, size, k):
    planes = random_planes(seed, size)
    np.testing.assert_array_equal(symmetry.apply(symmetry.apply(planes, k), symmetry.inverse(k)), planes)
    for move in range(size * size + 1):
        there = symmetry.apply_to_move(move, k, size)
        assert symmetry.apply_to_move(there, symmetry.inverse(k), size) == move


def test_inverse_table_pairs_opposite_rotations_and_reflections_are_involutions():
    assert symmetry.INVERSE == (0, 3, 2, 1, 4, 5, 6, 7)
    assert [symmetry.inverse(k) for k in symmetry.SYMMETRIES] == list(symmetry.INVERSE)


@settings(max_examples=40, deadline=None)
@given(size=sizes, k=symmetries, data=st.data())
def test_move_goes_where_its_one_hot_plane_goes(size, k, data):
    move = data.draw(st.integers(0, size * size - 1))
    one_hot = np.zeros(size * size, dtype=np.uint8)
    one_hot[move] = 1
    moved = symmetry.apply(one_hot.reshape(size, size), k).reshape(-1)
    assert int(np.flatnonzero(moved)[0]) == symmetry.apply_to_move(move, k, size)


@pytest.mark.parametrize("size", [5, 9, 19])
@pytest.mark.parametrize("k", symmetry.SYMMETRIES)
def test_pass_is_fixed(size, k):
    assert symmetry.apply_to_move(size * size, k, size) == size * size
    assert symmetry.move_permutation(k, size)[size * size] == size * size


@pytest.mark.parametrize("size", [5, 9, 19])
def test_the_8_symmetries_are_distinct_on_a_generic_board(size):
    board = np.arange(size * size).reshape(size, size)
    images = {symmetry.apply(board, k).tobytes() for k in symmetry.SYMMETRIES}
    assert len(images) == 8
    assert len({symmetry.move_permutation(k, size).tobytes() for k in symmetry.SYMMETRIES}) == 8


@settings(max_examples=60, deadline=None)
@given(seed=seeds, size=sizes, k=symmetries)
def test_gather_index_on_flat_planes_equals_apply(seed, size, k):
    planes = random_planes(seed, size)  # (3, N, N)
    flat = planes.reshape(3, size * size)
    expected = symmetry.apply(planes, k).reshape(3, size * size)
    np.testing.assert_array_equal(flat[..., symmetry.gather_index(k, size)], expected)
    np.testing.assert_array_equal(flat[..., symmetry.point_permutation(k, size)], expected)
    np.testing.assert_array_equal(flat[..., symmetry.gather_table(size)[k]], expected)


@pytest.mark.parametrize("size", [5, 9, 19])
def test_move_permutation_scatters_what_gather_index_gathers(size):
    for k in symmetry.SYMMETRIES:
        perm, gather = symmetry.move_permutation(k, size), symmetry.gather_index(k, size)
        np.testing.assert_array_equal(np.sort(perm), np.arange(size * size + 1))
        np.testing.assert_array_equal(perm[gather], np.arange(size * size))
        np.testing.assert_array_equal(symmetry.move_table(size)[k], perm)


def test_compose_matches_applying_one_symmetry_after_another():
    board = random_planes(7, 6, leading=())
    for first in symmetry.SYMMETRIES:
        assert symmetry.compose(first, symmetry.inverse(first)) == symmetry.IDENTITY
        for then in symmetry.SYMMETRIES:
            both = symmetry.apply(symmetry.apply(board, first), then)
            np.testing.assert_array_equal(both, symmetry.apply(board, symmetry.compose(first, then)))


def test_tables_are_cached_and_read_only():
    assert symmetry.gather_index(3, 9) is symmetry.gather_index(3, 9)
    for table in (symmetry.gather_index(3, 9), symmetry.move_permutation(3, 9), symmetry.gather_table(9),
                  symmetry.move_table(9), symmetry.compose_table()):
        with pytest.raises(ValueError):
            table[0] = 1


@pytest.mark.parametrize("bad", [-1, 8, 1.5, "1"])
def test_unknown_symmetry_is_refused(bad):
    with pytest.raises(ValueError, match="0..7"):
        symmetry.apply(np.zeros((5, 5)), bad)


def test_move_off_the_board_is_refused():
    with pytest.raises(ValueError, match="outside"):
        symmetry.apply_to_move(26, 1, 5)
