"""Self-play games and the training data they make: rows for the self-play Parquet schema, and SGF records.

`play_games(evaluator, config, count)` plays the games by search on both sides (`mcts.BatchedSearch`,
all games in lockstep), drawing each move's search as full or fast when `config.full_search_prob`
< 1 (KataGo's playout cap randomization, `targets`). The rest converts what it returns, with no I/O:

- `training_columns(games, ...)`: one row per position before each fully searched move (every
  move without the playout cap), as numpy columns named after `storage.schemas.SELFPLAY_SCHEMA`
  (planes bit-packed by the net's encoder, pi the root visit distribution, pruned with forced
  playouts, or with Gumbel root search its improved policy; z the result from the side to move's
  view, q the root's searched value from the same view, symmetry 0);
- `game_record(game, ...)`: the game as an `sgf.GameRecord` (Chinese rules, both players named
  after the model version, each move commented with the mover's root value);
- `summarize(games)`: counts for reports (results split, resignations, false resignations, full
  searches).

`play(evaluator, config, ...)` runs all three. Seeds: a game's id names the generation, the
seed of its batch and its index in the batch (`game_id`); the same seed, model and settings
replay the same games.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gocore.nn import features, packed
from gocore.rules import sgf
from gocore.rules.board import Position, replay_moves, result_text
from gocore.search import rows as rows_core
from gocore.search.gumbel import GumbelConfig, search_factory
from gocore.search.lockstep import play_lockstep
from gocore.search.mcts import (
    RESIGN_STREAK,
    SELFPLAY,
    BatchedSearch,
    MCTSConfig,
    SearchResult,
    wants_resign,
)

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

RULES = "Chinese"  # area scoring, positional superko: what the search's Tromp-Taylor count implements


@dataclass
class SearchedGame:
    """One game played by search on both sides: the self-play record."""

    start: Position
    moves: list[int] = field(default_factory=list)
    pis: list[np.ndarray] = field(default_factory=list)  # (N*N+1,) float32 per move
    root_values: list[float] = field(default_factory=list)  # mover's view, per move
    full: list[bool] = field(default_factory=list)  # per move: a full search (a training row)
    final: Position | None = None
    winner: int = 0  # +1 black, -1 white, 0 jigo
    result: str = ""  # SGF RE text: "B+3.5", "W+R"
    reason: str = ""  # "two-passes", "move-cap" or "resign"
    can_resign: bool = True  # False in the resign_disabled_fraction of games
    would_resign: int | None = None  # no-resign games: the colour that would have resigned first

    @property
    def is_false_resignation(self) -> bool:
        """A no-resign game whose would-be resigner went on to win."""
        return self.would_resign is not None and self.would_resign == self.winner


@dataclass(frozen=True)
class SelfPlayConfig:
    """What a batch of self-play games is: board, search and the encoding of its rows."""

    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi of every game."""
    search: MCTSConfig = field(default_factory=lambda: SELFPLAY)
    """Search settings (noise, temperature, resignation); AlphaGo Zero's SELFPLAY preset."""
    encoder: str = "agz17"
    """Feature encoder of the planes column: the net's own encoder."""
    gumbel: GumbelConfig | None = None
    """Gumbel root search (sequential halving, improved-policy targets) instead of PUCT; None = PUCT."""


@dataclass
class SelfPlayBatch:
    """One batch of self-play games: its rows, its games as SGF records and its counts."""

    columns: dict[str, np.ndarray]  # SELFPLAY_SCHEMA columns, R rows
    records: list[sgf.GameRecord]  # one per game, in game order
    game_ids: list[str]
    stats: dict[str, Any]


def game_id(generation: int, seed: int, index: int) -> str:
    """The id of game `index` of the batch played with `seed` in `generation` (unique across both)."""
    return f"gen{generation}-s{seed}-{index:04d}"


def play(evaluator: Evaluator, config: SelfPlayConfig, games: int, *, generation: int, seed: int,
         model_version: str) -> SelfPlayBatch:
    """Play `games` games of self-play in lockstep and convert them to rows, records and counts."""
    played = play_games(evaluator, config.search, games, size=config.size, komi=config.komi, seed=seed,
                        new_search=search_factory(config.gumbel))
    ids = [game_id(generation, seed, index) for index in range(games)]
    columns = training_columns(played, ids, encoder=config.encoder, generation=generation,
                               model_version=model_version)
    records = [game_record(game, ids[index], model_version) for index, game in enumerate(played)]
    return SelfPlayBatch(columns, records, ids, summarize(played))


def play_games(evaluator: Evaluator, config: MCTSConfig, count: int, size: int = 9,
               komi: float = 7.5, seed: int | None = None,
               new_search: Callable[..., BatchedSearch] = BatchedSearch) -> list[SearchedGame]:
    """`count` games of search against itself, all searched in lockstep by `new_search` (PUCT, or
    `gumbel.search_factory`'s); each move's search is full with probability
    `config.full_search_prob`, else fast (`lockstep.play_lockstep`)."""
    rng = np.random.default_rng(seed)
    start = Position.initial(size, komi)
    search = new_search(evaluator, config, [start] * count, seed=int(rng.integers(1 << 62)))
    games = [SearchedGame(start, can_resign=rng.random() >= config.resign_disabled_fraction)
             for _ in range(count)]
    play_lockstep(search, count, rng, config.full_search_prob,
                  lambda g, result: _step(games[g], search, g, result, config))
    return games


