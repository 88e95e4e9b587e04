"""Score lead and ownership averaged over a search tree, as KataGo reports them.

PUCT backs up only the value, so a node's win rate (Q) is already the search's average; the aux
heads' score and ownership are not backed up. `HeadRecorder` is an evaluator for the search that
asks the net for its aux heads with every evaluation (one forward pass gives all outputs) and keeps
each evaluated position's score and ownership. `TreeAverages` then reads, for any node, the
average over its subtree's evaluations weighted as the search visited them: the node's own
evaluation once, each child's subtree by its visits, a finished position (two passes, or the move
cap) by the rules' score and area ownership for every visit that reached it. That is KataGo's
root ``scoreLead`` / ``ownership`` (whole tree) and a move's ``scoreLead`` / per-move
``ownership`` (its subtree).

Cost: the sums of a subtree are cached with the node's visit count and reused while it has not
changed, so reading the tree again after more search revisits only the nodes search went through.
Memory: one float per evaluated position, plus its ownership (N*N float32) when kept.

Perspective: everything from the side to move at the node asked about (+ = that player's lead,
ownership +1 = that player's point); a child's sums are negated on the way up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.board import Position

if TYPE_CHECKING:
    from gocore.nn.inference import AuxEvaluation, Evaluator
    from gocore.search.mcts import Node


class HeadRecorder:
    """An evaluator for search that also records each position's aux-head score and ownership.
    `evaluator` must have the heads (``has_score``); `keep_ownership`: record ownership too."""

    has_score = has_ownership = True

    def __init__(self, evaluator: Evaluator, keep_ownership: bool):
        self.evaluator, self.keep_ownership = evaluator, keep_ownership
        self._heads: dict[int, tuple[Position, float, np.ndarray | None]] = {}  # id -> (kept alive, score, ownership)

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        aux = self.evaluator.evaluate_aux(positions)
        for index, position in enumerate(positions):
            ownership = aux.ownership[index] if self.keep_ownership else None  # (N*N,) float32
            self._heads[id(position)] = (position, float(aux.score[index]), ownership)
        return aux.priors, aux.values

    def evaluate_aux(self, positions: Sequence[Position]) -> AuxEvaluation:
        """The wrapped evaluator's aux outputs (for readers of unsearched positions)."""
        return self.evaluator.evaluate_aux(positions)

    def heads(self, position: Position) -> tuple[float, np.ndarray | None] | None:
        """(score, ownership) recorded for `position`, side to move's view; None if never evaluated."""
        found = self._heads.get(id(position))
        return None if found is None or found[0] is not position else found[1:]


@dataclass(frozen=True)
class SubtreeSums:
    """Sums over a subtree's evaluations, from the view of the side to move at its top node."""

    visits: float  # the node's visits when summed (the cache key)
    weight: float  # evaluations summed
    score: float  # sum of score leads
    ownership: np.ndarray | None  # (N*N,) float64 sum of ownership; None if not recorded

    @property
    def mean_score(self) -> float | None:
        return None if self.weight == 0 else self.score / self.weight

    @property
    def mean_ownership(self) -> np.ndarray | None:
        return None if self.weight == 0 or self.ownership is None else self.ownership / self.weight


class TreeAverages:
    """Search-weighted averages of score and ownership over the subtrees of one search's tree."""

    def __init__(self, recorder: HeadRecorder):
        self.recorder = recorder
        self._cache: dict[int, tuple[Node, SubtreeSums]] = {}

    def sums(self, top: Node) -> SubtreeSums:
        """The sums over `top`'s subtree (see the module doc), computed bottom-up without recursion."""
        order, stack = [], [top]
        while stack:  # nodes whose cached sums are stale, parents before children
            node = stack.pop()
            if self._cached(node) is None:
                order.append(node)
                stack.extend(child for child in node.children.values() if child.visits > 0)
        for node in reversed(order):  # children first
            self._cache[id(node)] = (node, self._sum(node))
        return self._cached(top) or self._sum(top)

    def _cached(self, node: Node) -> SubtreeSums | None:
        found = self._cache.get(id(node))
        return found[1] if found is not None and found[0] is node and found[1].visits == node.visits else None

    def _sum(self, node: Node) -> SubtreeSums:
        """`node`'s own evaluation plus its children's cached sums (negated: the opponent moves there)."""
        if node.terminal_value is not None:  # scored by the rules at every visit
            position = node.position
            ownership = position.ownership().ravel().astype(np.float64) * position.to_play
            return SubtreeSums(node.visits, node.visits, node.visits * position.score() * position.to_play,
                               node.visits * ownership if self.recorder.keep_ownership else None)
        own = self.recorder.heads(node.position)
        weight, score = (1.0, own[0]) if own is not None else (0.0, 0.0)
        ownership = None if own is None or own[1] is None else own[1].astype(np.float64)
        for child in node.children.values():
            found = self._cached(child) if child.visits > 0 else None
            if found is None or found.weight == 0:
                continue
            weight, score = weight + found.weight, score - found.score
            if found.ownership is not None:
                ownership = -found.ownership if ownership is None else ownership - found.ownership
        return SubtreeSums(node.visits, weight, score, ownership)
