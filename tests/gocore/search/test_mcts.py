"""PUCT search: tactics with uniform priors, visit bookkeeping, noise, temperature, tree reuse,
batching across games, terminal scoring, AlphaGo's rollout mix and the self-play game loop."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gocore.nn.inference import UniformEvaluator
from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_gtp
from gocore.search.mcts import (
    PRESETS,
    BatchedSearch,
    MCTSConfig,
    Node,
    choose_move,
    wants_resign,
)
from gocore.search.selfplay import play_games
from tests.helpers import position_from_ascii

# One-liberty semeai: black's five top stones and white's wall each have one liberty (C5 and A2).
# Black to play captures eleven stones at A2; any other move lets white capture first at C5.
CAPTURE_WINS_SEMEAI = """
    O X . X O
    O X X X O
    O O O O O
    . X X X X
    . . . . .
"""

# Black's top group has liberties C5 and D5, white's wall A2 and D5. C5 and D5 are self-ataris
# (white captures five stones next move); A2 takes white's outside liberty and wins the race.
SELF_ATARI_LOSES = """
    O X . . O
    O X X X O
    O O O O O
    . X X X X
    . . . . .
"""

# Settled 5x5: black owns three columns (15 points), white two (10).
SETTLED = """
    . . X O .
    . . X O .
    . . X O .
    . . X O .
    . . X O .
"""


class CountingEvaluator:
    """Wraps an evaluator and records every batch it is given (a real spy, not a mock)."""

    def __init__(self, inner: object):
        self.inner = inner
        self.batch_sizes: list[int] = []
        self.positions: list[Position] = []

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        self.batch_sizes.append(len(positions))
        self.positions.extend(positions)
        return self.inner.evaluate(positions)


class BlackWinsEvaluator:
    """Uniform priors; value +1 if black is to move, -1 if white: 'black always wins'."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        priors, _ = UniformEvaluator().evaluate(positions)
        return priors, np.array([float(p.to_play) for p in positions], np.float32)


def search_one(position: Position, config: MCTSConfig, seed: int = 0,
               evaluator: object | None = None) -> tuple[BatchedSearch, Node]:
    """One game's search from `position`; returns the search and its root."""
    search = BatchedSearch(evaluator or UniformEvaluator(), config, [position], seed=seed)
    search.search()
    return search, search.roots[0]


def walk(node: Node):
    """Every node of the tree under `node`."""
    yield node
    for child in node.children.values():
        yield from walk(child)


ROLLOUTS = MCTSConfig(sims=400, temperature_moves=0, rollout_lambda=1.0)  # uniform P, rollout v


# ---------------------------------------------------------------- tactics with uniform priors
def test_search_captures_to_win_a_one_liberty_semeai():
    position = position_from_ascii(CAPTURE_WINS_SEMEAI)
    _, root = search_one(position, ROLLOUTS)
    capture = from_gtp("A2", 5)
    assert int(root.child_N.argmax()) == capture
    assert root.child_N[capture] > 0.8 * root.child_N.sum()


def test_search_avoids_self_atari_and_wins_the_race_from_outside():
    position = position_from_ascii(SELF_ATARI_LOSES)
    _, root = search_one(position, ROLLOUTS)
    self_ataris = [from_gtp("C5", 5), from_gtp("D5", 5)]
    assert int(root.child_N.argmax()) == from_gtp("A2", 5)
    assert root.child_N[self_ataris].sum() < 0.1 * root.child_N.sum()


def test_terminal_positions_are_scored_by_the_rules_without_the_network():
    ahead = position_from_ascii(SETTLED, to_play=-1, komi=0.5).play(25)  # white passed; black +4.5
    spy = CountingEvaluator(UniformEvaluator())
    _, root = search_one(ahead, MCTSConfig(sims=64, temperature_moves=0), evaluator=spy)
    assert int(root.child_N.argmax()) == 25  # passing ends the game with black ahead
    assert root.child_W[25] == root.child_N[25]  # every visit of that child scored +1 for black
    assert not any(p.is_game_over() for p in spy.positions)


