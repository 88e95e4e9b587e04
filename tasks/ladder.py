"""The Elo ladder's steps: fit it from the ratings table, choose whom a player meets, publish it.

    ratings   = fit_ratings(data, size)                    # Bradley–Terry over every game of the size
    entrant   = enter_ladder(player, settings, data)      # its ladder name, and a spec that plays it
    opponents = choose_opponents(entrant, ratings, ...)   # a newcomer: random; else the most informative
    ladder    = publish_ladder(data, settings, ratings)   # ladder.json, an MLflow run with the plot,
                                                          # rated versions tagged with Elo and rank

Ladder matches are named ``ladder-<N>x<N>-<player>-vs-<opponent>`` (`ladder_match`), so a rerun
finds the matches it began: they count towards the player's opponents and are resumed (nothing is
played twice), and new opponents are only chosen for the places left. The opponent pool is random,
the anchors (``uct-100``, GNU Go when installed) and every version of ``gozero-<N>x<N>`` that was
champion. Games lost to a crash or error of the harness say nothing about strength: the fit
leaves them out (the table keeps them). What the games are (`LadderSettings`) is in
`tasks.app.ladder_settings`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.play.ladder import Outcome, Rating, fit_ladder, informative_opponents
from gocore.play.match import MatchConfig
from gocore.play.ratings import Strength, strength_label
from storage import layout, matches, ratings
from tasks.app.evaluate import MatchSettings
from tasks.app.ladder_settings import LadderSettings
from tasks.app.players import (
    gnugo_level,
    has_gnugo,
    ladder_name,
    ladder_spec,
    parse_player,
)

ANCHOR = "random"
NOT_PLAY = frozenset({"crash", "error"})  # the harness failed, not the player


@dataclass(frozen=True)
class LadderPlayer:
    """A player as the ladder knows it."""

    name: str
    """Its ladder name (``gozero-9x9/3``, ``random``, ``uct-100``)."""
    spec: str
    """A player spec that plays it (an alias already resolved to its version)."""


@dataclass(frozen=True)
class Generation:
    """What the registry says of a model version on the ladder."""

    number: int | None
    """Its ``generation`` tag; None for a version no loop made (e.g. `gozero train`'s)."""
    was_champion: bool
    """It holds or held the alias ``champion``."""
    selfplay_games: int | None = None
    """Self-play games its loop had played when it was promoted (tag ``selfplay_games_total``)."""
    version: int = 0
    """Its version number."""


@dataclass(frozen=True)
class LadderRow:
    """One player's line of the ladder table."""

    player: str
    """Ladder name."""
    elo: float
    """Elo relative to random (0)."""
    stderr: float | None
    """One standard error of `elo`; None for the anchor."""
    games: int
    """Games in the fit."""
    score: float
    """Points in those games (wins + jigo / 2)."""
    generation: int | None
    """A registered model's generation (tag ``generation``, else its version); None for others."""
    selfplay_games: int | None = None
    """A loop champion's self-play games behind it (`Generation.selfplay_games`)."""


@dataclass(frozen=True)
class Ladder:
    """A fitted ladder, best first, and what the run that made it played."""

    size: int
    """Board size N."""
    rows: tuple[LadderRow, ...]
    """Every rated player, best first."""
    matches: tuple[str, ...] = ()
    """Ladder matches this run played or resumed."""
    mlflow_run: str | None = None
    """The MLflow "ladder" run with Elo per generation, if any generation is rated."""


def fit(data: Path, size: int, anchor: str = ANCHOR) -> list[Rating]:
    """The ladder of every game of board size `size` in the ratings table, best first, `anchor` at 0."""
    games = ratings.read_games(data, size).select(["player_a", "player_b", "a_score", "reason"]).to_pylist()
    return fit_ladder([Outcome(g["player_a"], g["player_b"], g["a_score"]) for g in games
                       if g["reason"] not in NOT_PLAY], anchor=anchor)


def generations(size: int, data: Path) -> dict[str, Generation]:
    """{ladder name: its generation} of every version of ``gozero-<N>x<N>``, oldest first; {} if none."""
    from storage import registry

    try:
        versions = registry.list_versions(registry.model_name(size), data)
    except registry.RegistryError:  # no such model yet
        return {}
    return {f"{v.name}/{v.version}": Generation(
        int(v.tags["generation"]) if v.tags.get("generation", "").lstrip("-").isdigit() else None,
        registry.CHAMPION in v.aliases or "promoted_at" in v.tags,
        int(v.tags["selfplay_games_total"]) if v.tags.get("selfplay_games_total", "").isdigit() else None,
        int(v.version))
        for v in versions}


def champion(size: int, data: Path) -> str | None:
    """The champion URI of ``gozero-<N>x<N>``, None if it has none."""
    from storage import registry

    try:
        info = registry.describe(registry.model_name(size), registry.CHAMPION, data)
    except registry.RegistryError:
        return None
    return info.uri


def enter_ladder(player: str, settings: LadderSettings, data: Path) -> LadderPlayer:
    """`player` under its ladder name, with a spec that stays that player (aliases resolved)."""
    name = ladder_name(player, settings.sims, data, settings.size)
    return LadderPlayer(name, ladder_spec(name) or player)


def pool(settings: LadderSettings, data: Path) -> list[LadderPlayer]:
    """Whom ladder players may meet: random, the anchors that can play here, past champions."""
    anchors = [spec for spec in settings.anchors if parse_player(spec).kind != "gnugo" or has_gnugo()]
    versions = generations(settings.size, data)
    champions = sorted((name for name, version in versions.items() if version.was_champion),
                       key=lambda name: versions[name].version)
    players = [enter_ladder(spec, settings, data) for spec in (ANCHOR, *anchors)]
    return players + [LadderPlayer(name, ladder_spec(name) or name) for name in champions]


def met_opponents(entrant: LadderPlayer, settings: LadderSettings, data: Path) -> list[LadderPlayer]:
    """The opponents of the ladder matches `entrant` began before (to resume, not to replace)."""
    found = []
    for match in matches.match_ids(data, match_prefix(entrant.name, settings.size)):
        began = matches.read_settings(layout.match_dir(data, match))
        if began.get("ladder_a") == entrant.name:
            found.append(LadderPlayer(began["ladder_b"], began["white"]))
    return found


def choose_opponents(entrant: LadderPlayer, rated: list[Rating], candidates: list[LadderPlayer],
                     met: list[LadderPlayer], count: int) -> list[LadderPlayer]:
    """Whom `entrant` plays now: the matches it began; an unrated newcomer then meets random (and
    nobody else yet: informative choices need its rating); a rated one fills its `count` places
    with the candidates whose games tell the most, unrated candidates first."""
    if entrant.name not in {r.player for r in rated}:
        return met or [next(c for c in candidates if c.name == ANCHOR)]
    others = {c.name: c for c in candidates if c.name != entrant.name and c.name not in {m.name for m in met}}
    own = next(r for r in rated if r.player == entrant.name)
    known = {r.player: r for r in rated}
    table = [own] + [known.get(name, Rating(name, own.elo, float("inf"), 0, 0.0)) for name in others]
    return met + [others[name] for name in informative_opponents(entrant.name, table, max(0, count - len(met)))]


def match_prefix(player: str, size: int) -> str:
    """``ladder-<N>x<N>-<player>-vs-``: how every ladder match of `player` (a ladder name) begins."""
    return f"ladder-{size}x{size}-{_slug(player)}-vs-"


def match_id(player: str, opponent: str, size: int) -> str:
    """``ladder-<N>x<N>-<player>-vs-<opponent>`` from ladder names, made a safe directory name."""
    return f"{match_prefix(player, size)}{_slug(opponent)}"[:128]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=]+", "-", name).strip("-.")


