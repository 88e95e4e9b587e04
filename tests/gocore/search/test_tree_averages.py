"""`gocore.search.tree_averages`: score and ownership averaged over a search as it visited them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gocore.nn.inference import AuxEvaluation
from gocore.rules.board import Position
from gocore.search import mcts
from gocore.search.analysis import analyse
from gocore.search.tree_averages import HeadRecorder, TreeAverages
from tests.gocore.search.test_analysis import AreaHeadsEvaluator
from tests.helpers import AreaEvaluator, position_from_ascii

DIAGRAM = """
. . . . .
. X X . .
. X O O .
. X O . .
. . . . .
"""


class RootOnlyHeads(AreaEvaluator):
    """Heads that say 10 points and all-mine ownership at `root`, 0 everywhere else."""

    has_score = has_ownership = True

    def __init__(self, root: Position):
        self.root = root

    def evaluate_aux(self, positions: Sequence[Position]) -> AuxEvaluation:
        is_root = np.array([p is self.root for p in positions], np.float32)  # (B,)
        ownership = np.repeat(is_root[:, None], self.root.size ** 2, axis=1)  # (B, N*N)
        return AuxEvaluation(*self.evaluate(positions), ownership=ownership, score=10 * is_root)


def search(evaluator, position: Position, sims: int) -> tuple[mcts.BatchedSearch, HeadRecorder]:
    recorder = HeadRecorder(evaluator, keep_ownership=True)
    searched = mcts.BatchedSearch(recorder, mcts.MATCH.replace(sims=sims), [position], seed=1)
    searched.search()
    return searched, recorder


def test_the_root_average_weighs_its_own_reading_once_among_all_visits():
    position = position_from_ascii(DIAGRAM, to_play=-1, komi=0.5)
    searched, recorder = search(RootOnlyHeads(position), position, 40)
    sums = TreeAverages(recorder).sums(searched.roots[0])
    assert sums.weight == 40 and sums.mean_score == pytest.approx(10 / 40)
    assert sums.mean_ownership == pytest.approx(np.full(25, 1 / 40))
    child = max(searched.roots[0].children.values(), key=lambda node: node.visits)
    assert TreeAverages(recorder).sums(child).mean_score == 0.0  # nothing below the root says anything


def test_a_move_reports_minus_its_subtree_average_and_the_root_the_whole_tree():
    position = position_from_ascii(DIAGRAM, to_play=-1, komi=0.5)
    searched, recorder = search(AreaHeadsEvaluator(), position, 200)
    root, averages = searched.roots[0], TreeAverages(recorder)
    analysis = analyse(root, recorder, averages=averages)
    best = analysis.best
    child = averages.sums(root.children[best.move])
    assert best.score_lead == pytest.approx(-child.mean_score) and child.weight == best.visits
    assert best.ownership == pytest.approx(-child.mean_ownership)
    raw = analyse(root, AreaHeadsEvaluator())  # the heads' reading of the root alone
    assert raw.score_lead == pytest.approx(position.score() * -1)
    assert analysis.score_lead != pytest.approx(raw.score_lead)  # the search average moved away from it
    weighted = raw.score_lead + sum(-averages.sums(node).score for node in root.children.values() if node.visits)
    assert analysis.score_lead == pytest.approx(weighted / root.visits)


def test_reading_again_after_more_search_gives_what_a_fresh_reading_gives():
    position = position_from_ascii(DIAGRAM, to_play=-1, komi=0.5)
    searched, recorder = search(AreaHeadsEvaluator(), position, 64)
    kept = TreeAverages(recorder)
    kept.sums(searched.roots[0])
    searched.search(sims=96)
    again, fresh = kept.sums(searched.roots[0]), TreeAverages(recorder).sums(searched.roots[0])
    assert again.weight == fresh.weight == 160
    assert again.score == pytest.approx(fresh.score) and again.ownership == pytest.approx(fresh.ownership)


def test_finished_positions_below_the_root_count_the_rules_score_at_every_visit():
    position = position_from_ascii(DIAGRAM, to_play=-1, komi=0.5).play(25)  # black passed: white's pass ends it
    searched, recorder = search(RootOnlyHeads(position), position, 60)
    ended = searched.roots[0].children[25]
    assert ended.terminal_value is not None and ended.visits >= 1
    sums = TreeAverages(recorder).sums(ended)
    assert sums.mean_score == pytest.approx(ended.position.score() * ended.position.to_play)
    assert sums.weight == ended.visits


def test_a_finished_root_is_answered_with_the_rules_result():
    position = position_from_ascii(DIAGRAM, to_play=1, komi=0.5).play(25).play(25)
    root = mcts.BatchedSearch(AreaEvaluator(), mcts.MATCH, [position]).roots[0]
    analysis = analyse(root)
    assert analysis.moves == () and analysis.visits == 1
    assert position.score() == 0.5 and analysis.winrate == 1.0 and analysis.score_lead == 0.5  # black to move wins
    assert analysis.ownership == pytest.approx(position.ownership().ravel())
