"""Gumbel root search: sequential halving spends the budget exactly, the zero-noise move and the
improved policy follow the paper's formulas, completed Q fills unvisited moves with v_mix, the
search tells a won semeai, and Gumbel self-play is batched in lockstep and reproducible."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
import torch

from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp
from gocore.search.gumbel import GumbelConfig, GumbelSearch, completed_q, halving_schedule, improved_policy
from gocore.search.mcts import SELFPLAY, MCTSConfig, Node
from gocore.search.selfplay import SelfPlayConfig, play
from tests.gocore.search.test_mcts import CAPTURE_WINS_SEMEAI, CountingEvaluator
from tests.helpers import AreaEvaluator, position_from_ascii

SIZE = 5
NOISELESS = MCTSConfig(sims=32, temperature_moves=0)


@pytest.fixture(scope="module")
def evaluator() -> NetEvaluator:
    """A freshly initialised tiny 5x5 net: uneven priors and values, the same in every run."""
    torch.manual_seed(3)
    return NetEvaluator(build_net(preset("tiny", SIZE, 17)).eval(), device="cpu")


def opening(moves: Sequence[str]) -> Position:
    position = Position.initial(SIZE, 2.5)
    for move in moves:
        position = position.play(from_gtp(move, SIZE))
    return position


@pytest.mark.parametrize("budget", [1, 5, 16, 32, 50])
@pytest.mark.parametrize("k", [1, 3, 16])
def test_root_visits_sum_to_the_budget(evaluator, budget, k):
    search = GumbelSearch(evaluator, SELFPLAY.replace(sims=budget), [opening(["C3", "B2"])] * 2,
                          seed=budget, gumbel=GumbelConfig(k=k))
    for result, root in zip(search.search(), search.roots):
        assert result.visits.sum() == root.child_N.sum() == budget
        assert root.visits == 1 + budget  # no virtual loss left behind
        assert np.count_nonzero(result.visits) <= k


def test_the_schedule_halves_the_survivors_and_deals_the_whole_budget():
    for budget in (1, 7, 16, 32, 200):
        for considered in (1, 2, 5, 16, 24):
            plan = halving_schedule(budget, considered)
            assert len(plan) == max(1, math.ceil(math.log2(considered)))
            assert [survivors for survivors, _ in plan][0] == considered and plan[-1][0] <= 2
            dealt, left = 0, budget
            for survivors, each in plan:
                dealt += min(left, survivors * each)
                left = budget - dealt
            assert dealt == budget


def expected_scores(root: Node, config: GumbelConfig) -> np.ndarray:
    """logits + sigma(completed Q), written from the children's own statistics (not the module's)."""
    legal = np.flatnonzero(root.illegal == 0)
    visited = [m for m in legal if root.child_N[m] > 0]
    q = {m: -root.children[m].q for m in visited}  # a child's q is from its own mover's view
    total = sum(root.child_N[m] for m in visited)
    weighted = sum(root.prior[m] * q[m] for m in visited) / sum(root.prior[m] for m in visited)
    v_mix = (root.value + total * weighted) / (1 + total)
    completed = np.array([q.get(m, v_mix) for m in legal])
    rescaled = (completed - completed.min()) / (completed.max() - completed.min())
    scores = np.full(len(root.prior), -np.inf)
    scores[legal] = np.log(root.prior[legal]) + (config.c_visit + root.child_N.max()) * config.c_scale * rescaled
    return scores


def test_without_noise_the_move_is_the_argmax_of_logits_plus_sigma_among_the_most_visited(evaluator):
    config = GumbelConfig(k=32)
    search = GumbelSearch(evaluator, NOISELESS, [opening(["C3"]), opening(["B2", "D4"])], gumbel=config)
    for result, root in zip(search.search(), search.roots):
        scores = expected_scores(root, config)
        most = result.visits == result.visits.max()
        assert result.move == int(np.where(most, scores, -np.inf).argmax())
        assert result.visits[result.move] == result.visits.max()


def test_the_improved_policy_is_a_distribution_over_the_searched_legal_moves(evaluator):
    config = GumbelConfig(k=8)
    search = GumbelSearch(evaluator, SELFPLAY.replace(sims=24), [opening(["C3", "C2", "B3"])],
                          seed=1, gumbel=config)
    result, root = search.search()[0], search.roots[0]
    legal = root.position.legal_moves()
    assert result.pi.dtype == np.float32 and result.pi.sum() == pytest.approx(1.0, abs=1e-6)
    assert (result.pi >= 0).all() and (result.pi[~legal] == 0).all()
    unvisited = legal & (result.visits == 0) & (root.illegal == 0)
    assert unvisited.any() and (result.pi[unvisited] > 0).all()  # completed Q, not visit counts
    expected = np.exp(expected_scores(root, config) - expected_scores(root, config).max())
    np.testing.assert_allclose(result.pi, expected / expected.sum(), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(improved_policy(root, config), result.pi, rtol=1e-5, atol=1e-7)


def test_a_smaller_scale_keeps_the_improved_policy_closer_to_the_prior(evaluator):
    from gocore.search.gumbel import root_search

    assert root_search("gumbel", 0.1) == GumbelConfig(c_scale=0.1) and root_search("puct", 0.1) is None
    search = GumbelSearch(evaluator, SELFPLAY.replace(sims=16, noise=False), [opening(["C3", "C2"])], seed=2)
    search.search()
    root = search.roots[0]

    def entropy(pi: np.ndarray) -> float:
        return float(-(pi[pi > 0] * np.log(pi[pi > 0])).sum())

    paper, mctx = improved_policy(root, GumbelConfig()), improved_policy(root, GumbelConfig(c_scale=0.1))
    prior = np.where(root.illegal == 0, root.prior, 0.0)
    assert entropy(paper) < entropy(mctx) <= entropy(prior / prior.sum()) + 1e-6
    assert paper.max() > mctx.max()


def test_completed_q_of_unvisited_children_is_the_mixed_value():
    node = Node(Position.initial(SIZE, 2.5), None, -1, None)
    prior = np.zeros(SIZE * SIZE + 1)
    a, b, c = 6, 12, 18
    prior[[a, b, c]] = [0.5, 0.25, 0.25]
    node.expand(prior > 0, prior)
    node.value = 0.2
    node.child_N[[a, b]] = [2.0, 1.0]
    node.child_W[[a, b]] = [1.0, -1.0]  # Q(a) = 0.5, Q(b) = -1
    q = completed_q(node)
    v_mix = (0.2 + 3 * (0.5 * 0.5 + 0.25 * -1.0) / 0.75) / (1 + 3)
    assert q[a] == 0.5 and q[b] == -1.0
    assert q[c] == pytest.approx(v_mix) and q[0] == pytest.approx(v_mix)
    node.child_N[:], node.child_W[:] = 0.0, 0.0
    assert (completed_q(node) == 0.2).all()  # nothing visited: the node's own value


def test_the_search_finds_the_capture_that_wins_the_semeai():
    position = position_from_ascii(CAPTURE_WINS_SEMEAI)
    search = GumbelSearch(AreaEvaluator(), NOISELESS, [position], gumbel=GumbelConfig(k=16))
    assert search.search()[0].move == from_gtp("A2", 5)


def test_games_are_searched_in_lockstep_with_one_evaluator_call_per_round(evaluator):
    spy = CountingEvaluator(evaluator)
    search = GumbelSearch(spy, SELFPLAY.replace(sims=16), [opening(["C3"])] * 4, seed=2)
    search.search()
    assert spy.batch_sizes[0] == 4  # the four roots, evaluated together
    assert max(spy.batch_sizes[1:]) == 4 * SELFPLAY.leaves_per_game
    assert sum(spy.batch_sizes[1:]) <= 4 * 16


GUMBEL_SELFPLAY = SelfPlayConfig(size=SIZE, komi=2.5, search=SELFPLAY.replace(sims=8, max_moves=12),
                                 gumbel=GumbelConfig(k=4))


def test_a_gumbel_selfplay_game_and_its_rows_are_reproducible_from_the_seed(evaluator):
    first, again, other = (play(evaluator, GUMBEL_SELFPLAY, 2, generation=1, seed=seed, model_version="m")
                           for seed in (7, 7, 8))
    assert [r.moves for r in first.records] == [r.moves for r in again.records]
    for name in ("pi", "planes", "z", "game_id"):
        np.testing.assert_array_equal(first.columns[name], again.columns[name])
    assert [r.moves for r in first.records] != [r.moves for r in other.records]
    pi = first.columns["pi"]  # improved policies: mass on more moves than the k = 4 visited
    assert np.allclose(pi.sum(axis=1), 1.0, atol=1e-5) and ((pi > 0).sum(axis=1) > 4).all()


def test_with_the_playout_cap_fast_gumbel_searches_use_the_fast_budget_and_make_no_rows(evaluator):
    search = GumbelSearch(evaluator, SELFPLAY.replace(sims=16, fast_sims=4), [opening(["C3"])] * 3,
                          seed=5, gumbel=GumbelConfig(k=4))
    results = search.search(fast=[1])
    assert [r.visits.sum() for r in results] == [16, 4, 16]
    assert [r.is_full for r in results] == [True, False, True]
    assert not search.plans[1].gumbel.any() and search.plans[0].gumbel.any()  # no noise on fast searches
    capped = GUMBEL_SELFPLAY.search.replace(full_search_prob=0.3)
    batch = play(evaluator, SelfPlayConfig(size=SIZE, komi=2.5, search=capped, gumbel=GumbelConfig(k=4)), 2,
                 generation=1, seed=7, model_version="m")
    assert 0 < batch.stats["full_searches"] == len(batch.columns["z"]) < sum(len(r.moves) for r in batch.records)