def ladder_match(entrant: LadderPlayer, opponent: LadderPlayer, settings: LadderSettings,
                 data: Path) -> tuple[str, MatchSettings]:
    """(match dir, settings) of the ladder match of `entrant` (A) against `opponent` (B)."""
    match = layout.match_dir(data, match_id(entrant.name, opponent.name, settings.size))
    return str(match), MatchSettings(entrant.spec, opponent.spec, settings.games_per_opponent, settings.sims,
                                     MatchConfig(settings.size, settings.komi), settings.gtp_timeout, settings.device)


def ladder_rows(data: Path, size: int, rated: list[Rating] | None = None) -> tuple[LadderRow, ...]:
    """The ladder's rows, best first, with model generations (fitted from the table unless given)."""
    rated = fit(data, size) if rated is None else rated
    versions = generations(size, data)
    return tuple(LadderRow(r.player, r.elo, r.stderr, r.games, r.score,
                           versions[r.player].number if r.player in versions else None,
                           versions[r.player].selfplay_games if r.player in versions else None) for r in rated)


def strength(player: str, rows: Sequence[Rating | LadderRow], size: int) -> Strength | None:
    """The rough rank of `player` from its place among the GNU Go levels on the same fitted ladder
    (`gocore.play.ratings.strength_label`); None if `player` is not on it."""
    mine = next((row for row in rows if row.player == player), None)
    if mine is None:
        return None
    gnugo = {}
    for row in rows:
        if row.player.startswith("gnugo") and (spec := parse_player(row.player)).kind == "gnugo":
            gnugo[gnugo_level(spec)] = (row.elo, row.stderr)
    return strength_label(mine.elo, mine.stderr, mine.games, gnugo, size)


