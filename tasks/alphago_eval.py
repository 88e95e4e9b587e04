"""Prefect tasks of the AlphaGo pipeline's evaluation: a round robin on the shared results table.

    players = eval_players(settings, nets)        # AlphaGo at each sims count, SL, RL, value greedy, UCT,
                                                  # random, GNU Go
    pairs   = round_robin(settings, players)      # one match per pair, colours alternating
    play_pair.map(pairs)                          # each a match of tasks.app.evaluate (resumable, rated)
    table   = evaluation_table(...)               # win rates with 95 % intervals, Elo from the ladder fit

Every game goes into the ratings table like any other match's, so the Elo column is the shared
ladder's (`tasks.ladder.fit`: every game of the board size, random = 0), not a fit of this
round robin alone.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.play.match import MatchConfig
from storage import layout, matches, ratings
from tasks.app.alphago_settings import AlphaGoSettings
from tasks.app.evaluate import MatchSettings, play_match_here
from tasks.app.models import ModelRef
from tasks.app.players import parse_player
from tasks.ladder import fit

KEY_PAIRS = (("alphago", "sl"), ("alphago", "uct"))  # the pairs docs/alphago.md compares with the replication


@dataclass(frozen=True)
class EvalPlayer:
    """One player of the round robin: a short label and the spec that plays it."""

    label: str
    spec: str


@dataclass(frozen=True)
class PairRow:
    """One match of the round robin: A's score against B with its 95 % (Wilson) interval."""

    a: str
    b: str
    games: int
    a_wins: int
    a_score: float
    low: float
    high: float
    match: str


@dataclass(frozen=True)
class PlayerRow:
    """One player's line: its ladder name and Elo (random = 0) ± its 95 % interval's half-width."""

    label: str
    ladder_name: str
    elo: float | None
    stderr: float | None
    games: int


@dataclass(frozen=True)
class EvalTable:
    """The round robin's result."""

    pairs: tuple[PairRow, ...]
    players: tuple[PlayerRow, ...]


def eval_players(settings: AlphaGoSettings, nets: dict[str, ModelRef], has_gnugo: bool) -> list[EvalPlayer]:
    """AlphaGo at each of `eval_sims` (rolling out with `nets["rollout"]` if given), the SL, RL and
    value nets alone, UCT, random (the ladder's anchor, Elo 0), GNU Go (if installed)."""
    policy, value = nets["policy"].uri, nets["value"].uri
    # with a rollout policy the player (and so its matches) is another one: -r<version> in its label
    rollout, tag = (f",{nets['rollout'].uri}", f"-r{nets['rollout'].version}") if "rollout" in nets else ("", "")
    players = [EvalPlayer(f"alphago-{sims}{tag}", f"alphago-{sims}:{policy},{value}{rollout}")
               for sims in settings.eval_sims]
    players += [EvalPlayer("sl", policy), EvalPlayer("rl", nets["rl"].uri), EvalPlayer("value", value),
                EvalPlayer(f"uct-{settings.uct_sims}", f"uct-{settings.uct_sims}"), EvalPlayer("random", "random")]
    if has_gnugo:
        players += [EvalPlayer(f"gnugo-{level}", f"gnugo-{level}") for level in settings.gnugo_levels]
    return players


def round_robin(settings: AlphaGoSettings, players: list[EvalPlayer], data: Path,
                device: str = "cpu") -> list[tuple[str, MatchSettings]]:
    """(match dir, settings) of every pair, each pair once (colours alternate inside a match); nets
    run on `device`."""
    pairs = []
    for a, b in itertools.combinations(players, 2):
        match_id = f"{settings.name}-eval-{a.label}-vs-{b.label}"
        # seeded by the pair, not its place in the list: a rerun with another roster resumes each match
        config = MatchConfig(settings.size, settings.komi, None, settings.seed * 1000 + zlib.crc32(match_id.encode()) % 1000)
        match = layout.match_dir(data, match_id)
        games = max(settings.eval_games, settings.key_games or 0) if is_key_pair(a, b) else settings.eval_games
        pairs.append((str(match), MatchSettings(a.spec, b.spec, games, _pair_sims(settings, a, b), config,
                                                     device=device)))
    return pairs


