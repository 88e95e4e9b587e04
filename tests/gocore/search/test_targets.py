"""KataGo's self-play root techniques: policy target pruning, forced playouts, playout cap randomization
(gocore.search.targets, wired into mcts.BatchedSearch and selfplay.play_games)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from gocore.nn.inference import UniformEvaluator
from gocore.rules.board import Position
from gocore.search.mcts import SELFPLAY, BatchedSearch, MCTSConfig
from gocore.search.selfplay import SelfPlayConfig, play, play_games
from gocore.search.targets import FORCED_K, forced_visits, is_full_search, pruned_visits, puct_scores


class PeakedEvaluator:
    """A prior of 0.9 on the centre point (0.1 spread over the other legal moves); the value says the
    centre stone wins (+0.8 for its owner, -0.3 for the side to move while the centre is empty): PUCT
    alone then gives the centre nearly every visit, which is what forced playouts are for."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        priors, _ = UniformEvaluator().evaluate(positions)  # (B, N*N+1)
        centre = (positions[0].size * positions[0].size) // 2
        priors = priors * 0.1
        priors[:, centre] += 0.9
        owners = np.array([p.stones.reshape(-1)[centre] * p.to_play for p in positions])  # +1: the mover's
        values = np.where(owners == 0, -0.3, 0.8 * owners).astype(np.float32)  # (B,) side to move's view
        return priors / priors.sum(axis=1, keepdims=True), values


