"""The rollout policy's features and kernel against the slow reference in `rollout_reference`."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from gocore.nn import patterns
from gocore.nn.features import encode_position, get_encoder
from gocore.nn.inference import UniformEvaluator
from gocore.rules.board import IllegalMove, Position
from gocore.search.agents import AlphaGoAgent
from gocore.search.mcts import MCTSConfig
from gocore.search.rollout import PatternRollouts, unmanaged
from tests.gocore.search import rollout_reference as ref
from tests.helpers import position_from_ascii


def random_weights(seed: int, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, scale, patterns.NUM_FEATURES)


def last_point(position: Position) -> tuple[int, int] | None:
    last = position.last_move
    return None if last is None or last == position.size ** 2 else divmod(last, position.size)


def check_position(position: Position, weights: np.ndarray, mover_weights: np.ndarray, ids: np.ndarray) -> None:
    """The kernel's ids (both colours) and the mover's sampling weights match the reference."""
    size, width = position.size, position.size + 2
    table, representatives = patterns.compact_table(), patterns.canonical_table()[1]
    board, last = position.stones, last_point(position)
    for m in range(size * size):
        point, padded = divmod(m, size), (m // size + 1) * width + m % size + 1
        for ci, color in enumerate((1, -1)):
            expected = ref.features(board, point, color, last) if board[point] == 0 else None
            kernel = ids[ci, padded]
            if expected is None:
                assert kernel[0] == -1, (m, color)
                continue
            pattern = table[kernel[0]]  # the kernel keeps compact patterns
            assert (representatives[pattern], kernel[1], kernel[2]) == expected[:3], (m, color)
            if color == position.to_play:
                logit = weights[list(expected[1:])].sum() + weights[pattern]
                if m == position.ko:
                    assert mover_weights[padded] == 0
                else:
                    assert np.log(mover_weights[padded]) == pytest.approx(logit, abs=1e-6), m  # float32 pattern weights
        if board[point] != 0:
            assert mover_weights[padded] == 0


def replay_and_check(start: Position, weights: np.ndarray, seed: int) -> int:
    """Play one traced rollout, checking every position on the way; the moves checked."""
    rollouts = PatternRollouts(weights)
    score, moves, mover_weights, ids = rollouts.trace(start, 1, seed, record=3 * start.size ** 2)
    position, checked = start, 0
    for t, move in enumerate(moves[moves >= 0]):
        check_position(position, weights, mover_weights[t], ids[t])
        if move == start.size ** 2:
            assert not mover_weights[t].any()  # a rollout passes only when it has no candidate
        try:
            position = position.play(int(move))
        except IllegalMove as error:  # rollouts use simple ko only, the board positional superko
            assert error.reason == "superko"
            return checked
        checked += 1
    assert position.is_game_over() or checked == 3 * start.size ** 2
    assert score[0] == position.score()
    return checked


@pytest.mark.parametrize("seed", [1, 2])
def test_kernel_features_and_logits_match_the_reference_over_a_whole_game(seed: int) -> None:
    assert replay_and_check(Position.initial(7), random_weights(seed), seed) > 30


def test_kernel_matches_the_reference_from_a_position_with_ko_and_ataris() -> None:
    start = position_from_ascii("""
        . X O . . . .
        X O . O . . .
        . X O . . X .
        . . . . X O X
        . X . X O . O
        . . . . X O .
        . . . . . . .
    """, to_play=1)
    start = start.play(2 * 7 + 3)  # black D5 leaves O in atari at the edge
    assert replay_and_check(start, random_weights(7, scale=2.0), 3) > 10


def test_canonical_patterns_are_closed_under_symmetry() -> None:
    table, representatives = patterns.canonical_table()
    assert len(representatives) == patterns.NUM_PATTERNS
    rng = np.random.default_rng(0)
    for raw in rng.integers(0, patterns.RAW_PATTERNS, 200):
        orth = [(int(raw) >> (3 * k)) & 7 for k in range(4)]
        diag = [(int(raw) >> (12 + 2 * k)) & 3 for k in range(4)]
        assert representatives[table[raw]] == ref.canonical_raw(orth, diag)


def test_compact_patterns_keep_the_class_of_every_pattern_a_board_can_show() -> None:
    table, compact = patterns.canonical_table()[0], patterns.compact_table()
    rng = np.random.default_rng(1)
    checked = 0
    for raw in rng.integers(0, patterns.RAW_PATTERNS, 2000):
        orth = [(int(raw) >> (3 * k)) & 7 for k in range(4)]
        diag = [(int(raw) >> (12 + 2 * k)) & 3 for k in range(4)]
        off = [orth[k] == 1 or orth[(k + 1) % 4] == 1 for k in range(4)]  # diagonal k touches orthogonals k, k+1
        if any((d == 1) != o for d, o in zip(diag, off)):
            continue  # a diagonal is off the board exactly when a neighbouring orthogonal is
        code = (int(raw) & 4095) + 4096 * sum((0 if d <= 1 else d - 1) * 3**k for k, d in enumerate(diag))
        assert compact[code] == table[raw], (orth, diag)
        checked += 1
    assert checked > 100


def test_row_features_from_planes_match_the_reference_with_last_move_and_ko() -> None:
    position = position_from_ascii("""
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """, to_play=1)
    position = position.play(2 * 5 + 2).play(1 * 5 + 3)  # X takes a ko at C3, O answers at D4
    rows = [position, position.play(4 * 5 + 4)]  # the last move is O's, then X's
    taking = position_from_ascii("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """, to_play=1).play(1 * 5 + 2)  # X captures at C4: O may not retake at B4 at once
    rows.append(taking)
    encoder = get_encoder("agz17")
    planes = np.stack([encode_position(p, encoder) for p in rows])
    ids = patterns.candidate_features(planes, encoder.plane_names, 5)
    representatives = patterns.canonical_table()[1]
    for row, p in zip(ids, rows):
        for m in range(25):
            point = divmod(m, 5)
            expected = ref.features(p.stones, point, p.to_play, last_point(p)) if p.stones[point] == 0 else None
            if expected is None or m == p.ko:
                assert (row[m] == -1).all(), m
            else:
                assert (representatives[row[m, 0]], *row[m, 1:]) == expected, m
    assert taking.ko is not None and (ids[2, taking.ko] == -1).all()


