"""Baghchal players that search or pick at random: anything with ``select_move(position) -> action``.

- `RandomAgent`: uniform over the legal actions.
- `ZeroAgent`: AlphaGo Zero's player through the game boundary: PUCT (or Gumbel) search on one
  evaluator (`gocore.nn.baghchal_net`), the most visited action (`baghchal_selfplay.MATCH`), its
  subtree kept when the next position it is asked about follows from it.

The `baghchal` library's engine and a person at the terminal are `gocore.play.baghchal_players`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.baghchal.game import BaghchalGame
from gocore.rules.baghchal.position import Position
from gocore.search import mcts
from gocore.search.baghchal_selfplay import MATCH
from gocore.search.gumbel import GumbelConfig, search_factory

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator


class RandomAgent:
    """Uniformly random among the legal actions."""

    def __init__(self, seed: int | None = None):
        self.name = "random"
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        return int(self._rng.choice(np.flatnonzero(position.legal_moves())))


class ZeroAgent:
    """Search on one evaluator; the most visited action (ties: the best mean value, then random)."""

    def __init__(self, evaluator: Evaluator, config: mcts.MCTSConfig = MATCH, seed: int | None = None,
                 gumbel: GumbelConfig | None = None, name: str | None = None):
        self.name = name or f"zero-{config.sims}"
        self.evaluator, self.config, self.gumbel, self._seed = evaluator, config, gumbel, seed
        self._search: mcts.BatchedSearch | None = None
        self.last_result: mcts.SearchResult | None = None  # the latest search, for logs

    def select_move(self, position: Position) -> int:
        self._start_from(position)
        self.last_result = self._search.search()[0]
        self._search.advance(0, self.last_result.move)
        return self.last_result.move

    def _start_from(self, position: Position) -> None:
        """Reuse the kept tree if `position` is its root or one of its children, else start afresh."""
        game = BaghchalGame(position.rules)
        if self._search is not None:
            root = self._search.roots[0]
            if _is_same(root.position, position):
                return
            last = position.last_action
            child = root.children.get(last) if last is not None else None
            if child is not None and _is_same(child.position, position):
                self._search.advance(0, last)
                return
        build = search_factory(self.gumbel, game)
        self._search = build(self.evaluator, self.config, [position], seed=self._seed)


def _is_same(a: Position, b: Position) -> bool:
    """The same node of the same game: equal positions with the same repetition history."""
    return a == b and a.seen == b.seen and a.rules == b.rules
