"""The strength recipe as a flow: AlphaGo's order, sized to a CPU budget, every stage recorded.

    expert      GNU Go plays itself offline (subflow `ingest`): the expert dataset
    supervised  a dual net with the auxiliary heads on it (cosine lr, a low value weight)
    anchors-0   the supervised net against the anchors (GNU Go levels): its place on the ladder
    for k in 1, 2, ...: while the learning CPU spent is under the budget
        loop k  one zero-loop generation warm-started from the supervised net (subflow
                `zero-loop`): Gumbel self-play, training with expert rows in every batch, the gate
        anchors-k   a newly promoted champion against the anchors (every `anchor_every` generations)
    curve       Elo (anchored at the first anchor) against CPU hours in an MLflow run, GNU Go
                levels as horizontal lines

Every stage is a step (`tasks.app.steps`): a run killed at any moment and started again continues at
its first unfinished step, and a finished run given a larger `budget_cpu_hours` goes on. CPU is
counted per step across the process tree (pool workers, GNU Go; `gocore.cpu`); anchor games only
measure and are reported beside the budget, not in it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from prefect import flow

from flows.evaluate import evaluate
from flows.ingest import ingest
from flows.loop_driver import refuse_mid_generation
from flows.runtime import prefect_api, task_runner
from flows.zero_loop import zero_loop
from gocore.nn.encode import EncodeOptions
from gocore.play.match import MatchConfig
from storage import layout, loops, matches
from tasks.app.evaluate import MatchSettings
from tasks.app.loop_settings import BETWEEN_GENERATIONS
from tasks.app.loop_view import STEPS
from tasks.app.steps import Steps
from tasks.app.strong import RESUMABLE, StrongSettings, recipe_spend
from tasks.strong_curve import publish_curve
from tasks.train import dataset_facts, train_and_register
from tasks.zero import champion


@flow(name="strong", log_prints=True)
def strong(settings: StrongSettings = StrongSettings(), data_dir: str | None = None, workers: int | None = None,
           dask_address: str | None = None, device: str = "auto", inference_device: str = "cpu") -> dict[str, Any]:
    """Run (or continue) the strength recipe `settings.name` until its CPU budget is spent.

    Args:
        settings: What the recipe is (a rerun may change only `RESUMABLE`, and `BETWEEN_GENERATIONS`
            while no loop generation is under way).
        data_dir: The data dir of the games, datasets, loop and registry.
        workers: Processes for GNU Go games, self-play, gates and anchor games (default: cores).
        dask_address: Run those games on this Dask scheduler instead.
        device: Training device: auto, cpu, cuda, cuda:<i> or mps.
        inference_device: Where the loop's and the anchors' games run their nets, in every worker:
            cpu by default (each worker process would hold its own CUDA context).
    """
    data = layout.data_dir(data_dir)
    runner = task_runner(workers, dask_address)
    with loops.lock(data, settings.recipe):
        claim_recipe(settings, data)
        steps = Steps(data, settings.recipe, 0)
        steps.step("expert", lambda: _expert(settings, data, runner))
        sl = steps.step("supervised", lambda: _supervised(settings, data, device))
        _rate(settings, data, sl["model"], 0, runner, workers)
        loop = settings.loop_settings(sl["model"])
        for generation in range(1, settings.generations + 1):
            if _is_spent(settings, data, generation):
                print(f"recipe {settings.name}: {settings.budget_cpu_hours} CPU hours spent, no generation {generation}")
                break
            zero_loop.with_options(task_runner=runner)(replace(loop, generations=generation), str(data), workers,
                                                       dask_address, device, inference_device=inference_device)
            if generation % settings.anchor_every == 0 and not _is_rated(data, settings, current := champion(loop, data).uri):
                _rate(settings, data, current, generation, runner, workers, inference_device)
    return publish_curve(settings, data)


def claim_recipe(settings: StrongSettings, data: Path) -> None:
    """Record the recipe's settings on its first run; LoopError if a rerun changes any but `RESUMABLE`,
    or one of `BETWEEN_GENERATIONS` (self-play's games and simulations, reanalysis) while a generation of
    its loop is under way: checked here, before the recipe's record takes the new value."""
    record = settings.record()
    changed = loops.changed_settings(loops.read_settings(data, settings.recipe), record)
    refuse_mid_generation(data, settings.name, STEPS, [key for key in changed if key in BETWEEN_GENERATIONS])
    loops.claim(data, settings.recipe, record, RESUMABLE | BETWEEN_GENERATIONS)


def _expert(settings: StrongSettings, data: Path, runner: Any) -> dict[str, Any]:
    """GNU Go's games, played and encoded into the expert dataset (with their final counts)."""
    options = EncodeOptions(encoder=settings.encoder, size=settings.size)
    summary = ingest.with_options(task_runner=runner)(list(settings.expert), settings.dataset, str(data), options)
    return {"dataset": settings.dataset, "games": summary.games, "rows": summary.rows,
            "games_refused": summary.games_refused}


def _supervised(settings: StrongSettings, data: Path, device: str) -> dict[str, Any]:
    """The supervised dual net (with the auxiliary heads) on the expert dataset, registered."""
    facts = dataset_facts(layout.dataset_dir(data, settings.dataset))
    config = replace(settings.sl_config(), device=device)
    result = train_and_register(facts, "dual", settings.preset, config, data, settings.supervised_run,
                                version_tags={"recipe": settings.name}, aux_heads=True)
    metrics = {k: round(v, 4) for k, v in result.metrics.items() if k.startswith("val/")}
    return {"model": result.model_uri, "metrics": metrics}


def _rate(settings: StrongSettings, data: Path, model: str, generation: int, runner: Any,
          workers: int | None, device: str = "cpu") -> None:
    """Generation `generation`'s champion `model` against the anchors (once), then the curve."""
    Steps(data, settings.recipe, generation).step(
        "anchors", lambda: _anchors(settings, data, model, generation, runner, workers, device))
    publish_curve(settings, data)


def _anchors(settings: StrongSettings, data: Path, model: str, generation: int, runner: Any,
             workers: int | None, device: str = "cpu") -> dict[str, Any]:
    """`model` against every anchor: win rates with their clustered intervals (rated on the ladder).
    Every generation plays the same game starts (the recipe's seed), so two generations' matches
    against an anchor pair game by game (`python -m benchmarks.paired`)."""
    results = {}
    for anchor in settings.anchors:
        match = f"{settings.name}-gen{generation}-vs-{anchor}"
        played = MatchSettings(model, anchor, settings.anchor_games, settings.anchor_sims,
                               MatchConfig(settings.size, settings.komi, seed=_anchor_seed(settings, data, match)),
                               device=device)
        summary = evaluate.with_options(task_runner=runner)(played, match, str(data), parallel=workers)
        results[anchor] = {"games": summary["games"], "win_rate": round(summary["a_winrate"], 4),
                           "low": round(summary["a_winrate_low"], 4), "high": round(summary["a_winrate_high"], 4),
                           "match": match}
    return {"model": model, "results": results}


def _anchor_seed(settings: StrongSettings, data: Path, match: str) -> int:
    """The recipe's seed, or the one a match begun by earlier code (seed + generation) pinned: it
    resumes on its own starts instead of being refused as changed."""
    try:
        return int(matches.read_settings(layout.match_dir(data, match))["seed"])
    except matches.MatchError:  # not begun
        return settings.seed


def _is_rated(data: Path, settings: StrongSettings, model: str) -> bool:
    """Whether `model` has played the anchors already (as the champion of an earlier generation)."""
    return any(record["step"] == "anchors" and record.get("model") == model
               for record in loops.read_steps(data, settings.recipe))


def _is_spent(settings: StrongSettings, data: Path, generation: int) -> bool:
    """Whether generation `generation` may not start: it has no record yet and the learning CPU
    of the recipe and its loop has reached the budget (a begun generation is finished)."""
    records = loops.read_steps(data, settings.name)
    if any(int(r["generation"]) == generation for r in records):
        return False
    spent = recipe_spend([*loops.read_steps(data, settings.recipe), *records])
    return spent.learning >= settings.budget_cpu_hours


def run_strong(settings: StrongSettings, data_dir: str | None = None, workers: int | None = None,
               dask_address: str | None = None, device: str = "auto", inference_device: str = "cpu") -> dict[str, Any]:
    """Run the flow under one Prefect API (a temporary server unless PREFECT_API_URL is set)."""
    with prefect_api():
        return strong(settings, data_dir, workers, dask_address, device, inference_device)