def test_search_does_not_pass_when_passing_loses():
    behind = position_from_ascii(SETTLED, to_play=-1, komi=10.5).play(25)  # black would lose by 5.5
    _, root = search_one(behind, MCTSConfig(sims=64, temperature_moves=0))
    assert int(root.child_N.argmax()) != 25
    assert root.child_W[25] == -root.child_N[25]


# ---------------------------------------------------------------- bookkeeping
@pytest.mark.parametrize("leaves_per_game", [1, 8])
def test_visit_counts_add_up_and_no_virtual_loss_is_left(leaves_per_game):
    config = MCTSConfig(sims=200, leaves_per_game=leaves_per_game)
    _, root = search_one(Position.initial(5), config)
    assert root.visits == 200 and root.child_N.sum() == 199
    for node in walk(root):
        if node.prior is not None:
            assert node.visits == 1 + node.child_N.sum()
            assert np.array_equal(node.child_N, np.round(node.child_N))
        for move, child in node.children.items():
            assert child.visits == node.child_N[move]


def test_pi_is_the_visit_distribution_over_legal_moves():
    position = position_from_ascii(CAPTURE_WINS_SEMEAI)
    search = BatchedSearch(UniformEvaluator(), MCTSConfig(sims=100), [position], seed=0)
    result = search.search()[0]
    assert result.pi.dtype == np.float32 and result.pi.shape == (26,)
    assert result.pi.sum() == pytest.approx(1.0)
    assert np.all(result.pi[~position.legal_moves()] == 0)
    assert np.allclose(result.pi, result.visits / result.visits.sum())


def test_temperature_zero_picks_the_most_visited_move_and_breaks_ties_at_random():
    visits = np.array([3, 9, 1, 9, 0])
    picks = {choose_move(visits, False, np.random.default_rng(seed)) for seed in range(20)}
    assert picks == {1, 3}
    q = np.array([0.9, 0.1, 0.0, 0.4, 0.0])  # the better of the two most visited wins the tie, every time
    assert {choose_move(visits, False, np.random.default_rng(seed), q) for seed in range(20)} == {3}
    q_tied = np.array([0.9, 0.4, 0.0, 0.4, 0.0])
    assert {choose_move(visits, False, np.random.default_rng(seed), q_tied) for seed in range(20)} == {1, 3}
    result = search_one(Position.initial(5), MCTSConfig(sims=64, temperature_moves=0))[0].search()[0]
    assert result.visits[result.move] == result.visits.max()


def test_a_search_result_breaks_a_visit_tie_by_the_better_mean_value():
    search, root = search_one(Position.initial(5), MCTSConfig(sims=16, temperature_moves=0))
    root.child_N[:] = 0.0
    root.child_W[:] = 0.0
    root.child_N[[7, 12]] = 5.0
    root.child_W[7], root.child_W[12] = 1.0, 3.0  # Q 0.2 and 0.6 for the mover
    assert {BatchedSearch.result(search, 0).move for _ in range(10)} == {12}


def test_temperature_one_samples_in_proportion_to_visits():
    rng = np.random.default_rng(0)
    picks = np.bincount([choose_move(np.array([0, 1, 3]), True, rng) for _ in range(2000)], minlength=3)
    assert picks[0] == 0 and 0.2 < picks[1] / 2000 < 0.3


def test_dirichlet_noise_changes_only_the_root_priors_and_only_when_enabled():
    position = position_from_ascii(CAPTURE_WINS_SEMEAI)
    _, quiet = search_one(position, MCTSConfig(sims=50))
    assert quiet.child_P is quiet.prior
    _, noisy = search_one(position, MCTSConfig(sims=50, noise=True))
    legal = position.legal_moves()
    assert not np.allclose(noisy.child_P, noisy.prior)
    assert noisy.child_P.sum() == pytest.approx(1.0) and np.all(noisy.child_P[~legal] == 0)
    assert all(node.child_P is node.prior for node in walk(noisy) if node is not noisy and node.prior is not None)


