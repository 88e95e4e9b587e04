"""The search tree's node: a position with its children's N, W, P as numpy vectors (as in minigo),
expanded a batch of leaves at a time (`expand_all`), choosing by PUCT (`Node.best_move`); the
per-node math runs in `tree_kernels`. `mcts.BatchedSearch` and `gumbel.GumbelSearch` grow it.

Perspective and counting are `mcts`'s: ``child_W[m]`` sums values from the view of the player to
move at the node; ``visits`` is 1 (the node's own evaluation) plus its children's N.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence

import numpy as np

from gocore.rules.board import Position
from gocore.search import tree_kernels


class Node:
    """A position in the tree with its children's statistics; the root has no parent."""

    __slots__ = ("child_N", "child_P", "child_W", "children", "illegal", "is_pending", "log_prior", "move", "_parent",
                 "position", "prior", "terminal_value", "value", "visits", "__weakref__")

    def __init__(self, position: Position, parent: Node | None, move: int, terminal_value: float | None):
        self.position, self.parent, self.move = position, parent, move  # parent: a weak reference
        self.children: dict[int, Node] = {}
        self.visits = 0.0  # own evaluation + children's N (+ virtual losses in flight)
        self.value = 0.0  # this node's leaf evaluation, side to move's view
        self.terminal_value = terminal_value  # +1/-1/0 for the side to move if the game is over here
        self.is_pending = False  # waiting in this round's batch
        self.prior: np.ndarray | None = None  # (N*N+1,) network priors; None = not expanded
        self.child_P = self.child_N = self.child_W = self.illegal = None  # (N*N+1,) each
        self.log_prior: np.ndarray | None = None  # log P + illegal, kept by `gumbel.logits_of` once asked

    @property
    def parent(self) -> Node | None:
        """The node this one was reached from; None at the root. Held weakly: a tree has no cycles, so
        an old tree is freed by reference counting when the root moves on, not left to the full GC
        (rare beside torch's and Prefect's long-lived objects: workers kept 100s of MB of dead trees)."""
        return None if self._parent is None else self._parent()

    @parent.setter
    def parent(self, node: Node | None) -> None:
        self._parent = None if node is None else weakref.ref(node)

    def expand(self, legal: np.ndarray, prior: np.ndarray) -> None:
        """Attach priors over the legal moves (renormalised there; uniform if they vanish)."""
        expand_all([self], np.asarray(legal)[None], np.asarray(prior)[None])
        self.count_visits()

    def count_visits(self) -> None:
        """Writable child_N and child_W of the node's own, before its first visit is counted: until
        then an expanded node shares read-only zeros (`expand_all`)."""
        if not self.child_N.flags.writeable:
            self.child_N, self.child_W = np.zeros(len(self.child_N)), np.zeros(len(self.child_W))

    def best_move(self, c_puct: float) -> int:
        """argmax over children of Q + U (AlphaGo Zero's PUCT), in one kernel call."""
        return tree_kernels.puct_choice(self.child_N, self.child_W, self.child_P, self.illegal, float(c_puct),
                                        float(self.visits))

    @property
    def q(self) -> float:
        """Mean of the values backed up through this node, side to move's view."""
        if self.visits == 0:
            return 0.0
        if self.prior is None:  # a terminal or unexpanded node has no children's W
            return self.terminal_value if self.terminal_value is not None else self.value
        return float((self.value + self.child_W.sum()) / self.visits)


def expand_all(nodes: Sequence[Node], legal: np.ndarray, priors: np.ndarray, own_rows: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`Node.expand` of every node, node b with legal[b] and priors[b] (B, N*N+1), in one kernel call.
    Returns the renormalised priors and the illegal rows (B, N*N+1), and (B,) whether a node's priors
    vanished on its legal moves (it got uniform float64 priors instead). With `own_rows` each node
    gets copies: a row of the batch would keep the whole batch alive as long as the node lives
    (a reused subtree); without, views (`gumbel`: its nodes below the root die at the next move)."""
    kept = np.empty(priors.shape, priors.dtype)
    illegal = np.empty(priors.shape)  # added to scores: illegal moves never win
    is_vanished = np.empty(len(nodes), np.bool_)
    tree_kernels.expand_rows(legal, priors, kept, illegal, is_vanished)
    unvisited = _unvisited(priors.shape[1])
    for b, (node, node_kept, node_illegal, vanished) in enumerate(zip(nodes, kept, illegal, is_vanished.tolist())):
        node.prior = legal[b] / legal[b].sum() if vanished else node_kept.copy() if own_rows else node_kept
        node.child_P, node.illegal = node.prior, node_illegal.copy() if own_rows else node_illegal
        node.child_N = node.child_W = unvisited  # most leaves are never visited again (`count_visits`)
        node.log_prior = None
    return kept, illegal, is_vanished


@functools.cache
def _unvisited(moves: int) -> np.ndarray:
    """(moves,) read-only zeros: the child_N and child_W every fresh node shares."""
    zeros = np.zeros(moves)
    zeros.setflags(write=False)
    return zeros
