"""Baghchal strength of one net: wins, draws and losses with each side against random and the
`baghchal` library's engine, and its self-play draw rate at several simulation counts.

    python -m benchmarks.baghchal_strength --model models:/baghchal@champion --data-dir DATA \\
        [--games 200] [--opponents random,library:4] [--sims 64] [--opening 4] [--workers 2] \\
        [--draw-sims 64,256,800] [--draw-games 50]

Against each opponent the net plays `games` games as Goat and `games` as Tiger (a match of
2 x games, sides alternating, games 2i and 2i + 1 opening with the same `opening` random plies so
each opening is played from both sides). Each side's score has two 95 % intervals: Wilson's, and
one clustered by opening (`ratings.clustered_interval`: deterministic players repeat a game when
an opening repeats). Matches are kept under DATA/baghchal/matches/ (a rerun reads finished chunks
back) and chunks run on `workers` processes.

Issue #37's targets: as Goat no loss in 200 games against the engine at depth 4, as Tiger at least
75 % of the points, 100 % against random with both sides. The draw rate: the net against itself
with no noise and no temperature, from `draw-games` openings of `opening` random plies, searched
with each simulation count (every game a draw under perfect play). Last line:
``baghchal_strength: goat_losses_<opp>=<n> tiger_score_<opp>=<x> ... draw_rate_<sims>=<x>``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a Baghchal model URI or directory")
    parser.add_argument("--data-dir", required=True, help="the data dir of the model and the matches")
    parser.add_argument("--games", type=int, default=200, help="games with each side against each opponent")
    parser.add_argument("--opponents", default="random,library:4", help="comma-separated player specs")
    parser.add_argument("--sims", type=int, default=64, help="our search's simulations a move in the matches")
    parser.add_argument("--opening", type=int, default=4, help="random plies opening each pair of games")
    parser.add_argument("--seed", type=int, default=0, help="seeds the openings")
    parser.add_argument("--workers", type=int, default=2, help="processes playing match chunks")
    parser.add_argument("--draw-sims", default="64,256,800", help="simulation counts of the draw rate ('' = none)")
    parser.add_argument("--draw-games", type=int, default=50, help="self-play games per simulation count")
    return parser.parse_args(argv)


if __name__ == "__main__":
    ARGS = parse_args()

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from pathlib import Path  # noqa: E402

from gocore.play.baghchal_match import BaghchalMatchConfig, pair_opening  # noqa: E402
from gocore.play.ratings import clustered_interval, wilson_interval  # noqa: E402
from gocore.rules.baghchal.position import GOAT, Position  # noqa: E402
from tasks.app.baghchal_players import player_label  # noqa: E402
from tasks.app.baghchal_settings import BaghchalMatchSettings  # noqa: E402
from tasks.baghchal_match import match_chunks, play_chunk, run_match_here, start_match  # noqa: E402

PER_CHUNK = 4


@dataclass(frozen=True)
class SideReport:
    """Our games with one side: wins, draws, losses, the score and its two 95 % intervals."""

    games: int
    wins: int
    draws: int
    losses: int
    score: float
    low: float
    high: float
    clustered_low: float
    clustered_high: float
    openings: int


@dataclass(frozen=True)
class DrawRate:
    """Self-play from random openings at one simulation count: how the games ended."""

    sims: int
    games: int
    draws: int
    goat_wins: int
    tiger_wins: int
    low: float
    high: float
    cpu_seconds: float


def pinned(spec: str, data: Path) -> str:
    """A model URI with its alias resolved to the version it names now (``models:/baghchal/12``), so
    a match and its id stay that version's after a promotion; other specs as they are."""
    return f"models:/{player_label(spec, data)}" if spec.startswith("models:/") else spec


def match_of(model: str, opponent: str, args: argparse.Namespace, data: Path) -> tuple[BaghchalMatchSettings, str]:
    """The match settings and id of `model` against `opponent`, both pinned: an id names one pair of
    versions and one set of settings, so a rerun resumes it and nothing else reuses it."""
    a, b = pinned(model, data), pinned(opponent, data)
    slug = "".join(c if c.isalnum() else "-" for c in f"{player_label(a, data)}-vs-{player_label(b, data)}")
    settings = BaghchalMatchSettings(a, b, 2 * args.games, args.sims, args.opening, args.seed)
    return settings, f"strength-{slug}-s{args.sims}-o{args.opening}-g{2 * args.games}-seed{args.seed}"


def _chunk(job: tuple[BaghchalMatchSettings, str, int, int, str]) -> list[dict[str, Any]]:
    from gocore.nn.device import set_threads

    set_threads(1)
    settings, match_id, first, count, data = job
    return play_chunk(settings, match_id, first, count, Path(data))


