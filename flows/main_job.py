"""The main job (`gozero run`, `make run`): a short AlphaGo Zero loop, then the evidence it learned.

One flow, like every other pipeline: the zero loop on the `run-9x9` named settings
(tasks/app/loop_presets.py) as a subflow, then the champion against generation 0 and both against
random (evaluate subflows, every game rated on the ladder). A rerun resumes: the loop continues
where it stopped and each match plays only its missing games. `gozero run` shows it with the
loop's live table; the Prefect UI shows the same runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prefect import flow

from flows.evaluate import evaluate
from flows.runtime import artifact_key, task_runner
from flows.zero_loop import zero_loop
from gocore.errors import GozeroError
from gocore.play.match import MatchConfig
from storage import layout
from tasks.app.evaluate import MatchSettings
from tasks.app.loop_presets import main_job_settings
from tasks.app.loop_settings import LoopSettings
from tasks.zero import loop_version


class MainJobError(GozeroError):
    """The loop left nothing to show: no champion, or generation 0 still champion."""


@dataclass(frozen=True)
class MainJobResult:
    """The champion, generation 0 and the evidence: the champion's match against generation 0."""

    champion: str
    first: str
    evidence: dict[str, Any]


EVIDENCE_SHARE = 0.2
"""The share of a job budget kept for the evidence matches and start-up (in the 2026-11-27 run of the
four generations, 205 of its 740 CPU seconds went to them and to start-up, most of it the matches)."""


def loop_minutes(minutes: float | None) -> float | None:
    """The loop's learning budget inside a job budget of `minutes` (None: none): what remains once
    the evidence's share is set aside. The loop then starts only generations whose predicted end
    fits (`flows.zero_loop.is_budget_spent`)."""
    if minutes is None:
        return None
    return max(0.0, minutes * (1 - EVIDENCE_SHARE))


@flow(name="main-job", log_prints=True)
def main_job(settings: LoopSettings | None = None, data_dir: str | None = None, eval_games: int = 40,
             random_games: int = 10, workers: int | None = None, minutes: float | None = None) -> MainJobResult:
    """Run the loop `settings` (default: the `run-9x9` named settings), then play its champion against
    generation 0 (`eval_games`) and both against random (`random_games` each; 0: none).

    Args:
        settings: The loop (default `tasks.app.loop_presets.main_job_settings()`: 9x9, tiny net, 4 generations).
        data_dir: The data dir (default: $GOZERO_DATA, else the per-user one).
        eval_games: Games of the champion against generation 0.
        random_games: Games of the champion and of generation 0 against random (they anchor the ladder).
        workers: Processes for self-play and match games (default: cores).
        minutes: The job's wall budget from here (None: none; a caller subtracts what it spent before,
            e.g. starting a Prefect server): the loop starts a generation only if it is predicted to
            end within `loop_minutes` of it, from what its last generation took on this machine.
    """
    settings = settings or main_job_settings()
    data = layout.data_dir(data_dir)
    budget = loop_minutes(minutes)
    if budget is not None:
        print(f"budget: {minutes:g} minutes, {budget:.1f} of them for the loop's learning")
    summary = zero_loop(settings, str(data), workers, None, "auto", minutes=budget)
    first = loop_version(settings, data, 0)
    if summary.champion is None or first is None:
        raise MainJobError(f"the loop has no champion or generation 0 in {data}")
    if summary.champion == first.label:
        raise MainJobError(f"the loop's champion is still generation 0 ({first.label}): no generation was played "
                           f"or promoted{f' in --minutes {minutes:g}' if minutes is not None else ''}, so there is "
                           "nothing to show it learned")
    champion_uri = f"models:/{summary.champion}"

    def match(black: str, white: str, count: int) -> dict[str, Any]:
        name = artifact_key("run", black.removeprefix("models:/"), "vs", white.removeprefix("models:/"))
        print(f"{black} against {white}: {count} games")
        played = MatchSettings(black, white, count, settings.sims, MatchConfig(settings.size, settings.komi))
        return evaluate.with_options(task_runner=task_runner(workers))(played, name, str(data), parallel=workers)

    evidence = match(champion_uri, first.uri, eval_games)
    if random_games:
        for player in (champion_uri, first.uri):
            match(player, "random", random_games)
    return MainJobResult(summary.champion, first.label, evidence)
