"""Fitting the rollout policy: examples from planes, a falling loss, accuracy measures."""

from __future__ import annotations

import numpy as np
import torch

from gocore.nn import rollout_training
from gocore.nn.features import encode_position, get_encoder
from gocore.nn.nets import build_net
from gocore.nn.rollout_training import RolloutTrainConfig
from gocore.rules.board import Position


def tiny_examples() -> rollout_training.Examples:
    """Positions of a few random games, the 'expert' always playing next to the last stone."""
    rng = np.random.default_rng(0)
    encoder = get_encoder("agz17")
    planes, moves = [], []
    for _ in range(6):
        position = Position.initial(5)
        for _ in range(12):
            legal = np.flatnonzero(position.legal_moves()[:-1])
            last = position.last_move
            near = [m for m in legal if last is not None and abs(m // 5 - last // 5) + abs(m % 5 - last % 5) == 1]
            move = int(rng.choice(near or legal))
            planes.append(encode_position(position, encoder))
            moves.append(move)
            position = position.play(move)
    return rollout_training.examples(np.stack(planes), np.array(moves), encoder.plane_names, 5)


def test_training_lowers_the_loss_and_learns_the_distance_feature() -> None:
    data = tiny_examples()
    torch.manual_seed(0)
    net = build_net({"board_size": 5, "in_planes": 17, "family": "rollout"})
    before = rollout_training.loss_of(net, data.ids, data.targets).item()
    reports = []
    rollout_training.fit(net, data, RolloutTrainConfig(steps=60, batch_size=32, lr=0.05),
                         on_loss=lambda step, loss: reports.append(loss), report_every=20)
    after = rollout_training.loss_of(net, data.ids, data.targets).item()
    assert after < 0.8 * before and len(reports) == 3
    assert rollout_training.accuracy(net, data) > 2 * rollout_training.uniform_accuracy(data)


def test_passes_and_non_candidates_are_not_examples() -> None:
    encoder = get_encoder("agz17")
    position = Position.initial(5).play(12)
    planes = np.stack([encode_position(position, encoder)] * 3)
    data = rollout_training.examples(planes, np.array([25, 12, 7]), encoder.plane_names, 5)
    assert data.targets.tolist() == [7] and data.rows.tolist() == [2]  # a pass, an occupied point, a move
