"""Strength at equal budget: two zero loops from scratch, A and B, then their champions head to head and on the ladder.

    python -m benchmarks.strength --minutes 30 --a "" --b "aux_heads=true,warm_start=models:/gozero-9x9/1"
                                  [--games 200] [--size 9] [--data-dir D] [--quick]

1. Loop A (``strength-a``) and loop B (``strength-b``) run one after the other in one data dir, each
   with the same budget: it starts no new generation once it has spent ``--minutes`` wall minutes
   learning (flows/zero_loop.py ``minutes=``; the generation under way is finished). Both begin
   from `tasks.app.loop_presets.main_job_settings` (``gozero run``'s loop: gate off, no ladder games inside)
   with board size ``--size`` and every technique off (`tasks.app.loop_settings.TECHNIQUES_OFF`, whatever the
   defaults are); ``--a`` and ``--b`` change any `LoopSettings` field as
   ``name=value,...`` (booleans true/false, ``none`` for None), so options added to the loop later
   work here as they are.
2. Every champion of both loops plays ``--rating-games`` games against each fixed anchor (random,
   UCT-400, GNU Go levels 0 and 1), the two final champions ``--anchor-games``, and B's final
   champion plays A's ``--games`` games (colours alternate, ``--sims`` each): all ladder matches,
   in the ratings table every ladder shares.
3. Prints B's win rate against A with its 95 % interval, the Bradley-Terry Elo of each final champion
   (random = 0) with its interval, each loop's budget (wall and CPU minutes) and the curve: the Elo
   of every champion against the CPU minutes its loop had spent (benchmarks/learning_curve.py), as a
   table and a PNG, both logged to an MLflow run ``strength-a-vs-b``.

A warm start's own training (``gozero train``) is not in B's budget: the output says so.
Rerun with the same ``--data-dir`` to resume: finished loops, matches and games are not redone.
``--quick``: 5x5, 1.5 minutes per loop, a few games per generation, 10 head-to-head games.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ANCHORS = ("random", "uct-400", "gnugo-0", "gnugo-1")
LOOPS = ("strength-a", "strength-b")
DEFAULTS = {"minutes": 30.0, "games": 200, "size": 9, "sims": 64, "rating_games": 4, "anchor_games": 20}
QUICK = {**DEFAULTS, "size": 5, "minutes": 1.5, "games": 10, "sims": 16, "rating_games": 2, "anchor_games": 4}
QUICK_LOOP = "games=8,sims=8,min_window=200,batch_size=32"
"""What --quick changes in both loops (before --a and --b)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=None, help="wall minutes of learning per loop (30)")
    parser.add_argument("--a", default="", help="loop A's LoopSettings changes: name=value,... ('' = plain)")
    parser.add_argument("--b", default="", help="loop B's LoopSettings changes: name=value,...")
    parser.add_argument("--games", type=int, default=None, help="games of B's champion against A's (200)")
    parser.add_argument("--size", type=int, default=None, help="board size (9)")
    parser.add_argument("--sims", type=int, default=None, help="simulations per move in every match (64)")
    parser.add_argument("--rating-games", type=int, default=None, help="games of each champion per anchor (4)")
    parser.add_argument("--anchor-games", type=int, default=None, help="games of each final champion per anchor (20)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    parser.add_argument("--data-dir", type=Path, default=None, help="data dir (default: a temporary one); "
                        "rerun with it to resume")
    parser.add_argument("--png", type=Path, default=Path("strength.png"), help="where to save the curve")
    parser.add_argument("--quick", action="store_true", help="5x5, 1.5 minutes per loop, 10 games")
    parser.add_argument("--anchors", default=",".join(ANCHORS), help="the fixed ladder anchors every champion "
                        "plays (comma-separated player specs)")
    parser.add_argument("--parallel", action="store_true", help="run loops A and B at the same time, each "
                        "with half the workers (both then learn under the same machine load)")
    parser.add_argument("--only", choices=LOOPS, default=None, help=argparse.SUPPRESS)  # one loop (--parallel)
    args = parser.parse_args(argv)
    args.anchors = tuple(filter(None, (a.strip() for a in args.anchors.split(","))))
    for name, value in (QUICK if args.quick else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def loop_changes(text: str) -> dict[str, Any]:
    """``"aux_heads=true,sims=32,warm_start=none"`` as typed `LoopSettings` changes; ValueError for an
    unknown field or a value of the wrong type."""
    from tasks.app.loop_settings import LoopSettings
    from tasks.app.overrides import dataclass_changes

    return dataclass_changes(LoopSettings, [text], split_commas=True)


def loop_settings(args: argparse.Namespace) -> dict[str, Any]:
    """{loop name: LoopSettings} of loops A and B."""
    from tasks.app.loop_presets import main_job_settings
    from tasks.app.loop_settings import TECHNIQUES_OFF

    quick = loop_changes(QUICK_LOOP) if args.quick else {}
    # every technique off unless --a / --b turn it on: an A/B means the same whatever the defaults are
    return {name: main_job_settings(**{"generations": 10_000, "ladder_opponents": 0, "size": args.size, "loop": name,
                                       **TECHNIQUES_OFF, **quick, **loop_changes(text)})
            for name, text in zip(LOOPS, (args.a, args.b), strict=True)}


@dataclass(frozen=True)
class Planned:
    """The ladder matches of one player: against whom, and how many games each."""

    player: str
    """Its ladder name."""
    opponents: tuple[str, ...]
    """Their ladder names."""
    games: int
    """Games of each match."""


def rate(planned: list[Planned], size: int, komi: float, sims: int, data: str, anchors: tuple[str, ...]) -> None:
    """Play (or resume) every planned ladder match, all in one flow run (one process pool)."""
    from prefect import flow

    from flows.ladder import play_matches
    from flows.runtime import StoppingProcessPool
    from tasks.app.ladder_settings import LadderSettings
    from tasks.app.players import ladder_spec
    from tasks.ladder import enter_ladder

    @flow(name="strength-matches", log_prints=True, task_runner=StoppingProcessPool())
    def strength_matches() -> None:
        for plan in planned:
            settings = LadderSettings(size, plan.games, len(plan.opponents), sims, komi, anchors)
            entrant = enter_ladder(ladder_spec(plan.player) or plan.player, settings, Path(data))
            opponents = [enter_ladder(ladder_spec(o) or o, settings, Path(data)) for o in plan.opponents]
            play_matches(entrant, opponents, settings, data)

    strength_matches()


def plans(champions: dict[str, list[str]], finals: dict[str, str], args: argparse.Namespace) -> list[Planned]:
    """Every champion against the anchors, the finals with more games, then B's final against A's."""
    planned = [Planned(player, args.anchors, args.anchor_games if player in finals.values() else args.rating_games)
               for versions in champions.values() for player in versions]
    return planned + [Planned(finals[LOOPS[1]], (finals[LOOPS[0]],), args.games)]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not __package__:  # run as a script: make the sibling benchmarks importable as benchmarks.*
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    try:
        settings = loop_settings(args)
    except ValueError as error:
        sys.exit(f"strength: {error}")
    from flows.runtime import prefect_api
    from flows.zero_loop import zero_loop

    cores = args.workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="gozero-bench-strength-") as temp, prefect_api():
        data = (args.data_dir or Path(temp)).resolve()
        if args.parallel:
            run_in_parallel(argv if argv is not None else sys.argv[1:], data, cores)
        for loop in settings.values():
            if args.only not in (None, loop.loop):
                continue
            summary = zero_loop(loop, str(data), workers=args.workers, device="cpu", minutes=args.minutes)
            print(f"loop {loop.loop}: {len(summary.generations)} generations, champion {summary.champion}")
        if args.only:
            return
        champions = {name: champion_versions(data, name, args.size) for name in LOOPS}
        finals = {name: versions[-1] for name, versions in champions.items()}
        rate(plans(champions, finals, args), args.size, settings[LOOPS[0]].komi, args.sims, str(data), args.anchors)
        report(args, settings, data, finals, cores)


