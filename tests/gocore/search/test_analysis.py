"""`gocore.search.analysis`: a searched tree read as per-move visits, win rates, LCB, order and PV."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gocore.nn.inference import AuxEvaluation
from gocore.rules.board import Position
from gocore.search import mcts
from gocore.search.analysis import HeadOutputs, analyse, head_outputs, lower_bound
from tests.helpers import AreaEvaluator, position_from_ascii

SIZE = 5


class AreaHeadsEvaluator(AreaEvaluator):
    """The same, with score and ownership 'heads': what a net with those heads plugs into the hook."""

    has_score = has_ownership = True

    def evaluate_aux(self, positions: Sequence[Position]) -> AuxEvaluation:
        leads = np.array([p.score() * p.to_play for p in positions])
        ownership = np.stack([p.stones.ravel() * p.to_play for p in positions]).astype(np.float32)
        return AuxEvaluation(*self.evaluate(positions), ownership=ownership, score=leads)


# White to move on a small board where the area count tells moves apart.
DIAGRAM = """
. . . . .
. X X . .
. X O O .
. X O . .
. . . . .
"""


def searched_root(evaluator, sims: int = 200) -> mcts.Node:
    position = position_from_ascii(DIAGRAM, to_play=-1, komi=0.5)
    search = mcts.BatchedSearch(evaluator, mcts.MATCH.replace(sims=sims), [position], seed=1)
    search.search()
    return search.roots[0]


def test_moves_report_the_tree_edges_best_first():
    root = searched_root(AreaEvaluator())
    analysis = analyse(root)
    visited = np.flatnonzero(root.child_N.round() > 0)
    assert sorted(m.move for m in analysis.moves) == sorted(visited.tolist())
    assert [m.order for m in analysis.moves] == list(range(len(analysis.moves)))
    assert [m.visits for m in analysis.moves] == sorted((m.visits for m in analysis.moves), reverse=True)
    assert sum(m.visits for m in analysis.moves) == analysis.visits - 1 == 199
    for move in analysis.moves:
        q = root.child_W[move.move] / root.child_N[move.move]
        assert np.isclose(move.winrate, (1 + q) / 2)
        assert np.isclose(move.prior, root.prior[move.move])
        assert 0 <= move.lcb <= move.winrate
    assert analysis.best.move == int(root.child_N.argmax())  # the move search would play
    assert np.isclose(analysis.winrate, (1 + root.q) / 2)
    assert analysis.score_lead is None and analysis.ownership is None  # no heads, no numbers


def test_principal_variation_follows_the_most_visited_replies_and_is_legal():
    root = searched_root(AreaEvaluator())
    best = analyse(root).best
    assert best.pv[0] == best.move and len(best.pv) >= 2
    node, position = root, root.position
    for move in best.pv:
        assert position.is_legal(move)
        position = position.play(move)
        if node is not root:
            assert move == int(node.child_N.argmax())
        node = node.children[move]


def test_min_moves_adds_unvisited_moves_by_prior_and_max_moves_caps():
    root = searched_root(AreaEvaluator(), sims=8)
    visited = int((root.child_N.round() > 0).sum())
    padded = analyse(root, min_moves=visited + 3)
    assert len(padded.moves) == visited + 3
    assert [m.visits for m in padded.moves[-3:]] == [0, 0, 0]
    assert all(m.lcb == 0 and m.pv == (m.move,) for m in padded.moves[-3:])
    assert len(analyse(root, max_moves=2).moves) == 2


def test_the_heads_hook_fills_score_lead_and_ownership_from_the_side_to_moves_view():
    evaluator = AreaHeadsEvaluator()
    root = searched_root(evaluator)
    analysis = analyse(root, evaluator)
    position = root.position
    assert analysis.score_lead == position.score() * position.to_play
    assert np.array_equal(analysis.ownership, position.stones.ravel() * position.to_play)
    for move in analysis.moves:  # the lead after the move, still from the mover's view
        assert move.score_lead == position.play(move.move).score() * position.to_play
    assert head_outputs(AreaEvaluator(), [position]) == HeadOutputs()


def test_lower_bound_tightens_with_visits():
    assert lower_bound(0.6, 0) == 0
    assert lower_bound(0.6, 10) < lower_bound(0.6, 100) < lower_bound(0.6, 10_000) < 0.6
    assert lower_bound(1.0, 5) == 1.0


def test_a_net_with_the_auxiliary_heads_fills_score_lead_and_ownership():
    from gocore.nn.inference import NetEvaluator
    from gocore.nn.nets import build_net, preset

    with_heads = NetEvaluator(build_net(preset("tiny", SIZE, 17, encoder="agz17", aux_heads=True)).eval())
    plain = NetEvaluator(build_net(preset("tiny", SIZE, 17, encoder="agz17")).eval())
    for evaluator, has in ((with_heads, True), (plain, False)):
        search = mcts.BatchedSearch(evaluator, mcts.MATCH.replace(sims=8), [Position.initial(SIZE)], seed=0)
        search.search()
        analysis = analyse(search.roots[0], evaluator)
        assert (analysis.score_lead is not None) == has and (analysis.ownership is not None) == has
        assert all((m.score_lead is not None) == has for m in analysis.moves)
        if has:
            assert np.asarray(analysis.ownership).shape == (SIZE * SIZE,)
