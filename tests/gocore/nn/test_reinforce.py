"""REINFORCE: the gradient's sign on constructed games, the baseline, and who the learner is in
played games."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gocore.nn import features
from gocore.nn.nets import NetConfig, build_net
from gocore.nn.reinforce import PolicyGames, advantages, play_policy_games, reinforce_step, sample_moves
from gocore.rules.board import Position, candidate_moves

SIZE = 5


def tiny_policy(seed: int = 0, family: str = "rl"):
    torch.manual_seed(seed)
    config = NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", family=family, blocks=1, filters=8)
    return build_net(config).eval()


def constructed(moves: list[int], outcomes: list[float]) -> PolicyGames:
    """One learner move per game, all from the empty board: game i played moves[i] and ended outcomes[i]."""
    start = Position.initial(SIZE)
    planes = np.repeat(features.encode_positions([start], "agz17"), len(moves), axis=0)
    return PolicyGames(planes=planes, moves=np.array(moves, np.int64),
                       candidates=np.repeat(candidate_moves(start)[None], len(moves), axis=0),
                       game=np.arange(len(moves), dtype=np.int64), outcomes=np.array(outcomes, np.float32),
                       lengths=np.full(len(moves), 10, np.int64))


def probabilities(net) -> np.ndarray:
    with torch.no_grad():
        logits = net(torch.from_numpy(features.encode_positions([Position.initial(SIZE)], "agz17")).float())
    return torch.softmax(logits, dim=1)[0].numpy()


@pytest.mark.parametrize("baseline", ["mean", "none"])
def test_a_won_game_makes_its_move_likelier_and_a_lost_game_its_move_rarer(baseline: str):
    net = tiny_policy()
    before = probabilities(net)
    reinforce_step(net, torch.optim.SGD(net.parameters(), lr=0.5), constructed([6, 18], [1.0, -1.0]), baseline)
    after = probabilities(net)
    assert after[6] > before[6] and after[18] < before[18]


def test_with_no_baseline_a_lone_loss_pushes_its_move_down():
    net = tiny_policy()
    before = probabilities(net)
    reinforce_step(net, torch.optim.SGD(net.parameters(), lr=0.5), constructed([12], [-1.0]), "none")
    assert probabilities(net)[12] < before[12]


def test_the_mean_baseline_cancels_outcomes_every_game_shares():
    games = constructed([6, 18, 12], [1.0, 1.0, 1.0])
    assert np.all(advantages(games, "mean") == 0) and np.all(advantages(games, "none") == 1)
    net = tiny_policy()
    before = [p.detach().clone() for p in net.parameters()]
    reinforce_step(net, torch.optim.SGD(net.parameters(), lr=0.5), games, "mean")
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))


def test_the_learner_plays_black_in_even_games_and_its_outcomes_are_its_own():
    games = play_policy_games(tiny_policy(1), tiny_policy(2, "policy"), 4, SIZE, 0.5, np.random.default_rng(3))
    for g in range(4):
        rows = np.flatnonzero(games.game == g)
        black_moves = (games.lengths[g] + 1) // 2
        assert len(rows) == (black_moves if g % 2 == 0 else games.lengths[g] - black_moves)
        black_to_play = games.planes[rows, 16]  # agz17's last plane: all ones when black is to play
        assert np.all(black_to_play == (1 if g % 2 == 0 else 0))
    assert set(np.abs(games.outcomes)) <= {1.0}  # komi 0.5: no jigo
    assert np.all(games.candidates[np.arange(len(games.moves)), games.moves])


def test_sampling_follows_a_policy_that_prefers_one_point():
    net = tiny_policy()
    with torch.no_grad():
        net.points.point_bias[7] = 50.0
    moves, candidates = sample_moves(net, [Position.initial(SIZE)] * 8, np.random.default_rng(0))
    assert np.all(moves == 7) and candidates.shape == (8, SIZE * SIZE + 1)
