"""The training-row core both games' self-play use (gocore/search/rows.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules import symmetry
from gocore.rules.baghchal.game import BAGHCHAL
from gocore.rules.baghchal.geometry import NUM_ACTIONS
from gocore.rules.game import GO, GoGame
from gocore.search.rows import id_columns, recorded_moves, symmetric_policies, value_targets


def test_recorded_moves_are_the_full_searches_or_every_move_without_flags():
    assert recorded_moves([True, False, True], 3).tolist() == [True, False, True]
    assert recorded_moves([], 4).tolist() == [True] * 4
    with pytest.raises(ValueError, match="2 search flags for 3 moves"):
        recorded_moves([True, False], 3)


def test_value_targets_are_the_movers_result_and_a_draw_is_zero():
    winners, movers = np.array([1, 1, -1, 0, 0]), np.array([1, -1, 1, 1, -1])
    z = value_targets(winners, movers)
    assert z.dtype == np.int8 and z.tolist() == [1, -1, -1, 0, 0]


@pytest.mark.parametrize("k", symmetry.SYMMETRIES)
def test_a_go_policy_moves_with_the_board_and_keeps_its_pass(k: int):
    game = GoGame(5)
    rng = np.random.default_rng(k)
    pis = rng.dirichlet(np.ones(26), size=3).astype(np.float32)
    moved = symmetric_policies(game, pis, k)
    boards = pis[:, :25].reshape(3, 5, 5)
    assert np.array_equal(moved[:, :25].reshape(3, 5, 5), symmetry.apply(boards, k))
    assert np.array_equal(moved[:, 25], pis[:, 25]) and np.allclose(moved.sum(axis=1), pis.sum(axis=1))


def test_a_baghchal_policy_moves_by_the_games_action_permutation():
    pis = np.eye(NUM_ACTIONS, dtype=np.float32)[[0, 30, 200]]  # one action each
    for k in symmetry.SYMMETRIES:
        moved = symmetric_policies(BAGHCHAL, pis, k)
        assert np.flatnonzero(moved[1]).tolist() == [int(BAGHCHAL.action_permutation(k)[30])]
    assert np.array_equal(symmetric_policies(BAGHCHAL, pis, 0), pis)
    assert not np.array_equal(symmetric_policies(GO, np.eye(82, dtype=np.float32)[[3]], 1),
                              np.eye(82, dtype=np.float32)[[3]])


def test_id_columns_repeat_each_games_id_by_its_rows():
    columns = id_columns(["a", "b", "c"], [2, 0, 1], 7, "m/3")
    assert columns["game_id"].tolist() == ["a", "a", "c"]
    assert columns["generation"].tolist() == [7, 7, 7] and columns["generation"].dtype == np.int32
    assert columns["model_version"].tolist() == ["m/3"] * 3
    with pytest.raises(ValueError, match="2 games but 3 ids"):
        id_columns(["a", "b", "c"], [1, 1], 0, "m/1")