def run_in_parallel(argv: list[str], data: Path, cores: int) -> None:
    """Loops A and B at once, each in a process of its own with half the cores, under this process's
    Prefect API; then the caller finds both budgets spent and goes on to the matches."""
    import subprocess

    base = [a for a in argv if a != "--parallel"]
    half = str(max(1, cores // 2))
    children = [subprocess.Popen([sys.executable, "-m", "benchmarks.strength", *base, "--data-dir", str(data),
                                  "--only", loop, "--workers", half]) for loop in LOOPS]
    failed = [loop for loop, child in zip(LOOPS, children, strict=True) if child.wait() != 0]
    if failed:
        sys.exit(f"strength: loop {', '.join(failed)} failed; rerun with --data-dir {data} to resume")


def champion_versions(data: Path, loop: str, size: int) -> list[str]:
    """Ladder names (``gozero-9x9/3``) of every version `loop` promoted, oldest first."""
    from benchmarks.learning_curve import loop_champions

    return list(loop_champions(data, loop, size).values())


def report(args: argparse.Namespace, settings: dict[str, Any], data: Path, finals: dict[str, str], cores: int) -> None:
    """Print the verdict, the Elo, the budgets and the curve; log them with the PNG to MLflow."""
    from benchmarks.learning_curve import curve_rows, plot
    from storage import layout, loops, matches, runs
    from tasks.app.loop_view import loop_spend
    from tasks.ladder import ladder_rows, match_id

    a, b = LOOPS
    head = matches.read_summary(layout.match_dir(data, match_id(finals[b], finals[a], args.size))) or {}
    rows = {row.player: row for row in ladder_rows(data, args.size)}
    curves = {name: curve_rows(data, name, args.size, cores) for name in LOOPS}
    lines = [f"strength: {args.size}x{args.size}, {args.minutes:g} minutes per loop, {cores} cores, data {data}"]
    for name in LOOPS:
        records = loops.read_steps(data, name)
        spent = loop_spend(records, max((int(r["generation"]) for r in records), default=0))
        final = rows.get(finals[name])
        elo = "unrated" if final is None else f"{final.elo:+.0f} ± {1.96 * (final.stderr or 0):.0f} ({final.games} games)"
        warm = f", warm start {settings[name].warm_start} (its training is not in the budget)" \
            if settings[name].warm_start else ""
        lines.append(f"loop {name} ({(args.a if name == a else args.b) or 'plain'}): {len(curves[name]) - 1} "
                     f"promotions, {spent['loop_minutes']:.1f} wall min, "
                     f"{spent.get('loop_cpu_minutes', spent['loop_minutes'] * cores):.1f} CPU min; "
                     f"champion {finals[name]} Elo {elo}{warm}")
    verdict = (f"B ({finals[b]}) won {head['a_wins']} of {head['games']} against A ({finals[a]}): "
               f"{head['a_winrate']:.1%}, 95 % CI {head['a_winrate_low']:.1%}-{head['a_winrate_high']:.1%}, "
               f"{args.sims} sims each") if head else "B against A: no games"
    lines += [verdict, "", f"{'loop':<11} {'gen':>4} {'champion':<16} {'CPU min':>8} {'wall min':>8} "
              f"{'Elo':>7} {'± 95 %':>7} {'games':>6}"]
    lines += [f"{name:<11} {r['generation']:>4} {r['champion']:<16} {r['cpu_minutes']:>8.1f} {r['wall_minutes']:>8.1f} "
              f"{r['elo']:>+7.0f} {1.96 * r['stderr']:>7.0f} {r['games']:>6}" for name in LOOPS for r in curves[name]]
    print("\n".join(lines))
    png = plot(curves, args.png, f"Elo vs CPU minutes, {args.size}x{args.size}, {args.minutes:g} min per loop")
    params = {"minutes": args.minutes, "a": args.a, "b": args.b, "games": args.games, "sims": args.sims}
    with runs.training_run(args.size, params, run_name="strength-a-vs-b", data=data) as run_id:
        if head:
            runs.log_metrics(run_id, {"b_win_rate": head["a_winrate"], "b_win_rate_low": head["a_winrate_low"],
                                      "b_win_rate_high": head["a_winrate_high"]}, 0, data)
        runs.log_artifact(run_id, png, "strength", data)
        with tempfile.TemporaryDirectory(prefix="gozero-strength-") as temp:
            table = Path(temp) / "strength.txt"
            table.write_text("\n".join(lines) + "\n")
            runs.log_artifact(run_id, table, "strength", data)
    print(f"strength: png={png} mlflow_run={run_id}")


if __name__ == "__main__":
    sys.exit(main())