def match_rows(settings: BaghchalMatchSettings, match_id: str, data: Path, workers: int) -> list[dict[str, Any]]:
    """Every game of the match, its chunks on `workers` fresh processes (the project's forkserver
    start, not a fork of this one); finished chunks are read back."""
    start_match(settings, match_id, data)
    jobs = [(settings, match_id, first, count, str(data)) for first, count in match_chunks(settings.games, PER_CHUNK)]
    if workers <= 1:
        return run_match_here(settings, match_id, data, PER_CHUNK)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        chunks = list(pool.map(_chunk, jobs))
    return sorted((row for rows in chunks for row in rows), key=lambda row: row["game"])


def opening_of(row: dict[str, Any]) -> str:
    """The cluster of a game: its first `opening` plies as the record writes them."""
    moves = [token for token in row["record"].split() if not token[0].isdigit()]
    return " ".join(moves[:int(row["opening"])])


def side_report(rows: Sequence[dict[str, Any]], side: int) -> SideReport:
    """Our wins, draws, losses and score with one side, with Wilson's and the clustered interval."""
    mine = [row for row in rows if int(row["a_side"]) == side]
    scores = [float(row["a_score"]) for row in mine]
    wins, draws = scores.count(1.0), scores.count(0.5)
    low, high = wilson_interval(sum(scores), len(scores))
    clustered = clustered_interval(scores, [opening_of(row) for row in mine])
    return SideReport(len(mine), wins, draws, len(mine) - wins - draws, sum(scores) / max(len(mine), 1), low, high,
                      clustered.low, clustered.high, clustered.clusters)


def draw_rate(model: str, data: Path, sims: int, games: int, opening: int, seed: int) -> DrawRate:
    """The net against itself from `games` random openings (no noise, the most visited move): how
    many games end drawn."""
    from gocore.search.baghchal_selfplay import MATCH, BaghchalSelfPlayConfig, play_games
    from tasks.app.baghchal_players import load_evaluator

    evaluator, _ = load_evaluator(model, data)
    config = BaghchalMatchConfig(seed=seed + 1, opening=opening)
    starts = []
    for index in range(games):
        position = Position.initial()
        for action in pair_opening(config, 2 * index):
            position = position.play(action)
        starts.append(position)
    search = BaghchalSelfPlayConfig(search=MATCH.replace(sims=sims, leaves_per_game=8))
    started = time.process_time()
    played = play_games(evaluator, search, games, seed=seed, starts=starts)
    draws = sum(game.winner == 0 for game in played)
    low, high = wilson_interval(draws, games)
    return DrawRate(sims, games, draws, sum(game.winner == 1 for game in played),
                    sum(game.winner == -1 for game in played), low, high, time.process_time() - started)


def main(args: argparse.Namespace) -> None:
    """Each opponent's match, then each draw rate, then the summary line."""
    data = Path(args.data_dir)
    model = pinned(args.model, data)
    figures = []
    for opponent in [spec for spec in args.opponents.split(",") if spec]:
        settings, match_id = match_of(model, opponent, args, data)
        started = time.perf_counter()
        rows = match_rows(settings, match_id, data, args.workers)
        print(f"{model} vs {opponent}: {len(rows)} games, {args.sims} simulations, {args.opening} random "
              f"opening plies, match {match_id} ({time.perf_counter() - started:.0f} s)", flush=True)
        for side, name in ((GOAT, "Goat"), (-GOAT, "Tiger")):
            r = side_report(rows, side)
            print(f"  as {name}: {r.wins} won, {r.draws} drawn, {r.losses} lost of {r.games}: score "
                  f"{r.score:.1%} (95 % {r.low:.1%}-{r.high:.1%}; clustered by {r.openings} openings "
                  f"{r.clustered_low:.1%}-{r.clustered_high:.1%})", flush=True)
            key = opponent.replace(":", "")
            figures.append(f"goat_losses_{key}={r.losses}" if side == GOAT else f"tiger_score_{key}={r.score:.3f}")
    for sims in [int(s) for s in args.draw_sims.split(",") if s]:
        r = draw_rate(model, data, sims, args.draw_games, args.opening, args.seed)
        print(f"self-play at {sims} simulations: {r.draws} of {r.games} drawn ({r.draws / r.games:.0%}, "
              f"95 % {r.low:.0%}-{r.high:.0%}); Goat won {r.goat_wins}, Tiger {r.tiger_wins} "
              f"({r.cpu_seconds:.0f} CPU s)", flush=True)
        figures.append(f"draw_rate_{sims}={r.draws / r.games:.3f}")
    print("baghchal_strength: " + " ".join(figures))


if __name__ == "__main__":
    main(ARGS)