def _step(game: SearchedGame, search: BatchedSearch, g: int, result: SearchResult, config: MCTSConfig) -> bool:
    """Resign, or record the search and play its move; finish the game when it ends (True then)."""
    mover = search.roots[g].position.to_play
    own_values = game.root_values[len(game.root_values) % 2::2] + [result.root_value]  # movers alternate
    if wants_resign(own_values, config.resign_threshold):
        if game.can_resign:
            game.final, game.winner, game.reason = search.roots[g].position, -mover, "resign"
            game.result = f"{'B' if mover == -1 else 'W'}+R"
            return True
        game.would_resign = mover if game.would_resign is None else game.would_resign
    game.moves.append(result.move)
    game.pis.append(result.pi)
    game.full.append(result.is_full)
    game.root_values.append(result.root_value)
    search.advance(g, result.move)
    position = search.roots[g].position
    if search.roots[g].terminal_value is not None:
        score = position.score()
        game.final, game.winner, game.result = position, int(np.sign(score)), result_text(score)
        game.reason = "two-passes" if position.is_game_over() else "move-cap"
    return bool(game.reason)


def training_columns(games: Sequence[SearchedGame], game_ids: Sequence[str], *, encoder: str,
                     generation: int, model_version: str) -> dict[str, np.ndarray]:
    """SELFPLAY_SCHEMA columns of every position before a fully searched move of every game (R rows
    in all; fast searches make no row, but their moves are replayed for the planes)."""
    if len(games) != len(game_ids):
        raise ValueError(f"{len(games)} games but {len(game_ids)} ids")
    if not games:
        raise ValueError("no games to convert")
    size = games[0].start.size
    replays = [replay_moves(game.start, game.moves) for game in games]  # [(stones (T+1, N, N), movers (T,))]
    movers = np.concatenate([m for _, m in replays]).astype(np.int8)  # (R,)
    winners = np.concatenate([np.full(len(g.moves), g.winner, np.int8) for g in games])  # (R,)
    lengths = [len(game.moves) for game in games]
    rows = int(sum(lengths))
    planes = (packed.encode_games_packed([s for s, _ in replays], [m for _, m in replays], encoder)
              if rows else np.zeros((0, features.packed_nbytes(features.get_encoder(encoder).num_planes, size)),
                                    np.uint8))  # (R, nbytes) uint8
    pis = [pi for game in games for pi in game.pis]
    ownership, score = final_targets(games, movers)
    columns = {
        "encoder": np.full(rows, features.get_encoder(encoder).name, dtype=object),
        "size": np.full(rows, size, np.int8),
        "planes": planes,
        "pi": np.stack(pis).astype(np.float32) if pis else np.zeros((0, size * size + 1), np.float32),
        "z": rows_core.value_targets(winners, movers),  # +1: the side to move at this row won
        "move_number": np.concatenate([np.arange(n, dtype=np.int16) for n in lengths]),
        **rows_core.id_columns(game_ids, lengths, generation, model_version),
        "symmetry": np.zeros(rows, np.int8),  # stored as played; the loader augments at read time
        "komi": np.concatenate([np.full(n, g.start.komi, np.float32) for g, n in zip(games, lengths)]),
        "ownership": ownership,
        "score": score,
        "q": np.concatenate([np.asarray(g.root_values, np.float32).reshape(-1) for g in games]),  # (R,) mover's view
    }
    is_recorded = np.concatenate([recorded_moves(game) for game in games])  # (T,) bool over all moves
    return columns if is_recorded.all() else {name: column[is_recorded] for name, column in columns.items()}


def recorded_moves(game: SearchedGame) -> np.ndarray:
    """(T,) bool: the moves of `game` that make training rows (`rows.recorded_moves`)."""
    return rows_core.recorded_moves(game.full, len(game.moves))


