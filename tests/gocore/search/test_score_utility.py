"""gocore.search.score_utility: a search whose value head is sure of the game still tells moves apart by score."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from gocore.nn.inference import AuxEvaluation
from gocore.rules.board import Position
from gocore.search import mcts
from gocore.search.agents import AlphaZeroAgent
from gocore.search.score_utility import ScoreUtilityEvaluator

SIZE = 5
FAVOURITE = 0  # A5: the policy's best move, which the score head sees losing black 10 points


class SureOfTheGameEvaluator:
    """A value head sure that black wins every position (0.99 for black whatever is played: every
    move looks the same to it), a policy that likes A5 best, and a score head that sees black 10
    points worse off once black has played there (a self-atari the value head is blind to)."""

    has_score = has_ownership = True

    def evaluate_aux(self, positions: Sequence[Position]) -> AuxEvaluation:
        priors = np.ones((len(positions), SIZE * SIZE + 1), np.float32)
        priors[:, FAVOURITE] = 4.0
        priors = np.where(np.stack([p.legal_moves() for p in positions]), priors, 0.0)
        priors = (priors / priors.sum(axis=1, keepdims=True)).astype(np.float32)
        black_lead = np.array([-10.0 if int(p.stones.flat[FAVOURITE]) == 1 else 0.0 for p in positions], np.float32)
        to_play = np.array([p.to_play for p in positions], np.float32)
        return AuxEvaluation(priors, 0.99 * to_play,
                             np.zeros((len(positions), SIZE * SIZE), np.float32), black_lead * to_play)

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        aux = self.evaluate_aux(positions)
        return aux.priors, aux.values


def test_the_utility_mixes_value_and_score_lead_within_minus_one_to_one():
    evaluator = ScoreUtilityEvaluator(SureOfTheGameEvaluator(), weight=0.3, scale=9)
    values, score = np.array([0.99, 0.99, -1.0, 1.0]), np.array([20.0, -20.0, -1e6, 1e6])
    utility = evaluator.utility(values, score)
    lead = 2 / math.pi * math.atan(20 / 9)
    assert utility == pytest.approx([0.7 * 0.99 + 0.3 * lead, 0.7 * 0.99 - 0.3 * lead, -1.0, 1.0], abs=1e-5)
    assert utility.dtype == np.float32 and np.all(np.abs(utility) <= 1)


def test_a_search_sure_of_the_game_gives_up_the_points_only_without_the_score_utility():
    """With the value saturated the search plays the policy's favourite (its Q 0.99 beats every
    unvisited move's 0); with the score lead in its values it sees the 10 points go and plays another."""
    config = mcts.MATCH.replace(sims=64, resign_threshold=None)
    start = Position.initial(SIZE, 7.5)
    plain = AlphaZeroAgent(SureOfTheGameEvaluator(), config, seed=0).select_move(start)
    with_score = AlphaZeroAgent(ScoreUtilityEvaluator(SureOfTheGameEvaluator(), 0.5, SIZE), config,
                                seed=0).select_move(start)
    assert plain == FAVOURITE and with_score not in (FAVOURITE, SIZE * SIZE)


def test_a_score_utility_needs_a_score_head_and_a_weight_in_range():
    class ValueOnly:
        def evaluate(self, positions):
            raise AssertionError("not called")

    with pytest.raises(ValueError, match="score head"):
        ScoreUtilityEvaluator(ValueOnly(), 0.3, 9)
    for weight in (0.0, 1.5):
        with pytest.raises(ValueError, match="weight"):
            ScoreUtilityEvaluator(SureOfTheGameEvaluator(), weight, 9)
