"""The zero loop's learning curve: the ladder Elo of each generation's champion against the CPU
minutes the loop had spent on learning when it was promoted, as a table and a PNG.

    python -m benchmarks.learning_curve [--generations 4] [--games 200] [--sims 16] [--rating-games 10]
                                        [--data-dir D [--loop L] [--every K]] [--png learning_curve.png]

Runs `gozero run`'s loop (tasks.app.loop_presets.main_job_settings: 9x9, tiny net, gate off) in a fresh data
dir, or reads a finished one given with ``--data-dir`` (the loop ``--loop``, default ``run-9x9``).
Every champion without ladder games (with ``--every K``, every K-th and the last: a long loop read
with ``--data-dir`` has all its generations) is then rated by the ladder flow (`--rating-games` against each
of its two most informative opponents: random first, then earlier champions and the anchors), and
the Bradley-Terry fit over every recorded game gives each generation's Elo (random = 0).

CPU minutes = the CPU time (user + system, the loop's process and its workers) of self-play,
training, gate and promotion steps (ladder games only measure, they are left out); for steps recorded
before the loop measured it, their wall minutes x the cores the loop had (``--workers``). The
baseline in the same run is generation 0, the random net the loop starts from, on the same ladder.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def parse_args() -> argparse.Namespace:
    """The command line; parsed before anything heavy, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=4, help="generations of the loop")
    parser.add_argument("--games", type=int, default=200, help="self-play games per generation")
    parser.add_argument("--sims", type=int, default=16, help="simulations per move")
    parser.add_argument("--rating-games", type=int, default=10, help="ladder games per opponent per champion")
    parser.add_argument("--every", type=int, default=1,
                        help="rate every K-th generation's champion (and the last): long loops in fewer games")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    parser.add_argument("--data-dir", type=Path, default=None, help="a data dir with a finished loop to read")
    parser.add_argument("--loop", default="run-9x9", help="the loop's name in --data-dir")
    parser.add_argument("--png", type=Path, default=Path("learning_curve.png"), help="where to save the plot")
    return parser.parse_args()


def curve_rows(data: Path, loop: str, size: int, cores: int, champions: dict[int, str] | None = None) -> list[dict]:
    """One row per generation of `loop` with a rated champion: generation, version, CPU minutes,
    self-play games, Elo and its standard error (`champions`: `loop_champions`, if already read)."""
    from storage import loops
    from tasks.app.loop_view import loop_spend
    from tasks.ladder import ladder_rows

    records = loops.read_steps(data, loop)
    rated = {row.player: row for row in ladder_rows(data, size)}
    rows = []
    champions = loop_champions(data, loop, size, records) if champions is None else champions
    for generation, version in champions.items():
        row = rated.get(version)
        if row is None:
            continue
        spent = loop_spend(records, generation) if generation else {"loop_minutes": 0.0, "selfplay_games_total": 0}
        rows.append({"generation": generation, "champion": version,
                     "cpu_minutes": spent.get("loop_cpu_minutes", spent["loop_minutes"] * cores),
                     "wall_minutes": spent["loop_minutes"], "selfplay_games": spent["selfplay_games_total"],
                     "elo": row.elo, "stderr": row.stderr or 0.0, "games": row.games})
    return rows


def loop_champion(data: Path, loop: str, generation: int, size: int) -> str | None:
    """The ladder name of the version `loop` promoted at `generation` (None if it promoted none; other
    loops of the data dir have their own)."""
    from storage import loops
    from tasks.app.loop_settings import LoopSettings
    from tasks.zero import loop_version

    if generation:
        promoted = loops.read_step(data, loop, generation, "promote")
        if not promoted or not promoted["promoted"]:
            return None
    found = loop_version(LoopSettings(loop=loop, size=size), data, generation)
    return None if found is None else found.label


def rated_generations(promoted: list[int], every: int) -> list[int]:
    """The generations to rate among those that promoted a champion (sorted): every `every`-th (0
    among them) and the last."""
    return sorted({g for g in promoted if g % every == 0} | set(promoted[-1:]))


