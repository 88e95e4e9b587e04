"""Value data: one position per game, after the random move at U, with the outcome for its side to move."""

from __future__ import annotations

import numpy as np
import torch

from gocore.nn import features
from gocore.nn.nets import NetConfig, build_net
from gocore.nn.value_data import value_columns, value_samples

SIZE = 5


def policy_preferring(point: int, seed: int):
    """A tiny policy net that plays `point` whenever it is a candidate."""
    torch.manual_seed(seed)
    net = build_net(NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", family="policy", blocks=1, filters=8))
    with torch.no_grad():
        net.points.point_bias[point] = 50.0
    return net.eval()


def test_one_position_per_game_after_the_random_move_with_the_outcome_of_its_side_to_move():
    sl, rl = policy_preferring(0, 1), policy_preferring(24, 2)
    samples = value_samples(sl, rl, 12, SIZE, 0.5, np.random.default_rng(0), max_u=6)
    assert len(samples.positions) == 12 and samples.ended_early == 0
    assert [p.move_number for p in samples.positions] == list(samples.u + 1)
    to_play = np.array([p.to_play for p in samples.positions])
    assert np.array_equal(samples.z, samples.winners * to_play) and set(np.abs(samples.z)) == {1}
    for position, u, next_move in zip(samples.positions, samples.u, samples.next_moves):
        if u >= 1:  # black's first move came from the SL policy
            assert position.stones.flat[0] == 1
        if position.is_legal(24) and position.stones.flat[24] == 0:  # the move after s_{U+1} is RL's
            assert next_move == 24


def test_u_is_drawn_over_the_plausible_length():
    sl, rl = policy_preferring(0, 1), policy_preferring(24, 2)
    samples = value_samples(sl, rl, 40, SIZE, 0.5, np.random.default_rng(1), max_u=3)
    assert set(samples.u) == {0, 1, 2}
    assert all(p.to_play == (-1 if u % 2 == 0 else 1) for p, u in zip(samples.positions, samples.u))


def test_columns_hold_the_sampled_positions_and_their_targets():
    sl, rl = policy_preferring(0, 1), policy_preferring(24, 2)
    samples = value_samples(sl, rl, 3, SIZE, 0.5, np.random.default_rng(2), max_u=4)
    columns = value_columns(samples, ["a", "b", "c"], encoder="agz17", generation=0, model_version="m/1")
    planes = features.unpack_planes(columns["planes"], 17, SIZE)
    assert np.array_equal(planes, features.encode_positions(samples.positions, "agz17"))
    assert np.array_equal(columns["z"], samples.z) and np.array_equal(columns["pi"].argmax(1), samples.next_moves)
