"""Games of search against itself, in lockstep: the self-play driver both games share.

`play_lockstep(search, count, rng, full_search_prob, step)` runs one batched search round after
another over every unfinished game (`mcts.BatchedSearch` or `gumbel.GumbelSearch`, on any game of
the boundary in `gocore.rules.game`): each round draws every game's search as full or fast
(playout cap randomization, `targets.is_full_search`), searches them in one call and hands each
game's result to `step(g, result)`, which records it, plays the move and says whether game g has
ended. What a game records and how it ends (Go's resignation and passes, Baghchal's repetition
draw) stay in each game's `step`: `gocore.search.selfplay` for Go, `baghchal_selfplay` for Baghchal.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gocore.search.mcts import BatchedSearch, SearchResult
from gocore.search.targets import is_full_search


def play_lockstep(search: BatchedSearch, count: int, rng: np.random.Generator, full_search_prob: float,
                  step: Callable[[int, SearchResult], bool]) -> None:
    """Search games 0..count-1 of `search` round by round until `step` has ended every one of them
    (`step(g, result)` is True once game g is over; it is not called for g again)."""
    active = list(range(count))
    while active:
        fast = [g for g in active if not is_full_search(rng, full_search_prob)]
        active = [g for g, result in zip(active, search.search(active, fast=fast)) if not step(g, result)]