def final_targets(games: Sequence[SearchedGame], movers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ownership (R, N*N) int8, score (R,) float32) of every row, from the mover's view (`movers`
    (R,): +1 black, -1 white to move): the Tromp-Taylor owner of each point of the game's final
    position (+1 the side to move, -1 the opponent, 0 neither) and its score lead in points
    (area difference, komi counted). A resigned game was not played out, so its rows have no
    final board: ownership 0 and score NaN (stored as nulls; training masks them out)."""
    size = games[0].start.size
    own_rows, score_rows = [], []
    for game in games:
        is_scored = game.final is not None and game.reason != "resign"
        own = game.final.ownership().reshape(-1) if is_scored else np.zeros(size * size, np.int8)  # (N*N,) black
        own_rows.append(np.broadcast_to(own, (len(game.moves), size * size)))
        score_rows.append(np.full(len(game.moves), game.final.score() if is_scored else np.nan, np.float32))
    ownership = np.concatenate(own_rows) if own_rows else np.zeros((0, size * size), np.int8)  # (R, N*N)
    score = np.concatenate(score_rows) if score_rows else np.zeros(0, np.float32)  # (R,)
    return (ownership * movers[:, None]).astype(np.int8), (score * movers).astype(np.float32)


def game_record(game: SearchedGame, game_id: str, model_version: str) -> sgf.GameRecord:
    """The game as SGF: result, komi, Chinese rules, the model on both sides, root values as comments."""
    colors = [1 if index % 2 == 0 else -1 for index in range(len(game.moves))]  # no setup: black first
    comments = {index: f"root value {value:+.3f} (mover's view)" for index, value in enumerate(game.root_values)}
    return sgf.GameRecord(size=game.start.size, komi=game.start.komi, rules=RULES,
                          moves=list(zip(colors, game.moves)), winner=game.winner, result=game.result,
                          player_black=model_version, player_white=model_version, source=game_id,
                          comments=comments)


def summarize(games: Sequence[SearchedGame]) -> dict[str, Any]:
    """Counts of a batch: games, positions, wins by colour, how games ended, false resignations."""
    winners = Counter(game.winner for game in games)
    reasons = Counter(game.reason for game in games)
    no_resign = [game for game in games if not game.can_resign]
    return {
        "games": len(games),
        "positions": int(sum(len(game.moves) for game in games)),
        "full_searches": int(sum(recorded_moves(game).sum() for game in games)),
        "black_wins": winners[1], "white_wins": winners[-1], "draws": winners[0],
        "resignations": reasons["resign"], "two_passes": reasons["two-passes"], "move_cap": reasons["move-cap"],
        "no_resign_games": len(no_resign),
        "would_resign": sum(game.would_resign is not None for game in no_resign),
        "false_resignations": sum(game.is_false_resignation for game in no_resign),
        "winner_lows": [low for game in no_resign if (low := winner_low(game)) is not None],
    }


def winner_low(game: SearchedGame) -> float | None:
    """The lowest root value streak of the eventual winner: the largest resign threshold that would
    have made it resign (max of RESIGN_STREAK own values in a row, minimised over the game); None
    for a jigo or a game too short for a streak."""
    if game.winner == 0:
        return None
    own = game.root_values[0 if game.winner == 1 else 1::2]  # no setup: black moves first
    streaks = [max(own[i:i + RESIGN_STREAK]) for i in range(len(own) - RESIGN_STREAK + 1)]
    return min(streaks) if streaks else None


def calibrate_resign_threshold(winner_lows: Sequence[float], false_rate: float = 0.05,
                               bounds: tuple[float, float] = (-1.0, -0.9)) -> float | None:
    """The resign threshold at which at most `false_rate` of the no-resign games would have been
    resigned by their eventual winner (AlphaGo Zero's rule), within `bounds`; None without games.

    A player resigns when its values fall *below* the threshold, so the threshold is the largest
    value with at most `false_rate` of the lows under it. The upper bound keeps a young net, whose
    values mean little, from resigning games it could still win (with -0.5 the tuning runs' nets
    resigned most games and learned nothing)."""
    if not winner_lows:
        return None
    lows = np.sort(np.asarray(winner_lows, dtype=float))
    allowed = int(np.floor(false_rate * len(lows)))  # games that may fall below the threshold
    threshold = lows[allowed] if allowed < len(lows) else lows[-1]
    return float(np.clip(threshold, *bounds))


def merge_stats(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The sum of `summarize` counts of several batches (non-numeric fields dropped)."""
    total: Counter[str] = Counter()
    for part in parts:
        total.update({key: value for key, value in part.items()
                      if isinstance(value, int) and not isinstance(value, bool)})
    return dict(total)


def window_rows(total_rows: int, minimum: int = 20_000, exponent: float = 0.75, slope: float = 0.4) -> int:
    """How many of the most recent self-play rows to train on, KataGo's shuffler rule: all of them
    up to `minimum`, then a window that grows sub-linearly, ``minimum * (1 + slope * ((total /
    minimum) ** exponent - 1) / exponent)``: early data (from weak nets) leaves the window, and
    later generations still see many games."""
    if total_rows <= minimum:
        return total_rows
    grown = minimum * (1 + slope * ((total_rows / minimum) ** exponent - 1) / exponent)
    return int(min(total_rows, grown))


def training_steps(new_rows: int, window: int, batch_size: int, replay: float = 2.0, max_passes: float = 2.0,
                   min_steps: int = 20) -> int:
    """Optimizer steps for one generation: about `replay` samples per new row, but no row of the
    window drawn more than `max_passes` times in expectation (so small windows don't overfit)."""
    samples = min(new_rows * replay, window * max_passes)
    return max(min_steps, int(np.ceil(samples / max(batch_size, 1))))
