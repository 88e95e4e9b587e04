"""The strength recipe measured: its champion against GNU Go levels, and Elo against CPU hours.

    python -m benchmarks.strong --data-dir D [--name strong-9x9] [--levels 1 5 10] [--games 200 40 20]
                                [--sims 64] [--calibration-games 40] [--plain-data-dir P --plain-loop L]
                                [--plain-every 0.5] [--plain-games 40] [--curve-only]
                                [--label recipe] [--also LABEL=DIR ...] [--png strong_curve.png] [--workers 2]

Reads a recipe run (`gozero strong`, flows/strong.py) in the data dir D and plays:

1. its champion (the loop's newest promoted net; the supervised net if none was promoted) against
   GNU Go at each of `--levels`, `--games` games each (pairs of random openings with both colours,
   GNU Go seeded per game), `--sims` simulations per move: win rate with its 95 % interval clustered
   by opening, distinct games, and the CPU hours the recipe spent learning (expert games, training,
   self-play, gates) to make that champion;
2. GNU Go at each level against GNU Go level 1 (`--calibration-games`), so every level is a line on
   the same ladder (GNU Go level 1 = 0);
3. with ``--plain-data-dir``, the plain zero loop's champions there against GNU Go level 1 and 0
   (`--plain-games` each, default `--calibration-games`), rated on that data dir's ladder (GNU Go
   level 1 = 0): every promoted one, or with ``--plain-every H`` the first champion at or past each
   H CPU hours of the loop's learning and its last one (a loop without a gate promotes every
   generation: 200 champions in 4 CPU hours).

With ``--also LABEL=DIR`` (repeatable) another recipe run's data dir (a second seed, an A/B arm's
copy) is calibrated the same way and drawn as its own series beside D's (`--label`): each run is
rated on its own data dir's ladder, every one anchored at GNU Go level 1 = 0 by the same kind of
calibration games, so their points share a scale.

``--curve-only`` skips step 1 (the champion's matches, e.g. when they were played under other match
names) and draws the curve from what the data dirs hold and steps 2 and 3 add.

Then prints the curve (each rated champion: CPU hours, Elo ± 95 %) of the recipe and of the plain loop
and draws both with the GNU Go levels as horizontal lines into `--png`. Every match is resumable (a
rerun plays only missing games); results land in the data dirs' ratings tables.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ANCHOR = "gnugo-1"
"""The ladder's 0 in every table and the plot: GNU Go level 1, which calibration plays each level against
(a recipe's own anchors may start elsewhere, e.g. at level 10)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the data dir of a recipe run")
    parser.add_argument("--name", default="strong-9x9", help="the recipe run's name")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 5, 10], help="GNU Go levels to play")
    parser.add_argument("--games", type=int, nargs="+", default=[200, 40, 20], help="games against each level")
    parser.add_argument("--sims", type=int, default=64, help="simulations per move of the champion")
    parser.add_argument("--calibration-games", type=int, default=40,
                        help="games of each GNU Go level against level 1, and of each plain champion")
    parser.add_argument("--plain-data-dir", type=Path, default=None, help="a data dir with a plain zero loop")
    parser.add_argument("--plain-loop", default="run-9x9", help="the plain loop's name there")
    parser.add_argument("--plain-every", type=float, default=None,
                        help="rate the plain loop's first champion past every this many CPU hours (and its last)")
    parser.add_argument("--plain-games", type=int, default=None,
                        help="games of each plain champion against each of GNU Go levels 1 and 0")
    parser.add_argument("--curve-only", action="store_true", help="play no champion matches, only calibration")
    parser.add_argument("--label", default="recipe", help="the name of D's series on the curve")
    parser.add_argument("--also", action="append", default=[], metavar="LABEL=DIR", type=labelled_dir,
                        help="another recipe run's data dir, drawn as the series LABEL (repeatable)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    parser.add_argument("--png", type=Path, default=Path("strong_curve.png"), help="where to save the plot")
    args = parser.parse_args(argv)
    labels = [args.label, *(label for label, _ in args.also), *(["plain zero loop"] if args.plain_data_dir else [])]
    if len(set(labels)) != len(labels):
        parser.error(f"every series needs its own label: {', '.join(labels)}")
    if len(args.games) != len(args.levels):
        parser.error("give one --games count per --level")
    if args.plain_every is not None and args.plain_every <= 0:
        parser.error("--plain-every must be positive")
    return args


def labelled_dir(text: str) -> tuple[str, Path]:
    """``LABEL=DIR`` -> (LABEL, DIR), DIR a directory."""
    label, equals, directory = text.partition("=")
    if not equals or not label.strip() or not directory:
        raise argparse.ArgumentTypeError(f"{text!r}: give LABEL=DIR, e.g. 'run B=../runs/s36b'")
    if not Path(directory).is_dir():
        raise argparse.ArgumentTypeError(f"{directory}: no such data dir")
    return label.strip(), Path(directory)


def play(data: Path, black: str, white: str, games: int, sims: int, match_id: str, workers: int | None) -> dict:
    """A resumable match (the evaluate flow) of `games` games; its summary."""
    from flows.evaluate import run_evaluate
    from gocore.play.match import MatchConfig
    from tasks.app.evaluate import MatchSettings

    return run_evaluate(MatchSettings(black, white, games, sims, MatchConfig(size=9)), match_id, str(data), workers=workers)


def recipe_champion(data: Path, name: str) -> tuple[str, int]:
    """(the recipe's newest champion's URI, its generation): the loop's, else the supervised net."""
    from storage import loops

    promoted = [int(r["generation"]) for r in loops.read_steps(data, name) if r["step"] == "promote" and r["promoted"]]
    if promoted:
        from tasks.app.strong import StrongSettings
        from tasks.zero import champion

        settings = StrongSettings(**{k: tuple(v) if isinstance(v, list) else v
                                     for k, v in loops.read_settings(data, f"{name}-recipe").items()})
        return champion(settings.loop_settings("unused"), data).uri, max(promoted)
    return loops.read_step(data, f"{name}-recipe", 0, "supervised")["model"], 0


def spent_until(data: Path, name: str, generation: int) -> float:
    """CPU hours the recipe spent learning up to `generation` (its records and its loop's)."""
    from storage import loops
    from tasks.app.strong import recipe_spend

    records = [*loops.read_steps(data, f"{name}-recipe"), *loops.read_steps(data, name)]
    return recipe_spend([r for r in records if int(r["generation"]) <= generation]).learning


def champion_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The recipe's champion against each GNU Go level."""
    model, generation = recipe_champion(args.data_dir, args.name)
    hours = spent_until(args.data_dir, args.name, generation)
    rows = []
    for level, games in zip(args.levels, args.games):
        summary = play(args.data_dir, model, f"gnugo-{level}", games, args.sims,
                       f"{args.name}-bench-gen{generation}-vs-gnugo-{level}-s{args.sims}", args.workers)
        rows.append({"opponent": f"gnugo-{level}", "model": model, "generation": generation, "cpu_hours": hours,
                     **{k: summary[k] for k in ("games", "a_wins", "a_winrate", "a_winrate_low", "a_winrate_high",
                                                "clusters", "distinct_games")}})
    return rows


def calibrate(data: Path, levels: list[int], games: int, workers: int | None) -> None:
    """GNU Go at each level against level 1, so the levels share one ladder."""
    for level in sorted((set(levels) | {0}) - {1}):
        play(data, f"gnugo-{level}", ANCHOR, games, 1, f"calibrate-gnugo-{level}-vs-{ANCHOR}", workers)


def plain_champions(records: list[dict[str, Any]], every: float | None) -> list[tuple[int, int, float]]:
    """(generation, champion version, CPU hours of learning up to it) of the plain loop's promoted
    champions: all of them, or with `every` the first at or past each multiple of `every` CPU
    hours, and the last one."""
    promoted = sorted((int(r["generation"]), int(r["champion"])) for r in records
                      if r["step"] == "promote" and r["promoted"])
    chosen, mark = [], 0.0
    for index, (generation, version) in enumerate(promoted):
        spent = sum(float(r.get("cpu_seconds", 0)) for r in records
                    if int(r["generation"]) <= generation and r["step"] != "ladder") / 3600
        if every is None or spent >= mark or index == len(promoted) - 1:
            chosen.append((generation, version, spent))
            mark = spent if every is None else (spent // every + 1) * every
    return chosen


def plain_points(args: argparse.Namespace) -> list[Any]:
    """The plain loop's chosen champions against GNU Go levels 1 and 0, rated (GNU Go level 1 = 0)."""
    from storage import loops
    from storage.ratings import CurvePoint
    from tasks.ladder import fit

    data, loop = args.plain_data_dir, args.plain_loop
    chosen = plain_champions(loops.read_steps(data, loop), args.plain_every)
    games = args.plain_games or args.calibration_games
    for generation, version, _ in chosen:
        for level in (1, 0):
            play(data, f"models:/gozero-9x9/{version}", f"gnugo-{level}", games, args.sims,
                 f"plain-gen{generation}-vs-gnugo-{level}-s{args.sims}", args.workers)
    rated = {r.player: r for r in fit(data, 9, anchor=ANCHOR)}
    points = []
    for generation, version, spent in chosen:
        rating = rated.get(f"gozero-9x9/{version}")
        if rating is not None:
            points.append(CurvePoint(f"plain gen {generation}", spent, rating.elo, rating.stderr))
    return points


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")
    from storage import loops
    from tasks.app.strong import StrongSettings
    from tasks.strong_curve import curve_points

    rows = [] if args.curve_only else champion_rows(args)
    series: dict[str, list[Any]] = {}
    levels: dict[str, dict[str, float]] = {}
    for label, data in [(args.label, args.data_dir), *args.also]:
        calibrate(data, args.levels, args.calibration_games, args.workers)
        recorded = loops.read_settings(data, f"{args.name}-recipe") or {}
        settings = StrongSettings(**{k: tuple(v) if isinstance(v, list) else v for k, v in recorded.items()})
        series[label], levels[label] = curve_points(settings, data, anchor=ANCHOR)  # calibration put level 1 on it
    if args.plain_data_dir:
        series["plain zero loop"] = plain_points(args)
    report(rows, series, levels, args)


def report(rows: list[dict[str, Any]], series: dict[str, list[Any]], levels: dict[str, dict[str, float]],
           args: argparse.Namespace) -> None:
    """The champion's table, the curve table (every series' points, then the GNU Go levels of each
    recipe run's ladder), and the PNG (the levels of D's ladder as lines)."""
    from storage.ratings import plot_strength_curve

    print(f"recipe {args.name} ({args.data_dir}): champion against GNU Go, {args.sims} simulations per move")
    print(f"{'opponent':<10} {'games':>6} {'wins':>5} {'win rate':>9} {'95 % (clustered)':>18} {'distinct':>9} "
          f"{'CPU h':>6}  model")
    for r in rows:
        print(f"{r['opponent']:<10} {r['games']:>6} {r['a_wins']:>5} {r['a_winrate']:>9.1%} "
              f"{r['a_winrate_low']:>8.1%} - {r['a_winrate_high']:<7.1%} {r['distinct_games']:>9} "
              f"{r['cpu_hours']:>6.2f}  {r['model']} (gen {r['generation']})")
    print("\ncurve: Elo (GNU Go level 1 = 0) against the CPU hours spent learning")
    for label, points in series.items():
        for point in sorted(points, key=lambda p: p.cpu_hours):
            stderr = "" if point.stderr is None else f" ± {1.96 * point.stderr:.0f}"
            name = point.label if len(series) == 1 else f"{label}: {point.label}"
            print(f"  {name:<44} {point.cpu_hours:6.2f} CPU h  {point.elo:+6.0f}{stderr}")
    for label, elos in levels.items():
        for level, elo in sorted(elos.items(), key=lambda item: item[1]):
            name = level if len(levels) == 1 else f"{level} ({label}'s ladder)"
            print(f"  {name:<44} {'':>12}  {elo:+6.0f}")
    png = plot_strength_curve(series, levels[args.label], args.png, ANCHOR, f"{args.name}: Elo vs CPU hours")
    print(f"\nplot: {png}")


if __name__ == "__main__":
    sys.exit(main())
