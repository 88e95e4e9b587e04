"""A search tree read as analysis: per move visits, win rate, prior, LCB, order and principal variation.

The one place that turns a `gocore.search.mcts.Node` into what a Go GUI shows: GTP's
``lz-analyze`` / ``kata-analyze`` (`gocore.play.gtp_analysis` formats it) and ``gozero review``
(`tasks.app.review`). Start reading at `analyse`.

Perspective: every number is from the view of the player to move at the analysed root: a move's
win rate is that player's chance to win after playing it, as GTP analysis reports it.

- win rate = (1 + Q) / 2 with Q = W / N of the move's edge (values are +1 win / -1 loss).
- LCB: the tree keeps no variance, so it is the normal bound of a mean of N results in [0, 1],
  winrate - LCB_Z * sqrt(winrate * (1 - winrate) / N) (at most the binomial's spread), clipped at 0;
  an unvisited move has LCB 0. Leela Zero and KataGo use the observed variance instead.
- order: by visits, then win rate, then prior (the most visited move is the one search plays).
- The principal variation follows the most visited child from the move down while it has visits.

HEAD OUTPUTS HOOK: score lead and ownership come from a net's aux heads. An evaluator whose
``has_score`` / ``has_ownership`` flags are set offers ``evaluate_aux(positions)`` with ``.score``
and ``.ownership`` (`gocore.nn.inference.NetEvaluator` of a net with the auxiliary heads); any other
evaluator gives None and the callers leave the numbers out (no scoreLead, no ownership). Given the
`TreeAverages` of a search that recorded the heads (`gocore.search.tree_averages`), the root's
score and ownership and each visited move's are averages over the search, as KataGo's are;
without them (or for a move with no visits) they are the heads' reading of the root, or of the
position after the move.

A finished root (two passes, or the move cap) is answered with the rules' result: win rate 1, 0
or 0.5 for the side to move, its score and area ownership, no moves.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.board import Position

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator
    from gocore.search.mcts import Node
    from gocore.search.tree_averages import TreeAverages

LCB_Z = 1.96  # a two-sided 95% normal interval's lower end
PV_LENGTH = 15  # moves of principal variation reported per move at most


@dataclass(frozen=True)
class HeadOutputs:
    """What a net's auxiliary heads say about a batch of positions; None: the net has no such head."""

    score_lead: np.ndarray | None = None  # (B,) float: points the side to move leads by
    ownership: np.ndarray | None = None  # (B, N*N) float in [-1, 1]: +1 = the side to move's point


def has_heads(evaluator: Evaluator | None) -> bool:
    """Whether `evaluator` has a score or an ownership head (the flags of `gocore.nn.inference`)."""
    return bool(getattr(evaluator, "has_score", False) or getattr(evaluator, "has_ownership", False))


def head_outputs(evaluator: Evaluator | None, positions: Sequence[Position]) -> HeadOutputs:
    """THE hook where score and ownership heads plug in: the evaluator's ``evaluate_aux`` if it has
    such heads, else no outputs."""
    if not has_heads(evaluator) or not positions:
        return HeadOutputs()
    aux = evaluator.evaluate_aux(positions)
    return HeadOutputs(score_lead=aux.score if getattr(evaluator, "has_score", False) else None,
                       ownership=aux.ownership if getattr(evaluator, "has_ownership", False) else None)


@dataclass(frozen=True)
class MoveAnalysis:
    """One candidate move at the root."""

    move: int
    visits: int
    winrate: float  # 0..1, the root mover's chance after this move
    prior: float  # 0..1, the network's prior (without root noise)
    lcb: float  # 0..1, lower confidence bound of winrate
    order: int  # 0 = best
    pv: tuple[int, ...]  # the principal variation, starting with `move`
    score_lead: float | None = None  # points the root mover leads by after this move; None: no score head
    ownership: np.ndarray | None = None  # (N*N,) after this move, +1 = the root mover's point; None: not asked


@dataclass(frozen=True)
class PositionAnalysis:
    """A root position's analysis: its own evaluation and its candidate moves, best first."""

    position: Position
    visits: int  # the root's visits (its own evaluation included)
    winrate: float  # 0..1, the side to move's chance (root Q)
    moves: tuple[MoveAnalysis, ...]
    score_lead: float | None = None  # points the side to move leads by; None: no score head
    ownership: np.ndarray | None = None  # (N*N,) in [-1, 1], +1 = the side to move's; None: no head

    @property
    def best(self) -> MoveAnalysis | None:
        """The move search rates best (order 0), or None if nothing was searched."""
        return self.moves[0] if self.moves else None

    def of(self, move: int) -> MoveAnalysis | None:
        """The analysis of `move`, if it was reported."""
        return next((m for m in self.moves if m.move == move), None)


