"""The strength recipe's learning curve: each rated champion's Elo against the CPU hours spent.

Read from the records alone (`storage.loops`: the recipe's stages and its loop's steps) and the
ratings table (every anchor game), so it can be drawn at any time, also by a benchmark after the
run. The ladder is anchored at the recipe's first anchor (GNU Go level 1 by default = 0); every
GNU Go level on it becomes a horizontal line. Logged to one MLflow run per recipe, made once.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from storage import loops, runs
from storage.ratings import CURVE_PLOT_ARTIFACT, CurvePoint, plot_strength_curve
from tasks.app.players import ladder_name
from tasks.app.steps import Steps
from tasks.app.strong import StrongSettings, recipe_spend
from tasks.ladder import fit


def curve_points(settings: StrongSettings, data: Path, anchor: str | None = None,
                 ) -> tuple[list[CurvePoint], dict[str, float]]:
    """(a point per champion that met the anchors, the Elo of every GNU Go level on the ladder), the
    ladder anchored at `anchor` (a player on it, e.g. ``gnugo-1``; default the recipe's first anchor)."""
    anchor = ladder_name(anchor or settings.anchors[0], settings.anchor_sims, data, settings.size)
    rated = {r.player: r for r in fit(data, settings.size, anchor=anchor)}
    recipe, loop = loops.read_steps(data, settings.recipe), loops.read_steps(data, settings.name)
    points = []
    for record in (r for r in recipe if r["step"] == "anchors"):
        generation = int(record["generation"])
        player = ladder_name(record["model"], settings.anchor_sims, data, settings.size)
        if player not in rated:
            continue
        spent = recipe_spend([r for r in [*recipe, *loop] if int(r["generation"]) <= generation])
        points.append(CurvePoint(f"gen {generation} ({player})", spent.learning, rated[player].elo,
                                 rated[player].stderr))
    levels = {name: rating.elo for name, rating in rated.items() if name.startswith("gnugo-")}
    return points, levels


def publish_curve(settings: StrongSettings, data: Path) -> dict[str, Any]:
    """Log the curve's points and plot to the recipe's MLflow run; the curve and the spend."""
    points, levels = curve_points(settings, data)
    run_id = Steps(data, settings.recipe).step("mlflow", lambda: {"run_id": runs.start_run(
        settings.size, settings.record(), run_name=settings.recipe, data=data)})["run_id"]
    for point in points:
        stderr = {} if point.stderr is None else {"elo_stderr": point.stderr}
        runs.log_metrics(run_id, {"elo": point.elo, **stderr, "cpu_hours": point.cpu_hours},
                         round(point.cpu_hours * 60), data)
    if points:
        with tempfile.TemporaryDirectory(prefix="gozero-curve-") as temp:
            png = plot_strength_curve({settings.name: points}, levels, Path(temp) / Path(CURVE_PLOT_ARTIFACT).name,
                                      settings.anchors[0], f"{settings.name}: Elo vs CPU hours")
            runs.log_artifact(run_id, png, str(Path(CURVE_PLOT_ARTIFACT).parent), data)
    spend = recipe_spend([*loops.read_steps(data, settings.recipe), *loops.read_steps(data, settings.name)])
    return {"points": [asdict(p) for p in points], "levels": levels, "cpu_hours": asdict(spend),
            "mlflow_run": run_id}
