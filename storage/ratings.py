"""The ratings table (every game our players played) and the Elo ladder fitted from it, on disk.

    <data>/ratings/
        match-<match-id>.parquet   the games of one finished match (storage.schemas.RATINGS_SCHEMA),
                                   rewritten whole each time the match is finalized: a rerun or a
                                   resumed match replaces its file, it never adds rows twice
        ladder.json                the latest ladder of each board size: {"<N>": {"updated", "players"}}

Gates, ladder games and evaluations all land here (tasks.app.evaluate.finish_match writes the file).
Players are named by their ladder names (tasks.app.players.ladder_name: ``gozero-9x9/3``, ``random``,
``uct-100``), resolved when the match began, so a champion alias that moves later never renames a
game. `log_ladder` records a fitted ladder as an MLflow run (metrics through storage.runs) with
the Elo-vs-generation plot drawn by `plot_ladder` (matplotlib Agg, no pyplot).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from filelock import FileLock

from storage import layout, matches
from storage.atomic import atomic_path, write_json
from storage.schemas import RATINGS_SCHEMA, ratings_table

LADDER = "ladder.json"
PLOT_ARTIFACT = "plots/ladder.png"
_MATCH_PREFIX, _MATCH_SUFFIX = "match-", ".parquet"


@dataclass(frozen=True)
class RatedMatch:
    """A match as the ratings table records it: who played, on which board, with what budget."""

    match_id: str
    """The match directory's name (``<data>/matches/<match_id>``)."""
    player_a: str
    """Ladder name of player A (black in even games)."""
    player_b: str
    """Ladder name of player B."""
    size: int
    """Board size N."""
    komi: float
    """Komi."""
    sims: int
    """Simulations per move of network players and a bare ``uct``."""


@dataclass(frozen=True)
class GenerationElo:
    """One model generation's place on the ladder: a point of the Elo-vs-generation curve."""

    generation: int
    """The version's ``generation`` tag, else its version number."""
    elo: float
    """Elo relative to the random player (0)."""
    stderr: float | None
    """One standard error of `elo`."""
    selfplay_games: int | None = None
    """Self-play games played before it was promoted (a loop champion), else None."""


def match_file(data: Path, match_id: str) -> Path:
    """The ratings file of one match."""
    return layout.ratings_dir(data) / f"{_MATCH_PREFIX}{layout.safe_name(match_id, 'match id')}{_MATCH_SUFFIX}"


def write_match(data: Path, match: RatedMatch, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write (or replace) the ratings file of `match` from its results rows; returns its path."""
    match_path = layout.match_dir(data, match.match_id)
    table = ratings_table({
        "match_id": match.match_id, "game": row["game"], "player_a": match.player_a, "player_b": match.player_b,
        "a_color": row["a_color"], "a_score": row["a_score"], "result": row["result"], "reason": row["reason"],
        "size": match.size, "komi": match.komi, "sims": match.sims,
        "sgf": matches.sgf_path(match_path, row["game"]).relative_to(data).as_posix(),
    } for row in rows)
    path = match_file(data, match.match_id)
    with atomic_path(path) as temp:
        pq.write_table(table, temp, compression="zstd")
    return path


def read_games(data: Path, size: int | None = None) -> pa.Table:
    """Every game in the ratings table (of board size `size` if given), in RATINGS_SCHEMA."""
    root = layout.ratings_dir(data)
    files = sorted(root.glob(f"{_MATCH_PREFIX}*{_MATCH_SUFFIX}")) if root.is_dir() else []
    table = pa.concat_tables([pq.read_table(path, schema=RATINGS_SCHEMA) for path in files]) if files \
        else RATINGS_SCHEMA.empty_table()
    return table if size is None else table.filter(pc.equal(table["size"], size))


def write_ladder(data: Path, size: int, players: Sequence[Mapping[str, Any]]) -> Path:
    """Record the ladder of board size `size` in ladder.json (other sizes kept); returns its path."""
    path = layout.ratings_dir(data) / LADDER
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{path}.lock", timeout=60):  # two sizes' flows must not drop each other's ladder
        ladders = json.loads(path.read_text()) if path.exists() else {}
        ladders[str(size)] = {"updated": datetime.now(UTC).isoformat(timespec="seconds"),
                              "players": [dict(player) for player in players]}
        write_json(path, ladders)
    return path


def read_ladder(data: Path, size: int) -> list[dict[str, Any]] | None:
    """The players of the last ladder written for board size `size`, best first; None if none was."""
    path = layout.ratings_dir(data) / LADDER
    if not path.exists():
        return None
    ladder = json.loads(path.read_text()).get(str(size))
    return None if ladder is None else ladder["players"]


def log_ladder(size: int, points: Sequence[GenerationElo], params: Mapping[str, Any],
               data: Path | None = None) -> str:
    """A finished "ladder" run in the size's experiment: `elo` and `elo_stderr` per generation (the
    metric step), `params`, and the Elo-vs-generation plot; returns the run id."""
    import tempfile

    from storage import runs

    with runs.training_run(size, dict(params), run_name="ladder", data=data) as run_id:
        for point in sorted(points, key=lambda p: p.generation):
            stderr = {} if point.stderr is None else {"elo_stderr": point.stderr}
            runs.log_metrics(run_id, {"elo": point.elo, **stderr}, point.generation, data=data)
        with tempfile.TemporaryDirectory(prefix="gozero-ladder-") as temp:
            png = plot_ladder(points, Path(temp) / Path(PLOT_ARTIFACT).name, f"{size}x{size}")
            runs.log_artifact(run_id, png, str(Path(PLOT_ARTIFACT).parent), data=data)
    return run_id


def plot_ladder(points: Sequence[GenerationElo], path: Path, title: str = "") -> Path:
    """Draw Elo against generation with 95 % error bars into the PNG `path`, and beside it Elo
    against self-play games when some points know theirs; returns `path`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    ordered = sorted(points, key=lambda p: p.generation)
    by_games = sorted((p for p in ordered if p.selfplay_games is not None), key=lambda p: p.selfplay_games or 0)
    figure = Figure(figsize=(11 if by_games else 6, 3.5), layout="constrained")
    FigureCanvasAgg(figure)  # Agg without pyplot: no global backend state, safe in worker threads
    panels = [("generation", ordered, [p.generation for p in ordered])]
    if by_games:
        panels.append(("self-play games", by_games, [p.selfplay_games for p in by_games]))
    for index, (label, shown, xs) in enumerate(panels):
        axes = figure.add_subplot(1, len(panels), index + 1, title=f"Elo vs {label} {title}".strip(),
                                  xlabel=label, ylabel="Elo (random = 0)")
        axes.errorbar(xs, [p.elo for p in shown], yerr=[1.96 * (p.stderr or 0.0) for p in shown],
                      marker="o", capsize=3)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    with atomic_path(Path(path)) as temp:
        figure.savefig(temp, format="png", dpi=100)
    return Path(path)


