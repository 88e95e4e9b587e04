"""Baghchal self-play: games played by search on both sides, and the training rows they make.

`play_games(evaluator, config, count, seed)` plays `count` games in lockstep through the game
boundary (`mcts.BatchedSearch` or `gumbel.GumbelSearch` with ``game=BAGHCHAL``: every round's
leaves from every game are one evaluator call), each move searched in full or fast as
`config.search.full_search_prob` draws (playout cap randomization, as Go's). Then, with no I/O:

- `training_rows(games, ...)`: one row per position before each fully searched move, **in all 8
  symmetries** (the 8x augmentation is stored: `symmetry` 0..7 says which): the state (pieces as
  bit masks, goats placed and captured, side to move, ply), pi (217, the root visit distribution
  or Gumbel's improved policy, moved by the same symmetry) and z (+1 the side to move won, 0 a
  draw, -1 lost), with the game's id, generation and model;
- `record_text(game, rules)`: the game in the library's notation (``1. G33 B1122 ...# 1/2-1/2``);
- `summarize(games)`: counts by winner and end reason, plies.

Baghchal's settings differ from Go's where the game does: no resignation (short games, draws are
common), the rules end the game (repetition, the ply cap), Dirichlet alpha for ~15 legal actions,
and the first `temperature_moves` plies sampled by visits, through the placement phase.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gocore.nn.baghchal_planes import States, symmetric_states
from gocore.rules import symmetry
from gocore.rules.baghchal.game import BAGHCHAL, BaghchalGame
from gocore.rules.baghchal.notation import write_record
from gocore.rules.baghchal.position import DEFAULT_RULES, BaghchalRules, Position
from gocore.search import rows
from gocore.search.gumbel import GumbelConfig, search_factory
from gocore.search.lockstep import play_lockstep
from gocore.search.mcts import BatchedSearch, MCTSConfig, SearchResult

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

SELFPLAY = MCTSConfig(sims=64, noise=True, dirichlet_alpha=0.5, temperature_moves=20, resign_threshold=None,
                      sensible_moves=False)
"""Baghchal self-play search: alpha ~ 10 / (about 20 legal actions), tau = 1 for the first 20 plies."""
MATCH = MCTSConfig(sims=64, temperature_moves=0, resign_threshold=None, leaves_per_game=1, sensible_moves=False)
"""Baghchal evaluation games: no noise, the most visited action, one leaf a round (as Go's MATCH)."""


@dataclass(frozen=True)
class BaghchalSelfPlayConfig:
    """What a batch of Baghchal self-play games is."""

    search: MCTSConfig = field(default_factory=lambda: SELFPLAY)
    """Search settings (sims, noise, temperature, playout cap)."""
    gumbel: GumbelConfig | None = None
    """Gumbel root search instead of PUCT; None = PUCT."""
    rules: BaghchalRules = DEFAULT_RULES
    """The rules' settings (captures to win, the repetition draw, the ply cap)."""


@dataclass
class PlayedGame:
    """One game of search against itself."""

    actions: list[int] = field(default_factory=list)
    pis: list[np.ndarray] = field(default_factory=list)  # (A,) float32 per ply
    root_values: list[float] = field(default_factory=list)  # mover's view, per ply
    full: list[bool] = field(default_factory=list)  # per ply: a full search (a training row)
    positions: list[Position] = field(default_factory=list)  # before each ply
    final: Position | None = None

    @property
    def winner(self) -> int:
        """+1 Goat, -1 Tiger, 0 a draw (also a game stopped by a search's own `max_moves`)."""
        return int(self.final.winner or 0)

    @property
    def reason(self) -> str:
        """How the game ended (`Position.reason`; move-cap for a search's own `max_moves`)."""
        return self.final.reason if self.final.is_game_over() else "move-cap"


def play_games(evaluator: Evaluator, config: BaghchalSelfPlayConfig, count: int, seed: int | None = None,
               new_search: Callable[..., BatchedSearch] | None = None,
               starts: Sequence[Position] | None = None) -> list[PlayedGame]:
    """`count` games of search against itself, all searched in lockstep, from the start or from
    `starts` (one position each, e.g. after a few random plies; their plies are not recorded)."""
    rng = np.random.default_rng(seed)
    game = BaghchalGame(config.rules)
    if starts is not None:
        if len(starts) != count:
            raise ValueError(f"{len(starts)} start positions for {count} games")
        if any(start.is_game_over() or start.rules != config.rules for start in starts):
            raise ValueError(f"a start position is finished or plays other rules than {config.rules}")
    build = new_search or search_factory(config.gumbel, game)
    search = build(evaluator, config.search, list(starts) if starts is not None else [game.initial()] * count,
                   seed=int(rng.integers(1 << 62)))
    games = [PlayedGame() for _ in range(count)]
    play_lockstep(search, count, rng, config.search.full_search_prob,
                  lambda g, result: _step(games[g], search, g, result))
    return games


def _step(game: PlayedGame, search: BatchedSearch, g: int, result: SearchResult) -> bool:
    """Record the search of game g's move, play it, and finish the game if it ended (True then)."""
    game.positions.append(search.roots[g].position)
    game.actions.append(result.move)
    game.pis.append(result.pi)
    game.full.append(result.is_full)
    game.root_values.append(result.root_value)
    search.advance(g, result.move)
    if search.roots[g].terminal_value is not None:
        game.final = search.roots[g].position
    return game.final is not None


def training_rows(games: Sequence[PlayedGame], game_ids: Sequence[str], *, generation: int,
                  model_version: str) -> dict[str, np.ndarray]:
    """The rows of every position before a fully searched move, each in its 8 symmetries: numpy
    columns named as `storage.baghchal.ROWS_SCHEMA` (8R rows for R positions, symmetry-major)."""
    if len(games) != len(game_ids):
        raise ValueError(f"{len(games)} games but {len(game_ids)} ids")
    kept = [(g, i) for g, game in enumerate(games) for i in np.flatnonzero(rows.recorded_moves(game.full, len(game.actions)))]
    positions = [games[g].positions[i] for g, i in kept]
    if not positions:
        raise ValueError("no fully searched move to make a row of")
    states = States.of(positions)
    pis = np.stack([games[g].pis[i] for g, i in kept]).astype(np.float32)  # (R, A)
    z = rows.value_targets(np.array([games[g].winner for g, _ in kept]), states.to_play)  # (R,)
    ids = rows.id_columns(game_ids, np.bincount([g for g, _ in kept], minlength=len(games)), generation,
                          model_version)
    same = {"placed": states.placed, "captured": np.array([p.captured for p in positions], np.int8),
            "to_play": states.to_play, "ply": np.array([p.ply for p in positions], np.int16), "z": z, **ids}
    parts = []
    for k in symmetry.SYMMETRIES:
        moved = symmetric_states(states, k)
        parts.append({"goats": moved.goats, "tigers": moved.tigers, "pi": rows.symmetric_policies(BAGHCHAL, pis, k),
                      "symmetry": np.full(len(kept), k, np.int8), **same})
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def record_text(game: PlayedGame, rules: BaghchalRules = DEFAULT_RULES) -> str:
    """The game in the library's notation, with its result."""
    return write_record(game.actions, rules)


def summarize(games: Sequence[PlayedGame]) -> dict[str, Any]:
    """Counts of a batch: games, plies, wins by side and draws, how games ended, full searches."""
    winners = Counter(game.winner for game in games)
    reasons = Counter(game.reason for game in games)
    return {"games": len(games), "positions": int(sum(len(game.actions) for game in games)),
            "full_searches": int(sum(sum(game.full) for game in games)),
            "goat_wins": winners[1], "tiger_wins": winners[-1], "draws": winners[0],
            **{f"ended_{reason.replace('-', '_')}": count for reason, count in sorted(reasons.items())}}