def loop_champions(data: Path, loop: str, size: int, records: list[dict] | None = None) -> dict[int, str]:
    """{generation: ladder name} of every version `loop` promoted, oldest first (`records`: its
    step records, if already read)."""
    from storage import loops

    records = loops.read_steps(data, loop) if records is None else records
    last = max((int(r["generation"]) for r in records), default=0)
    return {generation: version for generation in range(last + 1)
            if (version := loop_champion(data, loop, generation, size)) is not None}


def plot(series: dict[str, list[dict]], path: Path, title: str) -> Path:
    """Elo (95 % error bars) against CPU minutes, one line per loop of `series`, into the PNG `path`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1, title=title, xlabel="CPU minutes", ylabel="Elo (random = 0)")
    for label, rows in series.items():
        axes.errorbar([r["cpu_minutes"] for r in rows], [r["elo"] for r in rows],
                      yerr=[1.96 * r["stderr"] for r in rows], marker="o", capsize=3, label=label)
        for row in rows:
            axes.annotate(f"gen {row['generation']}", (row["cpu_minutes"], row["elo"]), textcoords="offset points",
                          xytext=(4, 4), fontsize=8)
    if len(series) > 1:
        axes.legend(fontsize=8)
    axes.grid(alpha=0.3)
    figure.savefig(path, format="png", dpi=100)
    return path


def main() -> None:
    args = parse_args()
    os.environ["PREFECT_LOGGING_LEVEL"] = "CRITICAL"
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    from flows.ladder import ladder
    from flows.runtime import prefect_api, task_runner
    from flows.zero_loop import zero_loop
    from storage import loops
    from tasks.app.ladder_settings import LadderSettings
    from tasks.app.loop_presets import main_job_settings
    from tasks.ladder import ladder_rows

    cores = args.workers or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="gozero-bench-curve-") as temp, prefect_api():
        data = args.data_dir or Path(temp)
        settings = main_job_settings(args.generations, args.games, args.sims, loop=args.loop)
        if args.data_dir is None:
            zero_loop(settings, str(data), workers=args.workers, device="cpu")
        rate = ladder.with_options(task_runner=task_runner(args.workers))
        rated = {row.player for row in ladder_rows(data, settings.size) if row.games}
        champions = loop_champions(data, args.loop, settings.size)
        for generation in rated_generations(sorted(champions), max(1, args.every)):
            version = champions[generation]
            if version not in rated:  # a rerun on the same data dir plays no more
                rate(LadderSettings(size=settings.size, games_per_opponent=args.rating_games, opponents=2,
                                    sims=args.sims), f"models:/{version}", str(data))
        rows = curve_rows(data, args.loop, settings.size, cores, champions)
        played = loops.read_settings(data, args.loop) or {}  # what the loop was: its loop.json
        png = plot({args.loop: rows}, args.png, f"{args.loop}: Elo vs CPU minutes ({cores} cores)")
    print(f"learning curve of {args.loop}: {rows[-1]['generation'] if rows else 0} generations x "
          f"{played.get('games', args.games)} games x {played.get('sims', args.sims)} sims "
          f"({played.get('search', 'puct')}), "
          f"{played.get('preset', 'tiny')} net{' with aux heads' if played.get('aux_heads') else ''}, "
          f"gate {played.get('gate', 'off')}, {cores} cores")
    print(f"{'gen':>4} {'champion':<16} {'CPU min':>8} {'self-play':>10} {'Elo':>7} {'± 95 %':>7} {'games':>6}")
    for row in rows:
        print(f"{row['generation']:>4} {row['champion']:<16} {row['cpu_minutes']:>8.1f} {row['selfplay_games']:>10,} "
              f"{row['elo']:>+7.0f} {1.96 * row['stderr']:>7.0f} {row['games']:>6}")
    if len(rows) >= 2:
        gain = rows[-1]["elo"] - rows[0]["elo"]
        print(f"learning_curve: last_vs_gen0_elo={gain:+.0f} cpu_minutes={rows[-1]['cpu_minutes']:.1f} png={png}")


if __name__ == "__main__":
    sys.exit(main())