def random_root(rng: np.random.Generator, moves: int = 26) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(N, W, P) of a root whose last few moves are illegal (P = 0, N = 0)."""
    prior = rng.dirichlet(np.full(moves, 0.3))
    prior[-4:] = 0.0
    prior /= prior.sum()
    visits = rng.multinomial(int(rng.integers(1, 400)), prior).astype(float)
    q = rng.uniform(-1, 1, moves)
    return visits, visits * q, prior


def test_pruning_keeps_the_best_child_never_adds_visits_and_leaves_illegal_moves_out():
    rng = np.random.default_rng(0)
    for _ in range(300):
        visits, w, prior = random_root(rng)
        kept = pruned_visits(visits, w, prior, c_puct=1.25)
        best = visits.argmax()
        assert kept[best] == visits[best]
        assert np.all(kept <= visits) and np.all(kept >= 0)
        others = np.arange(len(kept)) != best
        assert np.all((kept[others] == 0) | (kept[others] > 1))  # one visit or less left: removed
        assert not kept[prior == 0].any()
        floor = visits - np.floor(forced_visits(prior, visits.sum()))  # at most n_forced taken ...
        assert np.all((kept >= floor) | ((kept == 0) & (floor <= 1)))  # ... but for the removed children


def test_pruning_takes_visits_only_while_the_child_stays_below_the_best_child():
    visits, prior = np.array([80.0, 10.0, 1.0, 0.0]), np.array([0.6, 0.3, 0.05, 0.05])
    w = visits * np.array([0.5, 0.0, -0.5, 0.0])
    kept = pruned_visits(visits, w, prior, c_puct=1.0)
    assert kept[2] == 0 and kept[3] == 0  # one visit: removed
    assert 0 < kept[1] < visits[1]
    total, q1 = visits.sum(), 0.0

    def score_of_child_1(n: float) -> float:
        return q1 + 1.0 * math.sqrt(total) * prior[1] / (1 + n)

    best_score = puct_scores(visits, w, prior, 1.0, total)[0]
    assert score_of_child_1(kept[1]) <= best_score < score_of_child_1(kept[1] - 1)  # as few as allowed


def test_pruned_pi_of_a_forced_search_is_a_distribution_over_legal_moves():
    position = Position.initial(5).play(12).play(6)
    config = MCTSConfig(sims=120, noise=True, forced_playouts=True)
    search = BatchedSearch(PeakedEvaluator(), config, [position], seed=3)
    result = search.search()[0]
    root = search.roots[0]
    assert result.pi.sum() == pytest.approx(1.0, abs=1e-6)
    assert not result.pi[~position.legal_moves()].any()
    share = result.visits / result.visits.sum()
    best = result.visits.argmax()
    assert result.pi[best] > share[best]  # forced visits were taken back from the others
    kept = pruned_visits(root.child_N, root.child_W, root.child_P, config.c_puct)
    assert np.allclose(result.pi, kept / kept.sum()) and kept[best] == result.visits[best]


def children_short_of_forced(forced: bool, seed: int) -> int:
    """Legal root children that end a 400-simulation noisy search below sqrt(2 P N) - 1 visits."""
    config = MCTSConfig(sims=400, noise=True, forced_playouts=forced)
    search = BatchedSearch(PeakedEvaluator(), config, [Position.initial(7)], seed=seed)
    search.search()
    root = search.roots[0]
    legal = root.illegal == 0
    needed = np.floor(forced_visits(root.child_P, root.child_N.sum(), FORCED_K)) - 1  # (N*N+1,)
    return int((legal & (root.child_N < needed)).sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_forced_playouts_give_every_child_about_sqrt_2_p_n_visits(seed):
    assert children_short_of_forced(True, seed) == 0
    assert children_short_of_forced(False, seed) > 0  # plain PUCT leaves some children short


def test_a_fast_search_uses_the_fast_budget_without_noise():
    config = MCTSConfig(sims=40, fast_sims=9, noise=True, forced_playouts=True, reuse_tree=False)
    starts = [Position.initial(5), Position.initial(5).play(7)]
    search = BatchedSearch(UniformEvaluator(), config, starts, seed=0)
    full, fast = search.search(fast=[1])
    assert [root.visits for root in search.roots] == [40, 9]
    assert int(full.visits.sum()) == 39 and int(fast.visits.sum()) == 8
    assert full.is_full and not fast.is_full
    assert not np.allclose(search.roots[0].child_P, search.roots[0].prior)  # noise on the full search
    assert search.roots[1].child_P is search.roots[1].prior  # none on the fast one
    search = BatchedSearch(UniformEvaluator(), MCTSConfig(sims=40, reuse_tree=False), starts[:1], seed=0)
    assert int(search.search(fast=[0])[0].visits.sum()) == 9  # default: a quarter of the budget


PCR = SELFPLAY.replace(sims=8, fast_sims=2, max_moves=40, full_search_prob=0.25,
                       forced_playouts=True, resign_threshold=None)


def test_playout_cap_records_about_p_of_the_moves_as_rows():
    batch = play(UniformEvaluator(), SelfPlayConfig(size=5, komi=2.5, search=PCR), 6, generation=1, seed=4,
                 model_version="m")
    moves = batch.stats["positions"]
    rows = len(batch.columns["z"])
    assert rows == batch.stats["full_searches"] and moves > 150
    assert abs(rows / moves - 0.25) < 0.08  # binomial sd ~0.03 at this many moves
    for record, game_id in zip(batch.records, batch.game_ids):  # every move is in the SGF; rows are a subset
        numbers = batch.columns["move_number"][batch.columns["game_id"] == game_id]
        assert len(numbers) < len(record.moves) and np.all(np.diff(numbers) > 0)


def test_playout_cap_games_replay_from_the_seed():
    first, again, other = (play_games(UniformEvaluator(), PCR, 3, size=5, seed=seed) for seed in (7, 7, 8))
    assert [(g.moves, g.full) for g in first] == [(g.moves, g.full) for g in again]
    assert [(g.moves, g.full) for g in first] != [(g.moves, g.full) for g in other]


def test_without_the_cap_every_search_is_full_and_draws_nothing():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert all(is_full_search(rng, 1.0) for _ in range(10)) and rng.bit_generator.state == state
    games = play_games(UniformEvaluator(), SELFPLAY.replace(sims=4, max_moves=20), 2, size=5, seed=1)
    assert all(all(game.full) and len(game.full) == len(game.moves) for game in games)


@pytest.mark.parametrize("bad", [{"full_search_prob": 0.0}, {"full_search_prob": 1.5}, {"fast_sims": 0}])
def test_impossible_playout_caps_are_refused(bad):
    with pytest.raises(ValueError, match="full_search_prob"):
        MCTSConfig(**bad)