def is_key_pair(a: EvalPlayer, b: EvalPlayer) -> bool:
    """An AlphaGo player against the SL policy or UCT: the comparison the replication reports."""
    searcher, other = (a, b) if a.label.startswith("alphago-") else (b, a)
    return searcher.label.startswith("alphago-") and (other.label == "sl" or other.label.startswith("uct-"))


def _pair_sims(settings: AlphaGoSettings, a: EvalPlayer, b: EvalPlayer) -> int:
    """The simulations a pair's match records: its own players' (alphago-N, uct-N), so that a rerun
    with other `eval_sims` finds every other pair's match as it began it."""
    parsed = [parse_player(player.spec) for player in (a, b)]
    return max((p.number for p in parsed if p.kind in ("alphago", "uct") and p.number), default=settings.uct_sims)


@task(cache_policy=NO_CACHE)
def play_pair(match_dir: str, settings: MatchSettings) -> dict[str, Any]:
    """One match of the round robin, played to the end (games on disk are skipped); its summary."""
    from tasks.app.players import has_net

    if has_net((settings.black, settings.white)):
        from gocore.nn.device import set_threads

        set_threads(1)
    return play_match_here(match_dir, settings)


def evaluation_table(settings: AlphaGoSettings, players: list[EvalPlayer],
                     pairs: list[tuple[str, MatchSettings]], summaries: list[dict[str, Any]], data: Path) -> EvalTable:
    """Pair rows from the match summaries (in any order); player rows with Elo from the shared ladder's fit."""
    label_of = {p.spec: p.label for p in players}
    by_match = {summary["match_id"]: summary for summary in summaries}
    rows = tuple(_pair_row(label_of[s.black], label_of[s.white], by_match[Path(match).name]) for match, s in pairs)
    names: dict[str, str] = {}
    for match, s in pairs:
        began = matches.read_settings(Path(match))
        names[label_of[s.black]], names[label_of[s.white]] = began["ladder_a"], began["ladder_b"]
    rated = {r.player: r for r in fit(data, settings.size)}
    table = [_player_row(p.label, names[p.label], rated.get(names[p.label])) for p in players]
    return EvalTable(rows, tuple(sorted(table, key=lambda r: 1e9 if r.elo is None else -r.elo)))


def _pair_row(a: str, b: str, summary: dict[str, Any]) -> PairRow:
    return PairRow(a, b, int(summary["games"]), int(summary["a_wins"]), round(float(summary["a_winrate"]), 4),
                   round(float(summary["a_winrate_low"]), 4), round(float(summary["a_winrate_high"]), 4),
                   summary["match_id"])


def _player_row(label: str, name: str, rating: Any) -> PlayerRow:
    if rating is None:
        return PlayerRow(label, name, None, None, 0)
    stderr = None if rating.stderr is None else round(rating.stderr, 1)
    return PlayerRow(label, name, round(rating.elo, 1), stderr, int(rating.games))


@task(cache_policy=NO_CACHE)
def publish_evaluation(settings: AlphaGoSettings, table: EvalTable, data_dir: str) -> str:
    """Log the table (JSON, Markdown) and the Elo plot as an MLflow run; its id."""
    params = {"alphago": settings.name, "eval_games": settings.eval_games, "eval_sims": list(settings.eval_sims),
              "uct_sims": settings.uct_sims, "gnugo_levels": list(settings.gnugo_levels)}
    return ratings.log_evaluation(settings.size, f"{settings.name}-eval", [asdict(r) for r in table.pairs],
                                  [asdict(r) for r in table.players], table_markdown(table), params,
                                  Path(data_dir))


def table_markdown(table: EvalTable) -> str:
    """The round robin as Markdown: Elo per player, then every pair's score with its interval."""
    lines = ["| player | Elo (random = 0) | games |", "|---|---|---|"]
    lines += [f"| {r.label} | {_elo(r)} | {r.games} |" for r in table.players]
    lines += ["", "| A | B | games | A's score | 95 % interval |", "|---|---|---|---|---|"]
    lines += [f"| {r.a} | {r.b} | {r.games} | {r.a_score:.0%} | {r.low:.0%} – {r.high:.0%} |" for r in table.pairs]
    return "\n".join(lines) + "\n"


def _elo(row: PlayerRow) -> str:
    if row.elo is None:
        return "unrated"
    return f"{row.elo:+.0f}" + ("" if row.stderr is None else f" ± {1.96 * row.stderr:.0f} (95 %)")