def analyse(root: Node, evaluator: Evaluator | None = None, min_moves: int = 0,
            max_moves: int | None = None, averages: TreeAverages | None = None) -> PositionAnalysis:
    """The analysis of a searched root: its visited moves (at least `min_moves` legal ones, adding
    unvisited moves by prior; at most `max_moves`), with score and ownership if `evaluator` has heads,
    averaged over the search when its `averages` are given."""
    if root.terminal_value is not None:
        return finished(root)
    winrate = (1.0 + root.q) / 2.0
    if root.prior is None:  # not yet evaluated: nothing to rank
        return PositionAnalysis(root.position, int(round(root.visits)), winrate, ())
    visits = root.child_N.round()  # (N*N+1,)
    q = np.where(visits > 0, root.child_W / np.maximum(visits, 1.0), 2.0 * winrate - 1.0)  # (N*N+1,)
    rates = (1.0 + q) / 2.0
    legal = np.flatnonzero(root.illegal == 0)
    ranked = sorted(legal, key=lambda m: (-visits[m], -rates[m], -root.prior[m]))
    shown = max(int((visits > 0).sum()), min(min_moves, len(ranked)))
    if max_moves is not None:
        shown = min(shown, max_moves)
    moves = [MoveAnalysis(int(m), int(visits[m]), float(rates[m]), float(root.prior[m]),
                          lower_bound(float(rates[m]), int(visits[m])), order, principal_variation(root, int(m)))
             for order, m in enumerate(ranked[:shown])]
    analysis = PositionAnalysis(root.position, int(round(root.visits)), winrate, tuple(moves))
    return _with_heads(analysis, evaluator) if averages is None else _averaged(analysis, root, evaluator, averages)


def finished(root: Node) -> PositionAnalysis:
    """A finished root's analysis: the rules' result (win rate, score, area ownership), no moves."""
    position = root.position
    return PositionAnalysis(position, max(1, int(round(root.visits))), (1.0 + root.terminal_value) / 2.0, (),
                            position.score() * position.to_play,
                            position.ownership().ravel().astype(np.float32) * position.to_play)


def lower_bound(winrate: float, visits: int) -> float:
    """The LCB of a win rate measured over `visits` results (0 for none)."""
    if visits <= 0:
        return 0.0
    return max(0.0, winrate - LCB_Z * math.sqrt(winrate * (1.0 - winrate) / visits))


def principal_variation(root: Node, move: int, length: int = PV_LENGTH) -> tuple[int, ...]:
    """`move`, then the most visited reply at each node below it while one has visits."""
    pv, node = [move], root.children.get(move)
    while node is not None and node.prior is not None and len(pv) < length:
        reply = int(node.child_N.argmax())
        if node.child_N[reply] < 1:
            break
        pv.append(reply)
        node = node.children.get(reply)
    return tuple(pv)


def _with_heads(analysis: PositionAnalysis, evaluator: Evaluator | None) -> PositionAnalysis:
    """`analysis` with the heads' score leads and ownership, when the evaluator has such heads."""
    if not has_heads(evaluator):
        return analysis
    root = analysis.position
    after = [root.play(m.move) for m in analysis.moves]
    heads = head_outputs(evaluator, [root, *after])
    leads = heads.score_lead
    moves = analysis.moves if leads is None else tuple(
        dataclasses.replace(m, score_lead=-float(lead)) for m, lead in zip(analysis.moves, leads[1:]))  # the opponent moves next
    return PositionAnalysis(root, analysis.visits, analysis.winrate, moves,
                            None if leads is None else float(leads[0]),
                            None if heads.ownership is None else heads.ownership[0])


def _averaged(analysis: PositionAnalysis, root: Node, evaluator: Evaluator | None,
              averages: TreeAverages) -> PositionAnalysis:
    """`analysis` with the search's averages of score and ownership at the root and for each visited
    move (negated: the opponent moves after it); unvisited moves get the heads' reading."""
    unvisited = [m for m in analysis.moves if m.visits == 0]
    read = _with_heads(dataclasses.replace(analysis, moves=tuple(unvisited)), evaluator) if unvisited else analysis
    by_move = {m.move: m for m in read.moves}
    moves = []
    for move in analysis.moves:
        if move.visits == 0:
            moves.append(by_move[move.move])
            continue
        sums = averages.sums(root.children[move.move])
        score, ownership = sums.mean_score, sums.mean_ownership
        moves.append(dataclasses.replace(move, score_lead=None if score is None else -score,
                                         ownership=None if ownership is None else -ownership))
    top = averages.sums(root)
    return PositionAnalysis(analysis.position, analysis.visits, analysis.winrate, tuple(moves),
                            top.mean_score, top.mean_ownership)
