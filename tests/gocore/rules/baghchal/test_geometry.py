"""The Baghchal board's geometry: lines, the 217 actions and the 8 symmetries of the square."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules import symmetry
from gocore.rules.baghchal.geometry import (
    ACTION_FROM,
    ACTION_OVER,
    ACTION_TO,
    FIRST_JUMP,
    NUM_ACTIONS,
    POINTS,
    action_permutation,
    adjacency,
    is_even_point,
    point_of_text,
    point_permutation,
    point_text,
)
from gocore.rules.baghchal.position import Position, random_playouts


def test_the_action_space_has_25_placements_112_steps_and_80_jumps() -> None:
    assert NUM_ACTIONS == 217
    assert FIRST_JUMP - POINTS == 112 and NUM_ACTIONS - FIRST_JUMP == 80
    pairs = set(zip(ACTION_FROM[POINTS:].tolist(), ACTION_TO[POINTS:].tolist()))
    assert len(pairs) == 192  # no from-to pair twice


def test_lines_join_orthogonal_neighbours_and_diagonal_ones_only_between_even_points() -> None:
    joined = adjacency()
    assert (joined == joined.T).all() and joined.sum() == 2 * (40 + 16)
    for a in range(POINTS):
        for b in range(POINTS):
            (ra, ca), (rb, cb) = divmod(a, 5), divmod(b, 5)
            orthogonal = abs(ra - rb) + abs(ca - cb) == 1
            diagonal = abs(ra - rb) == 1 == abs(ca - cb) and is_even_point(a) and is_even_point(b)
            assert joined[a, b] == (orthogonal or diagonal)


def test_every_jump_goes_straight_along_a_line_over_its_middle_point() -> None:
    joined = adjacency()
    for action in range(FIRST_JUMP, NUM_ACTIONS):
        start, over, end = int(ACTION_FROM[action]), int(ACTION_OVER[action]), int(ACTION_TO[action])
        assert joined[start, over] and joined[over, end]
        (r0, c0), (r1, c1), (r2, c2) = divmod(start, 5), divmod(over, 5), divmod(end, 5)
        assert (2 * r1, 2 * c1) == (r0 + r2, c0 + c2)  # over is the midpoint: a straight line


@pytest.mark.parametrize("k", symmetry.SYMMETRIES)
def test_the_line_pattern_is_invariant_under_each_symmetry(k: int) -> None:
    joined = adjacency()
    perm = np.zeros((POINTS, POINTS), np.int64)  # P[p, perm(p)] = 1
    perm[np.arange(POINTS), point_permutation(k)] = 1
    assert np.array_equal(perm.T @ joined @ perm, joined)


@pytest.mark.parametrize("k", symmetry.SYMMETRIES)
def test_action_permutations_are_permutations_that_move_points_like_planes(k: int) -> None:
    actions = action_permutation(k)
    assert sorted(actions.tolist()) == list(range(NUM_ACTIONS))
    plane = np.arange(POINTS).reshape(5, 5)
    moved = symmetry.apply(plane, k).reshape(-1)  # value p lands where point p goes
    assert all(moved[actions[p]] == p for p in range(POINTS))
    inverse = action_permutation(symmetry.inverse(k))
    assert np.array_equal(inverse[actions], np.arange(NUM_ACTIONS))


def _symmetric(position: Position, k: int) -> Position:
    """The position with every piece moved by symmetry k."""
    points = point_permutation(k)
    move = lambda bits: sum(1 << int(points[p]) for p in range(POINTS) if (bits >> p) & 1)
    return Position(move(position.goats), move(position.tigers), position.placed, position.captured,
                    position.to_play, position.ply, (), position.rules)


@pytest.mark.parametrize("seed", range(4))
def test_legal_actions_of_a_symmetric_position_are_the_symmetric_actions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    position = Position.initial()
    while not position.is_game_over():
        for k in symmetry.SYMMETRIES:
            mirrored = _symmetric(position, k)
            expected = np.zeros(NUM_ACTIONS, bool)
            expected[action_permutation(k)[np.flatnonzero(position.legal_moves())]] = True
            assert np.array_equal(mirrored.legal_moves(), expected)
        position = position.play(int(rng.choice(np.flatnonzero(position.legal_moves()))))
    assert random_playouts(position, 1, 0)[2][0] > 0  # a finished position: the playout ends at once


def test_points_read_and_write_as_row_then_column_from_one() -> None:
    assert point_text(0) == "11" and point_text(12) == "33" and point_text(24) == "55"
    assert all(point_of_text(point_text(p)) == p for p in range(POINTS))
    for bad in ("06", "60", "1", "abc"):
        with pytest.raises(ValueError):
            point_of_text(bad)
