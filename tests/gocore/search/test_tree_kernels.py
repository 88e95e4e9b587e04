"""The tree kernels against the numpy formulas they replace (`benchmarks.baselines.feed_today`, `gumbel`'s
completed_q, sigma, improved_policy), on random nodes: unvisited and visited children, virtual
losses in flight, illegal moves, one legal move, terminal results, float32 and float64 priors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from benchmarks.baselines import feed_today
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position
from gocore.search import tree_kernels
from gocore.search.gumbel import (
    GumbelConfig,
    GumbelSearch,
    completed_q,
    improved_policy,
    logits_of,
    root_search,
    search_factory,
    select_child,
    sigma,
)
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import play_games
from gocore.search.tree import Node

SIZES = (5, 9, 19)
CASES = ("fresh", "some visited", "all visited", "virtual loss", "terminal results", "one legal", "only pass")


def random_node(size: int, case: str, rng: np.random.Generator, dtype: type = np.float32) -> Node:
    """An expanded node (through the numpy `expand`) whose children look like `case`."""
    moves = size * size + 1
    legal = rng.random(moves) < 0.7
    if case == "one legal":
        legal[:] = False
        legal[rng.integers(moves)] = True
    elif case == "only pass":
        legal[:] = False
        legal[-1] = True
    legal[rng.integers(moves)] = True
    logits = rng.normal(size=moves) * 2
    prior = np.exp(logits - logits.max()).astype(dtype)
    node = Node(Position.initial(size), None, -1, None)
    feed_today.expand(node, legal, prior)
    node.value = float(rng.uniform(-1, 1))
    searched = np.flatnonzero(legal)
    visited = {"fresh": searched[:0], "all visited": searched}.get(
        case, rng.choice(searched, size=rng.integers(1, len(searched) + 1), replace=False))
    node.child_N[visited] = rng.integers(1, 20, size=len(visited)).astype(float)
    if case == "terminal results":  # children whose games ended: W = +-N
        node.child_W[visited] = node.child_N[visited] * rng.choice([-1.0, 1.0], size=len(visited))
    else:
        node.child_W[visited] = node.child_N[visited] * rng.uniform(-1, 1, size=len(visited))
    if case == "virtual loss":  # losses charged on some edges, no result back yet
        pending = rng.choice(searched, size=min(3, len(searched)), replace=False)
        node.child_N[pending] += 1.0
        node.child_W[pending] -= 1.0
    node.visits = 1.0 + node.child_N.sum()
    return node


def nodes(count: int = 40):
    rng = np.random.default_rng(28)
    for size in SIZES:
        for case in CASES:
            for dtype in (np.float32, np.float64):
                for _ in range(count // len(CASES) + 1):
                    yield random_node(size, case, rng, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pairwise_sum_is_numpys_sum_to_the_bit(dtype):
    rng = np.random.default_rng(1)
    for count in [*range(0, 300), 361, 362, 500, 1024, 1031, 5000]:
        values = (rng.random(count + 3) * rng.choice([1e-3, 1.0, 1e3])).astype(dtype)
        assert tree_kernels.pairwise_sum(values, 3, count) == values[3:].sum()


def test_expand_equals_numpys_expand_to_the_bit():
    rng = np.random.default_rng(2)
    position = Position.initial(9)
    for case in CASES + ("vanishing priors",):
        for dtype in (np.float32, np.float64):
            legal = rng.random(82) < 0.5
            legal[{"one legal": rng.integers(82), "only pass": 81}.get(case, 0)] = True
            prior = rng.random(82).astype(dtype)
            if case == "vanishing priors":  # nothing on the legal moves: uniform over them
                prior[legal] = 0.0
            new, old = Node(position, None, -1, None), Node(position, None, -1, None)
            new.expand(legal, prior)
            feed_today.expand(old, legal, prior)
            for name in ("prior", "child_P", "child_N", "child_W", "illegal"):
                assert getattr(new, name).dtype == getattr(old, name).dtype, name
                assert np.array_equal(getattr(new, name), getattr(old, name)), name


def test_puct_choice_is_numpys_argmax():
    for node in nodes():
        for c_puct, visits in ((0.0, node.visits), (1.25, node.visits), (5.0, node.visits), (1.25, 0.0), (2, 7.0)):
            node.visits = visits
            assert node.best_move(c_puct) == feed_today.best_move(node, c_puct)


def test_gumbel_sigma_equals_the_numpy_formulas():
    config = GumbelConfig()
    for node in nodes():
        out = np.empty(len(node.child_N))
        total = tree_kernels.gumbel_sigma(node.child_N, node.child_W, node.prior, node.illegal, node.value,
                                          config.c_visit, config.c_scale, out)
        assert total == node.child_N.sum()
        np.testing.assert_allclose(out, sigma(completed_q(node), node, config), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", [0.1, 1.0])
def test_gumbel_choice_is_the_numpy_argmax(scale):
    config = GumbelConfig(c_scale=scale)
    for node in nodes():
        assert select_child(node, config) == feed_today.select_child(node, config)


def test_gumbel_choice_on_a_fresh_node_takes_the_highest_prior_first_on_ties():
    node = random_node(9, "fresh", np.random.default_rng(3))
    legal = np.flatnonzero(node.illegal == 0)
    node.prior[legal] = node.child_P[legal] = np.float32(1 / len(legal))
    node.log_prior = None
    assert select_child(node, GumbelConfig()) == legal[0]
    assert np.allclose(improved_policy(node, GumbelConfig())[legal], 1 / len(legal))
    assert np.isneginf(logits_of(node)[node.illegal != 0]).all()


def test_a_batch_expands_as_node_by_node_and_gumbels_log_priors_are_logits_of():
    rng = np.random.default_rng(4)
    position, moves = Position.initial(19), 362
    legal = rng.random((9, moves)) < 0.6
    legal[:, -1] = True
    priors = rng.random((9, moves)).astype(np.float32)
    priors[3, legal[3]] = 0.0  # vanished: uniform
    batch = [Node(position, None, -1, None) for _ in range(9)]
    GumbelSearch._expand_leaves(batch, legal, priors)
    for node, moves_b, prior in zip(batch, legal, priors):
        alone = Node(position, None, -1, None)
        feed_today.expand(alone, moves_b, prior)
        for name in ("prior", "child_P", "child_N", "child_W", "illegal"):
            assert getattr(node, name).dtype == getattr(alone, name).dtype, name
            assert np.array_equal(getattr(node, name), getattr(alone, name)), name
        assert np.array_equal(logits_of(node), feed_today.logits_of(alone))


def test_improved_policy_is_the_numpy_softmax():
    config = GumbelConfig()
    for node in nodes():
        scores = feed_today.logits_of(node) + sigma(completed_q(node), node, config)
        weights = np.exp(scores - scores.max())
        np.testing.assert_allclose(improved_policy(node, config), weights / weights.sum(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("search", ["puct", "gumbel"])
def test_selfplay_plays_todays_games(search):
    """Whole self-play games with a random tiny net (uneven priors and values): the same moves and
    visits as with today's tree code put back, improved policies equal to float precision."""
    torch.manual_seed(5)
    evaluator = NetEvaluator(build_net(preset("tiny", 9, 17)).eval(), device="cpu")
    config = SELFPLAY.replace(sims=16, max_moves=30, resign_threshold=None)
    new_search = search_factory(root_search(search))
    games = play_games(evaluator, config, 3, size=9, seed=11, new_search=new_search)
    with feed_today.todays_tree(True):
        todays = play_games(evaluator, config, 3, size=9, seed=11, new_search=new_search)
    assert [game.moves for game in games] == [game.moves for game in todays]
    for game, today in zip(games, todays):
        for pi, today_pi in zip(game.pis, today.pis):
            np.testing.assert_allclose(pi, today_pi, rtol=1e-5, atol=1e-7)