def test_rollout_scores_are_tromp_taylor_and_reproducible() -> None:
    rollouts = PatternRollouts(random_weights(4, 0.3))
    start = Position.initial(9)
    first, again = rollouts.scores(start, 50, seed=9), rollouts.scores(start, 50, seed=9)
    assert np.array_equal(first, again) and len(set(first)) > 5
    assert np.all(np.abs(first) <= 81 + 7.5) and np.all((first + 7.5) % 1 == 0)


@njit
def _write_through_unmanaged(owner: np.ndarray, value: float) -> float:
    view = unmanaged(owner)
    view[1:] = value
    return view.sum()


def test_an_unmanaged_view_reads_and_writes_its_owners_memory() -> None:
    owner = np.zeros(4)
    assert _write_through_unmanaged(owner, 2.5) == 7.5
    assert owner.tolist() == [0.0, 2.5, 2.5, 2.5]


class CountingRollouts(PatternRollouts):
    """The rollout policy, counting the games the search asks of it."""

    calls = 0

    def scores(self, start: Position, count: int, seed: int = 0, max_moves: int | None = None) -> np.ndarray:
        self.calls += count
        return super().scores(start, count, seed, max_moves)


def test_alphago_search_takes_its_rollouts_from_the_rollout_policy_when_given_one() -> None:
    rollouts = CountingRollouts(random_weights(5, 0.3))
    config = MCTSConfig(sims=24, rollout_lambda=1.0, temperature_moves=0)
    agent = AlphaGoAgent(UniformEvaluator(), config, seed=0, rollout_policy=rollouts)
    move = agent.select_move(Position.initial(5))
    assert 0 <= move < 25 and rollouts.calls >= 20  # one rollout per leaf the evaluator scored
    values = {node.value for node in walk(agent._search.roots[0]) if node.prior is not None}
    assert values <= {-1.0, 0.0, 1.0}  # lambda = 1: the value is the rollout's result alone


def walk(node):
    yield node
    for child in node.children.values():
        yield from walk(child)


def test_first_moves_follow_the_softmax_even_when_a_distance_weight_is_below_the_far_one() -> None:
    """The kernel samples each move from the softmax the reference gives (chi-square over 6,000
    seeded first moves), near the previous stone too, where weights 1 put below the far weight."""
    weights = random_weights(1)
    assert (np.exp(weights[patterns.DISTANCE0 + 1:patterns.DISTANCE0 + 5] - weights[patterns.DISTANCE0]) < 1).any()
    start = Position.initial(7).play(24).play(17)
    rollouts = PatternRollouts(weights)
    _, _, mover_weights, ids = rollouts.trace(start, 1, 0, max_moves=1, record=1)
    check_position(start, weights, mover_weights[0], ids[0])  # these weights are the reference softmax's
    expected = mover_weights[0] / mover_weights[0].sum()
    draws = 6000
    counts = np.zeros_like(expected)
    for seed in np.random.default_rng(0).integers(0, 1 << 62, draws):
        move = int(rollouts.trace(start, 1, int(seed), max_moves=1, record=1)[1][0])
        counts[(move // 7 + 1) * 9 + move % 7 + 1] += 1
    often = expected * draws >= 5
    assert counts[~often].sum() <= 10
    chi2 = ((counts - draws * expected)[often] ** 2 / (draws * expected[often])).sum()
    assert chi2 < 2 * often.sum() + 20, chi2  # ~46 degrees of freedom; the old two-part sampling gave ~1,900