CURVE_PLOT_ARTIFACT = "plots/strength.png"


@dataclass(frozen=True)
class CurvePoint:
    """A champion's rating at the CPU hours spent when it was made."""

    label: str  # e.g. "gen 3 (gozero-9x9/12)"
    cpu_hours: float
    elo: float
    stderr: float | None


def plot_strength_curve(series: Mapping[str, Sequence[CurvePoint]], levels: Mapping[str, float], path: Path,
                        anchor: str = "", title: str = "") -> Path:
    """Each series' Elo against CPU hours with 95 % error bars, and each of `levels` (e.g. GNU Go
    levels: name -> Elo) as a labelled horizontal line, into the PNG `path`; returns `path`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1, title=title, xlabel="CPU hours spent learning",
                              ylabel=f"Elo ({anchor} = 0)" if anchor else "Elo")
    for name, points in series.items():
        ordered = sorted(points, key=lambda p: p.cpu_hours)
        axes.errorbar([p.cpu_hours for p in ordered], [p.elo for p in ordered],
                      yerr=[1.96 * (p.stderr or 0.0) for p in ordered], marker="o", capsize=3, label=name)
    for name, elo in sorted(levels.items(), key=lambda item: item[1]):
        axes.axhline(elo, linestyle="--", linewidth=1, color="grey")
        axes.annotate(name, (0, elo), xycoords=("axes fraction", "data"), textcoords="offset points",
                      xytext=(4, 3), fontsize=8, color="grey")
    axes.set_xlim(left=0)
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(alpha=0.3)
    with atomic_path(Path(path)) as temp:
        figure.savefig(temp, format="png", dpi=100)
    return Path(path)


EVAL_PLOT_ARTIFACT = "plots/elo.png"


def log_evaluation(size: int, run_name: str, pairs: Sequence[Mapping[str, Any]], players: Sequence[Mapping[str, Any]],
                   markdown: str, params: Mapping[str, Any], data: Path | None = None) -> str:
    """A finished run `run_name` in the size's experiment holding a round robin: its pairs and
    players as ``evaluation.json``, the table as ``evaluation.md``, each player's Elo as a metric
    and a bar plot of them (95 % error bars); returns the run id."""
    import tempfile

    from storage import runs

    with runs.training_run(size, dict(params), run_name=run_name, data=data) as run_id:
        rated = [p for p in players if p.get("elo") is not None]
        if rated:
            runs.log_metrics(run_id, {f"elo/{p['label']}": p["elo"] for p in rated}, 0, data=data)
        with tempfile.TemporaryDirectory(prefix="gozero-eval-") as temp:
            folder = Path(temp)
            write_json(folder / "evaluation.json", {"pairs": list(pairs), "players": list(players)})
            (folder / "evaluation.md").write_text(markdown)
            for name in ("evaluation.json", "evaluation.md"):
                runs.log_artifact(run_id, folder / name, "evaluation", data=data)
            png = plot_elos(rated, folder / Path(EVAL_PLOT_ARTIFACT).name, f"{size}x{size}")
            runs.log_artifact(run_id, png, str(Path(EVAL_PLOT_ARTIFACT).parent), data=data)
    return run_id


def plot_elos(players: Sequence[Mapping[str, Any]], path: Path, title: str = "") -> Path:
    """Draw each player's Elo as a bar with a 95 % error bar into the PNG `path`; returns it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1, title=f"round robin {title}".strip(), ylabel="Elo (random = 0)")
    labels = [str(p["label"]) for p in players]
    axes.bar(labels, [float(p["elo"]) for p in players],
             yerr=[1.96 * float(p.get("stderr") or 0.0) for p in players], capsize=3)
    axes.tick_params(axis="x", labelrotation=30)
    axes.grid(alpha=0.3, axis="y")
    with atomic_path(Path(path)) as temp:
        figure.savefig(temp, format="png", dpi=100)
    return Path(path)