def test_dirichlet_alpha_and_temperature_scale_with_the_board():
    config = MCTSConfig()
    assert config.alpha_for(19) == pytest.approx(0.03)
    assert config.alpha_for(9) == pytest.approx(0.03 * 361 / 81)
    assert config.temperature_moves_for(19) == 30 and config.temperature_moves_for(9) == 6
    assert MCTSConfig(dirichlet_alpha=0.5).alpha_for(9) == 0.5


@pytest.mark.parametrize("bad", [{"sims": 0}, {"rollout_lambda": 1.5}, {"leaves_per_game": 0},
                                 {"dirichlet_epsilon": -0.1}, {"resign_disabled_fraction": 2.0}])
def test_impossible_configs_are_refused(bad):
    with pytest.raises(ValueError, match="MCTSConfig"):
        MCTSConfig(**bad)


def test_presets_are_named_configs():
    assert PRESETS["selfplay"].noise and not PRESETS["match"].noise
    assert PRESETS["alphago"].rollout_lambda == 0.5 and PRESETS["match"].temperature_moves == 0


# ---------------------------------------------------------------- tree reuse
def test_subtree_reuse_keeps_the_childs_statistics():
    search, root = search_one(Position.initial(5), MCTSConfig(sims=200))
    move = int(root.child_N.argmax())
    child = root.children[move]
    visits, child_N = child.visits, child.child_N.copy()
    search.advance(0, move)
    assert search.roots[0] is child and child.parent is None
    assert child.visits == visits and np.array_equal(child.child_N, child_N)
    search.search()
    assert child.visits == visits + 200


def test_the_old_tree_is_freed_when_the_root_moves_on_without_the_garbage_collector():
    import gc
    import weakref

    search, root = search_one(Position.initial(5), MCTSConfig(sims=200))
    move = int(root.child_N.argmax())
    sibling = next(node for m, node in root.children.items() if m != move)
    old_root, old_sibling = weakref.ref(root), weakref.ref(sibling)
    del root, sibling
    gc.disable()  # no reference cycles: reference counting alone must free the rest of the tree
    try:
        search.advance(0, move)
        assert old_root() is None and old_sibling() is None
    finally:
        gc.enable()
    assert search.roots[0].parent is None and all(c.parent is search.roots[0] for c in search.roots[0].children.values())


def test_without_reuse_the_next_search_starts_from_an_empty_tree():
    search, root = search_one(Position.initial(5), MCTSConfig(sims=100, reuse_tree=False))
    search.advance(0, int(root.child_N.argmax()))
    assert search.roots[0].visits == 0
    assert search.search()[0].visits.sum() == 99


# ---------------------------------------------------------------- many games at once
def start_positions(count: int) -> list[Position]:
    """Different 5x5 openings: black's first stone on points 0, 3, 6, ..."""
    return [Position.initial(5).play(3 * g) for g in range(count)]


def test_batched_search_gives_every_game_the_same_number_of_simulations():
    search = BatchedSearch(UniformEvaluator(), MCTSConfig(sims=48), start_positions(5), seed=0)
    results = search.search()
    assert [root.visits for root in search.roots] == [48] * 5
    assert [int(r.visits.sum()) for r in results] == [47] * 5


def test_batched_search_equals_separate_searches_without_virtual_loss():
    config = MCTSConfig(sims=60, leaves_per_game=1, virtual_loss=0.0)
    together = BatchedSearch(UniformEvaluator(), config, start_positions(3), seed=0).search()
    for position, result in zip(start_positions(3), together):
        alone = BatchedSearch(UniformEvaluator(), config, [position], seed=0).search()[0]
        assert np.array_equal(alone.visits, result.visits) and alone.root_value == result.root_value


