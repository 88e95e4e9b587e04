"""Reanalysis flow: one model searches positions of a loop's earlier games again, in parallel batches.

    plan    = plan_reanalysis(loop, data, generation)                    # tasks.reanalysis: games, positions
    results = reanalyse_games.map(unmapped(settings), plan's batches)    # processes locally, or a Dask cluster
    summary = ReanalysisSummary(...)                                     # what was drawn, rows written

A batch found finished on disk (its sidecar) is not sent to a worker: a rerun searches only what
is left. flows/zero_loop.py runs this as its `reanalyse` step, between self-play and training.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from prefect import flow, unmapped

from flows.runtime import StoppingProcessPool, results_as_completed
from storage import layout
from storage import selfplay as selfplay_files
from tasks.app.loop_settings import LoopSettings
from tasks.app.models import local_model
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.reanalysis import plan_reanalysis, reanalyse_games, recorded
from tasks.selfplay import finished_batch


@dataclass(frozen=True)
class ReanalysisSummary:
    """What a reanalysis run drew and wrote: the flow's result."""

    expert: int  # positions drawn from the expert dataset's games
    selfplay: int  # positions drawn from the self-play games of earlier generations
    generations: tuple[int, ...]  # those self-play games' generations
    rows: int  # rows in all its batches (a position the search finds over makes none)
    tasks: int  # batches in the plan
    tasks_skipped: int  # batches found finished on disk
    seconds: float  # search time of the batches searched by this run, summed over tasks


@flow(name="reanalyse", log_prints=True, task_runner=StoppingProcessPool())
def reanalyse(settings: SelfPlaySettings, loop: LoopSettings, generation: int,
              data_dir: str | None = None) -> ReanalysisSummary:
    """Search `loop.reanalyse` positions of the loop's earlier games again with `settings.model` (as its
    self-play searches, without noise) into batches of ``<data>/loops/<loop>/selfplay/gen=<generation>/``.

    Args:
        settings: How positions are searched (model, sims, root search, board); `run` is the loop's name.
        loop: The loop: how many positions, the share from its expert dataset, its seed and window.
        generation: The generation whose training window the rows join.
        data_dir: The data dir (default: $GOZERO_DATA, else the per-user one) of the loop and registry.
    """
    data = layout.data_dir(data_dir)
    plan = plan_reanalysis(loop, data, generation)
    selfplay_files.clean_partial(data, generation, settings.run)  # before any task writes there
    settings = replace(settings, local_model=local_model(settings.model, data))  # workers: no MLflow import
    parts = [done for batch in plan.batches
             if (done := finished_batch(data, generation, batch.seed, recorded(settings, batch.games), settings.run))]
    todo = [batch for batch in plan.batches if batch.seed not in {part.seed for part in parts}]
    print(f"reanalysis gen={generation}: {settings.model}, {plan.expert} expert and {plan.selfplay} self-play "
          f"positions in {len(plan.batches)} tasks ({len(parts)} done), {settings.sims} sims")
    futures = reanalyse_games.map(unmapped(settings), [batch.games for batch in todo], unmapped(generation),
                                  [batch.seed for batch in todo], unmapped(str(data))) if todo else []
    searched = list(results_as_completed(futures))
    return ReanalysisSummary(expert=plan.expert, selfplay=plan.selfplay, generations=plan.generations,
                             rows=sum(part.rows for part in parts + searched), tasks=len(plan.batches),
                             tasks_skipped=len(parts), seconds=round(sum(part.seconds for part in searched), 1))
