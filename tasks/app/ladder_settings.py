"""What ladder games are: `LadderSettings` (a player rated against its most informative opponents)
and `ChampionSettings` (the champion against the same yardsticks every week).

    settings = LadderSettings(size=5, games_per_opponent=2).sized_for(player)   # the ladder flow's parameter
    ChampionSettings(gnugo_levels=(1, 5)).ladder()                              # evaluate-champion's games

The ladder's steps over them are in `tasks.ladder`, its flows in flows/ladder.py and flows/champion.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tasks.app.sizes import resolve_size

DEFAULT_ANCHORS = ("uct-100", "gnugo-1")  # uct-100: the 2024 replication's MCTS agent


@dataclass(frozen=True)
class LadderSettings:
    """How ladder games are played and whom a player meets; logged with every ladder run."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    size: int | None = None
    """Board size N: the ladder of ``gozero-<N>x<N>``; None: the size the rated player's name says
    (``models:/gozero-<N>x<N>/...``, as a promotion's event names it), else 9."""
    games_per_opponent: int = 10
    """Games of each ladder match (colours alternate)."""
    opponents: int = 3
    """Opponents a player meets on the ladder (a rerun counts the ones it met)."""
    sims: int = 100
    """Simulations per move of network players and a bare ``uct``."""
    komi: float = 7.5
    """Komi of ladder games."""
    anchors: tuple[str, ...] = DEFAULT_ANCHORS
    """Fixed players besides random (GNU Go ones are skipped when it is not installed)."""
    gtp_timeout: float = 30.0
    """Seconds an external engine gets per command."""
    device: str = "cpu"
    """Where nets run in the pool's workers (auto, cpu, cuda, cuda:<i>, mps): cpu unless asked, as each
    worker process would hold its own CUDA context."""

    def sized_for(self, player: str | None) -> LadderSettings:
        """These settings with `size` resolved (`tasks.app.sizes.resolve_size`): the size given, else
        the one `player` names, else 9; SizeError when the two contradict."""
        return dataclasses.replace(self, size=resolve_size(self.size, player, option="settings.size"))


@dataclass(frozen=True)
class ChampionSettings:
    """Whom the champion meets and how: the same yardsticks every time, so its rank against GNU Go
    compares from week to week."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    size: int = 9
    """Board size N: the champion of ``gozero-<N>x<N>``."""
    gnugo_levels: tuple[int, ...] = (1, 5, 10)
    """GNU Go levels to play (left out, with a message, when GNU Go is not installed)."""
    anchors: tuple[str, ...] = DEFAULT_ANCHORS
    """The ladder's anchors to play besides random."""
    games_per_opponent: int = 20
    """Games against each opponent (colours alternate)."""
    sims: int = 100
    """Simulations per move of the champion's search and of a bare ``uct``."""
    komi: float = 7.5
    """Komi of every game."""

    def ladder(self) -> LadderSettings:
        """The ladder settings of these games: no opponents to choose (the yardsticks are fixed)."""
        return LadderSettings(self.size, self.games_per_opponent, 0, self.sims, self.komi, tuple(self.anchors))