def test_leaves_of_all_games_reach_the_evaluator_in_one_batch():
    spy = CountingEvaluator(UniformEvaluator())
    config = MCTSConfig(sims=32, leaves_per_game=4)
    BatchedSearch(spy, config, start_positions(4), seed=0).search()
    assert spy.batch_sizes[0] == 4  # round one: each fresh root is its own first leaf
    assert max(spy.batch_sizes) > 4 and max(spy.batch_sizes) <= 4 * 4
    assert sum(spy.batch_sizes) <= 4 * 32


def test_a_finished_game_cannot_be_searched():
    over = Position.initial(5).play(25).play(25)
    with pytest.raises(ValueError, match="over"):
        BatchedSearch(UniformEvaluator(), MCTSConfig(sims=8), [over]).search()


# ---------------------------------------------------------------- AlphaGo's leaf value
def test_alphago_leaf_value_mixes_the_value_net_and_one_rollout():
    config = MCTSConfig(sims=60, rollout_lambda=0.5)
    _, root = search_one(Position.initial(5).play(12), config, evaluator=BlackWinsEvaluator())
    values = {node.value * node.position.to_play for node in walk(root) if node.prior is not None}
    # black's view: 0.5 * (+1) + 0.5 * z with z in {-1, 0, +1} from black's side
    assert values <= {0.0, 0.5, 1.0} and {0.0, 1.0} <= values


# ---------------------------------------------------------------- whole games
def test_self_play_games_end_and_replay_legally():
    config = MCTSConfig(sims=16, noise=True, temperature_moves=4)
    games = play_games(UniformEvaluator(), config, count=3, size=5, seed=1)
    for game in games:
        assert game.reason in ("two-passes", "move-cap")
        assert len(game.moves) == len(game.pis) == len(game.root_values)
        replay_moves(game.start, game.moves)  # raises on an illegal move
        assert game.winner == int(np.sign(game.final.score()))
        assert all(pi.sum() == pytest.approx(1.0) for pi in game.pis)


def test_players_resign_after_two_hopeless_searches_unless_resignation_is_disabled():
    config = MCTSConfig(sims=8, resign_threshold=0.5, resign_disabled_fraction=0.0)
    games = play_games(BlackWinsEvaluator(), config, count=2, size=5, seed=0)
    for game in games:  # white's root value is about -1 from its first move
        assert (game.reason, game.winner, game.result, len(game.moves)) == ("resign", 1, "B+R", 3)
    never = config.replace(resign_disabled_fraction=1.0, max_moves=12)
    for game in play_games(BlackWinsEvaluator(), never, count=2, size=5, seed=0):
        assert game.reason != "resign" and game.would_resign == -1
        assert game.is_false_resignation == (game.winner == -1)


def test_resign_rule_needs_a_streak_below_the_threshold():
    assert wants_resign([-0.95, -0.97], -0.9)
    assert not wants_resign([-0.95], -0.9)
    assert not wants_resign([-0.95, -0.5], -0.9)
    assert not wants_resign([-1.0, -1.0], None)


class PassingEvaluator:
    """Priors that favour passing (as a net trained on GNU Go's finished games does), value 0."""

    def evaluate(self, positions):
        from gocore.nn.inference import legal_mask

        legal = legal_mask(positions).astype(np.float32)  # (B, N*N+1)
        legal[:, -1] *= 50.0
        return legal / legal.sum(axis=1, keepdims=True), np.zeros(len(positions), np.float32)


def test_a_search_may_pass_first_on_a_settled_board_only_when_asked():
    settled = position_from_ascii("""
        . X O . .
        X X O . .
        X O O . .
        X O . O .
        . X O . .
    """, to_play=1)
    config = MCTSConfig(sims=40, temperature_moves=0)
    plain = search_one(settled, config, evaluator=PassingEvaluator())[0].search()[0]
    passing = search_one(settled, config.replace(pass_when_settled=True), evaluator=PassingEvaluator())[0].search()[0]
    assert plain.visits[-1] == 0 and plain.move != 25  # the default keeps AlphaGo Zero's rule
    assert passing.move == 25  # with the rule, the favoured pass is searched and played
