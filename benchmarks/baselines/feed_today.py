"""The tree code of self-play's search as it was before the per-node kernels (issue #28), kept for
`benchmarks.feed`'s baseline: its per-position path runs with these put back, so its ratio stays
comparable to the figures measured before (1.71x Gumbel, 1.85x PUCT at 19x19).

Each function is today's code: the numpy originals word for word, and where the new code calls a
new name (`expand_all`, `sigma_of`) what today's did in its place. `todays_tree` swaps them in for a
run. tests/gocore/search/test_tree_kernels.py pins the kernels to these same functions.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence

import numpy as np

from gocore.search import gumbel, mcts
from gocore.search.gumbel import TINY, GumbelConfig, GumbelSearch, completed_q, improved_policy, sigma
from gocore.search.mcts import BatchedSearch
from gocore.search.tree import Node


def expand(self: Node, legal: np.ndarray, prior: np.ndarray) -> None:
    """`Node.expand` in numpy."""
    prior = np.where(legal, prior, 0.0)
    total = prior.sum()
    self.prior = prior / total if total > 0 else legal / legal.sum()
    self.child_P = self.prior
    self.child_N = np.zeros(len(prior))
    self.child_W = np.zeros(len(prior))
    self.illegal = np.where(legal, 0.0, -np.inf)
    self.log_prior = None


def expand_all(nodes: Sequence[Node], legal: np.ndarray, priors: np.ndarray) -> None:
    """The leaves expanded one by one, as `_round` did (`expand` each)."""
    for node, moves, prior in zip(nodes, legal, priors):
        node.expand(moves, prior)


def expand_leaves(leaves: Sequence[Node], candidates: np.ndarray, priors: np.ndarray) -> None:
    """Gumbel's leaves expanded one by one, their log priors left to `logits_of`."""
    expand_all(leaves, candidates, priors)


def charge(self: BatchedSearch, node: Node, move: int, loss: float) -> Node:
    """`BatchedSearch._charge` with `Position.play`: the new leaf's board and masks left to the
    evaluator and the search's candidates."""
    node.child_N[move] += loss
    node.child_W[move] -= loss
    child = node.children.get(move)
    if child is None:
        child = node.children[move] = self._new_node(node.position.play(move), node, move)
    child.visits += loss
    return child


def advance(self: GumbelSearch, game: int, move: int) -> None:
    """`GumbelSearch.advance`: the new root keeps its arrays (no rows of a batch then)."""
    BatchedSearch.advance(self, game, move)
    root = self.roots[game]
    if root.prior is not None:
        root.children.clear()
        root.child_N, root.child_W = np.zeros_like(root.child_N), np.zeros_like(root.child_W)
        root.visits = 1.0


def best_move(self: Node, c_puct: float) -> int:
    """`Node.best_move` in numpy: argmax over children of Q + U."""
    scale = c_puct * math.sqrt(max(self.visits - 1.0, 1.0))
    scores = (self.child_W / np.maximum(self.child_N, 1.0)
              + scale * self.child_P / (1.0 + self.child_N) + self.illegal)  # (N*N+1,)
    return int(scores.argmax())


def select_child(node: Node, config: GumbelConfig) -> int:
    """`gumbel.select_child` in numpy: argmax of improved policy - N / (1 + sum N)."""
    scores = improved_policy(node, config) - node.child_N / (1.0 + node.child_N.sum()) + node.illegal
    return int(scores.argmax())


def sigma_of(node: Node, config: GumbelConfig) -> np.ndarray:
    """Gumbel's sigma of the completed Q in numpy (the root's halving, result and improved policy)."""
    return sigma(completed_q(node), node, config)


def logits_of(node: Node) -> np.ndarray:
    """Gumbel's log priors computed at every step (before they were kept per node)."""
    return np.log(np.maximum(node.prior, TINY)) + node.illegal


TODAYS = ((Node, "expand", expand), (mcts, "expand_all", expand_all),
          (gumbel.GumbelSearch, "_expand_leaves", staticmethod(expand_leaves)), (Node, "best_move", best_move),
          (mcts.BatchedSearch, "_charge", charge), (gumbel.GumbelSearch, "advance", advance),
          (gumbel, "select_child", select_child), (gumbel, "sigma_of", sigma_of), (gumbel, "logits_of", logits_of))
"""(owner, attribute, today's version) of everything the baseline puts back."""


@contextlib.contextmanager
def todays_tree(is_baseline: bool) -> Iterator[None]:
    """For the baseline, the tree code as it was (`TODAYS`); the code as it is otherwise."""
    if not is_baseline:
        yield
        return
    kept = [(owner, name, vars(owner)[name]) for owner, name, _ in TODAYS]  # a class's staticmethod as such
    for owner, name, today in TODAYS:
        setattr(owner, name, today)
    try:
        yield
    finally:
        for owner, name, new in kept:
            setattr(owner, name, new)
