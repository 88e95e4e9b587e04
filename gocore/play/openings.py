"""Random openings: the moves played before the players take over, so that games differ.

Two users: GNU Go's expert games (`gnugo_games`: every game its own opening, which `ScriptedOpening` plays
for each engine) and evaluation matches
(`match.play_match`: games 2i and 2i + 1 share opening i, played once with each colour, so a
deterministic player still meets many positions and no opening favours either side of the match).
An opening is a list of moves on points off the first two lines (`opening_moves`), drawn by the
match core's `game_match.random_actions` from `GoGame.opening_mask`; a match plays it through
`game_match.play_game`'s `opening`, and `ScriptedOpening` plays one on behalf of an agent and asks
the agent for every other move.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gocore.play import game_match
from gocore.rules.board import Position
from gocore.rules.game import GoGame

PAIR_SALT = (0x6F70,)  # the third word of a Go pair opening's seed (Baghchal's has none)


def opening_moves(size: int, count: int, rng: np.random.Generator, komi: float = 7.5) -> list[int]:
    """`count` random legal moves from the empty board, each on a point off the first two lines
    (off the first line on boards under 7) while one is free, else anywhere legal
    (`GoGame.opening_mask`)."""
    return game_match.random_actions(GoGame(size, komi), count, rng)


def pair_opening(size: int, count: int, seed: int, index: int, komi: float = 7.5) -> list[int]:
    """The opening of match game `index`: the same for games 2i and 2i + 1 (one per colour of
    player A), fixed by the match seed and i alone (`game_match.pair_opening`); [] when `count` is 0."""
    return game_match.pair_opening(GoGame(size, komi), count, seed, index, PAIR_SALT)


class ScriptedOpening:
    """An agent that plays scripted moves (move number -> move) and asks the agent it wraps for
    the others; every other attribute (an engine's ``start_game``, ``observe``, ``final_score``,
    a search's ``last_result``) is the wrapped agent's."""

    def __init__(self, agent: Any, opening: Mapping[int, int]):
        self.agent, self.opening = agent, dict(opening)

    def select_move(self, position: Position) -> int:
        """The scripted move at this move number, else the wrapped agent's."""
        scripted = self.opening.get(position.move_number)
        return scripted if scripted is not None else self.agent.select_move(position)

    def __getattr__(self, name: str) -> Any:
        if name == "agent":  # not yet set (copying, unpickling): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.agent, name)
