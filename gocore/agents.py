"""Players: anything with ``select_move(position) -> move``.

Here: `RandomAgent` (uniform over legal moves that do not fill its own eye) and `UCTAgent`
(UCT with random-rollout leaf values, the classic Monte Carlo baseline). Network players
(policy-only, AlphaGo, AlphaGo Zero) live with the search in `gocore.mcts`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from gocore.board import Position, own_eye_mask, random_playouts


class Agent(Protocol):
    """A Go player."""

    name: str

    def select_move(self, position: Position) -> int:
        """The move to play in `position` (pass = N*N)."""
        ...


def sensible_moves(position: Position) -> np.ndarray:
    """Legal board moves that do not fill the mover's own one-point eye (int array)."""
    mask = position.legal_moves() & ~own_eye_mask(position)
    return np.flatnonzero(mask[:-1])


class RandomAgent:
    """Uniformly random among sensible moves; passes when there is none."""

    def __init__(self, seed: int | None = None):
        self.name = "random"
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        moves = sensible_moves(position)
        return int(self._rng.choice(moves)) if len(moves) else position.size ** 2


@dataclass(eq=False)
class _Node:
    """A search node; `wins` counts from the view of the player who moved into it."""

    position: Position
    untried: list[int]
    parent: _Node | None = None
    move: int = -1
    visits: int = 0
    wins: float = 0.0
    children: list[_Node] = field(default_factory=list)


class UCTAgent:
    """UCT (UCB1 tree policy) with one uniform random playout per new leaf."""

    def __init__(self, simulations: int = 800, exploration: float = 1.0, seed: int | None = None):
        self.name = f"uct-{simulations}"
        self.simulations, self.exploration = simulations, exploration
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        if len(sensible_moves(position)) == 0:
            return position.size ** 2
        root = self._new_node(position, None, -1)
        for _ in range(self.simulations):
            node = self._descend(root)
            black_wins = self._rollout(node.position)
            self._backup(node, black_wins)
        best = max(root.children, key=lambda child: child.visits)
        return best.move

    def _new_node(self, position: Position, parent: _Node | None, move: int) -> _Node:
        untried = [int(m) for m in sensible_moves(position)]
        self._rng.shuffle(untried)
        if not untried and not position.is_game_over():
            untried = [position.size ** 2]  # nothing sensible left: the only move is pass
        return _Node(position, untried, parent, move)

    def _descend(self, node: _Node) -> _Node:
        """Follow UCB1 to a node with untried moves, expand one, return the new leaf."""
        while not node.untried and node.children:
            log_n = math.log(node.visits)
            node = max(node.children, key=lambda c: c.wins / c.visits
                       + self.exploration * math.sqrt(log_n / c.visits))
        if node.untried:
            move = node.untried.pop()
            child = self._new_node(node.position.play(move), node, move)
            node.children.append(child)
            node = child
        return node

    def _rollout(self, position: Position) -> float:
        """1.0 if black wins a random playout from `position`, 0.0 if white, 0.5 for jigo."""
        score = random_playouts(position, 1, seed=int(self._rng.integers(1 << 62)))[0]
        return 1.0 if score > 0 else 0.0 if score < 0 else 0.5

    @staticmethod
    def _backup(node: _Node | None, black_wins: float) -> None:
        while node is not None:
            node.visits += 1
            mover = -node.position.to_play  # the player who moved into this node
            node.wins += black_wins if mover == 1 else 1.0 - black_wins
            node = node.parent