def rating_tags(row: LadderRow, rows: Sequence[LadderRow], size: int) -> dict[str, str]:
    """The version tags of a rated model: Elo (random = 0), its standard error, its games, and
    the rough rank (`strength`: rank and evidence, `rank`: the rank alone)."""
    label = strength(row.player, rows, size)
    if label is None:
        raise ValueError(f"{row.player} is not on the ladder it is tagged from")
    return {"elo": f"{row.elo:.1f}", "elo_stderr": "" if row.stderr is None else f"{row.stderr:.1f}",
            "elo_games": str(row.games), "strength": label.text, "rank": label.rank}


def tag_rated_versions(data: Path, size: int, rows: Sequence[LadderRow]) -> int:
    """Put `rating_tags` on every registered version of ``gozero-<N>x<N>`` on the ladder; how many."""
    from storage import registry

    registered = generations(size, data)
    rated = [row for row in rows if row.player in registered]
    for row in rated:
        name, _, version = row.player.rpartition("/")
        registry.tag_version(name, int(version), rating_tags(row, rows, size), data)
    return len(rated)


def tag_registered_players(settings: MatchSettings, data: Path) -> int:
    """After a match with a registered model in it: the registry's rating tags (Elo, strength) of
    every rated version from the refitted ladder, so `gozero models list` and GTP `version` show what
    `gozero ladder` shows whichever command played (evaluate, a gate, the recipe's anchors)."""
    if not any(spec.startswith("models:/") for spec in (settings.black, settings.white)):
        return 0
    size = settings.config.size
    return tag_rated_versions(data, size, ladder_rows(data, size))


def publish(data: Path, settings: LadderSettings, rated: list[Rating], played: tuple[str, ...] = ()) -> Ladder:
    """The ladder, written to ladder.json, its rated versions tagged (`tag_rated_versions`) and, if
    any generation is rated, logged as an MLflow "ladder" run with Elo per generation and its plot."""
    rows = ladder_rows(data, settings.size, rated)
    tag_rated_versions(data, settings.size, rows)
    ratings.write_ladder(data, settings.size, [asdict(row) for row in rows])
    points = [ratings.GenerationElo(row.generation, row.elo, row.stderr, row.selfplay_games)
              for row in rows if row.generation is not None]
    run = None
    if points:
        params = {"players": len(rows), "games": sum(r.games for r in rows) // 2, **asdict(settings)}
        run = ratings.log_ladder(settings.size, points, params, data)
    return Ladder(settings.size, rows, played, run)


@task(cache_policy=NO_CACHE)
def fit_ratings(data: str, size: int) -> list[Rating]:
    """Fit the ladder of board size `size` from the ratings table."""
    return fit(Path(data), size)


@task(cache_policy=NO_CACHE)
def plan_opponents(player: str, rated: list[Rating], settings: LadderSettings,
                   data: str) -> tuple[LadderPlayer, list[LadderPlayer]]:
    """(the player as the ladder knows it, whom it plays now): see `choose_opponents`."""
    entrant = enter_ladder(player, settings, Path(data))
    met = met_opponents(entrant, settings, Path(data))
    return entrant, choose_opponents(entrant, rated, pool(settings, Path(data)), met, settings.opponents)


@task(cache_policy=NO_CACHE)
def publish_ladder(data: str, settings: LadderSettings, rated: list[Rating], played: tuple[str, ...] = ()) -> Ladder:
    """Write ladder.json and log the MLflow ladder run; the ladder table."""
    return publish(Path(data), settings, rated, played)
