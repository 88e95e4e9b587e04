"""The AlphaGo Zero loop as a flow: generation after generation, each step recorded when it finishes.

    champion = initial_champion()              # generation 0: a random net, promoted "initial"
    for k in 1 .. generations:                 # (or the warm start's net, promoted "warm-start")
        stop       before a new generation once `minutes` of learning are spent (a budget)
        start      pin this generation's champion (a rerun plays the same one)
        selfplay   the champion plays `games` games (subflow: mapped tasks, a pool or Dask)
        reanalyse  with `reanalyse` on: the champion searches positions of expert and earlier
                   self-play games again, rows for the window (subflow `reanalyse`)
        train      a candidate from the champion's weights on the window of recent self-play
        gate       candidate vs champion (subflow `evaluate`): SPRT, 55 %, or off
        promote    move `champion` in MLflow if the gate passed, with the evidence as tags; the
                   event gozero.model.promoted says so (tasks.promotion.promote)
        calibrate  the next resign threshold from this generation's no-resign games
        ladder     a new champion's ladder games, then the Elo of every player (subflow `ladder`)

Each step writes a small record (storage.loops) when it has finished; a rerun with the same
settings, or a Retry from the Prefect UI, skips every recorded step and resumes inside the first
unfinished one (self-play batches on disk, the training checkpoint, the gate's games). The loop's
lock refuses a second process on the same loop.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact

from flows import loop_driver
from flows.evaluate import evaluate
from flows.ladder import ladder
from flows.loop_driver import LoopKind, drive
from flows.reanalysis import reanalyse
from flows.runtime import artifact_key, dask_scheduler, prefect_api, task_runner
from flows.selfplay import default_games_per_task, selfplay
from gocore.play.match import MatchConfig
from gocore.play.ratings import SprtConfig
from storage import layout, loops
from tasks.app.evaluate import MatchSettings
from tasks.app.ladder_settings import LadderSettings
from tasks.app.loop_settings import BETWEEN_GENERATIONS, RESUMABLE, LoopSettings, loop_record, selfplay_search
from tasks.app.loop_view import STEPS, LoopSummary, generation_rows, last_generation_minutes, loop_spend
from tasks.app.loop_view import is_cpu_spent as cpu_spent
from tasks.app.models import ModelRef
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.app.steps import Steps
from tasks.zero import (
    champion,
    initial_champion,
    loop_version,
    next_resign_threshold,
    promote_candidate,
    train_candidate,
)

GATE_SPRT = SprtConfig(elo0=0.0, elo1=35.0, alpha=0.05, beta=0.05)
GO_LOOP = LoopKind("go", STEPS, RESUMABLE, loop_record, initial_champion,
                   between_generations=BETWEEN_GENERATIONS)


@flow(name="zero-loop", log_prints=True)
def zero_loop(settings: LoopSettings = LoopSettings(), data_dir: str | None = None, workers: int | None = None,
              dask_address: str | None = None, device: str = "auto",
              more_generations: int | None = None, minutes: float | None = None,
              inference_device: str = "cpu", cpu_hours: float | None = None) -> LoopSummary:
    """Run the loop `settings.loop` up to `settings.generations` generations (resuming where it stopped).

    Args:
        settings: What the loop is (a rerun must keep all but `generations`) and how far it goes.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) of the loop, self-play and registry.
        workers: Processes for self-play and gate games (default: the machine's cores).
        dask_address: Run self-play and gate games on this Dask scheduler instead (tcp://host:8786).
        device: Training device: auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i> or mps.
        more_generations: Play this many generations beyond the last finished one (a scheduled run
            advances the loop; an unfinished generation counts as the first) instead of
            settings.generations.
        minutes: Start no new generation that would end the loop's learning (self-play, training,
            gate) past this many wall minutes, judged by what its last generation took; the first
            always starts and a generation under way is finished.
        inference_device: Where self-play, gate and ladder games run their nets, in every worker
            (same names as `device`): cpu by default, since each worker process would hold its own
            CUDA context. Two parameters, not one: training wants the GPU by default, the pool not.
        cpu_hours: Start no new generation once the loop's learning (self-play, training, gates;
            CPU of the whole process tree) has spent this many CPU hours: runs compared at equal CPU.
    """
    data = layout.data_dir(data_dir)

    def run(settings: LoopSettings, generation: int) -> None:
        run_generation(settings, data, generation, workers, dask_address, device, inference_device)
        publish_table(settings, data)  # a new version of the table after each generation

    settings = drive(GO_LOOP, settings, data, run, lambda settings, generation: stop_reason(
        data, settings.loop, generation, minutes, cpu_hours), more_generations)
    return loop_summary(settings, data)


def generation_target(data: Path, loop: str, more: int) -> int:
    """`loop_driver.generation_target` of the Go loop's steps."""
    return loop_driver.generation_target(data, loop, STEPS, more)


def stop_reason(data: Path, loop: str, generation: int, minutes: float | None, cpu_hours: float | None) -> str | None:
    """Why generation `generation` may not start (a budget spent), or None."""
    if minutes is not None and is_budget_spent(data, loop, generation, minutes):
        return f"{minutes} minutes spent"
    if cpu_hours is not None and is_cpu_spent(data, loop, generation, cpu_hours):
        return f"{cpu_hours} CPU hours spent"
    return None


def is_budget_spent(data: Path, loop: str, generation: int, minutes: float) -> bool:
    """Whether `generation` may not start: it has no step yet and the loop's learning so far
    (`loop_spend`: the ladder's games only measure) plus what its last generation took on this
    machine would pass `minutes`: the budget sizes the generations to the measured speed. The
    first generation always starts; a begun one is finished."""
    records = loops.read_steps(data, loop)
    if any(int(r["generation"]) == generation for r in records):
        return False
    spent = loop_spend(records, generation)["loop_minutes"]
    return spent + last_generation_minutes(records, generation) > minutes


def is_cpu_spent(data: Path, loop: str, generation: int, cpu_hours: float) -> bool:
    """`loop_view.is_cpu_spent` of the loop's step records."""
    return cpu_spent(loops.read_steps(data, loop), generation, cpu_hours)


def train_start(settings: LoopSettings, data: Path, generation: int, champion_ref: ModelRef) -> ModelRef:
    """The weights generation `generation`'s candidate trains from: the pinned champion, or with
    `train_from` latest the previous generation's candidate (the champion in generation 1)."""
    if settings.train_from != "latest" or generation == 1:
        return champion_ref
    return loop_version(settings, data, generation - 1) or champion_ref


def publish_table(settings: LoopSettings, data: Path) -> None:
    """The loop's generations so far as a Prefect table artifact (one version per call)."""
    summary = loop_summary(settings, data)
    create_table_artifact([asdict(row) for row in summary.generations], key=artifact_key("loop", settings.loop),
                          description=f"generations of loop {settings.loop}, after generation "
                                      f"{summary.generations[-1].generation if summary.generations else 0}")


def run_generation(settings: LoopSettings, data: Path, generation: int, workers: int | None,
                   dask_address: str | None, device: str, inference_device: str = "cpu") -> None:
    """Every step of one generation that has no record yet; training on `device`, games on
    `inference_device`."""
    steps = Steps(data, settings.loop, generation)
    step = steps.step
    start = step("start", lambda: {"champion": asdict(champion(settings, data)),
                                   "resign_threshold": _resign_threshold(settings, data, generation)})
    pinned = ModelRef(**start["champion"])
    played = step("selfplay", lambda: _selfplay(settings, data, generation, pinned, start["resign_threshold"],
                                                workers, dask_address, inference_device))
    # a step only loops with reanalysis record: older loops' generations stay finished, and a generation
    # trained before a rerun turned reanalysis on is not searched again for a training it already had
    if settings.reanalyse and steps.done("train") is None:
        step("reanalyse", lambda: _reanalyse(settings, data, generation, pinned, workers, dask_address,
                                             inference_device))
    trained = step("train", lambda: train_candidate(settings, generation, train_start(settings, data, generation, pinned),
                                                    str(data), device))
    candidate = ModelRef(pinned.name, int(trained["candidate"]))
    gate = step("gate", lambda: _gate(settings, data, generation, candidate, pinned, workers, dask_address,
                                      inference_device))
    promoted = step("promote", lambda: _promote(settings, data, generation, candidate, gate, played, trained, start))
    step("calibrate", lambda: {"resign_threshold": next_resign_threshold(
        settings, tuple(played["winner_lows"]), start["resign_threshold"])})
    step("ladder", lambda: _ladder(settings, data, candidate if promoted["promoted"] else None, workers,
                                   dask_address, inference_device))


def _resign_threshold(settings: LoopSettings, data: Path, generation: int) -> float:
    """The threshold the previous generation calibrated, else the loop's initial one."""
    previous = loops.read_step(data, settings.loop, generation - 1, "calibrate")
    return float(previous["resign_threshold"]) if previous else settings.resign_threshold


def _selfplay(settings: LoopSettings, data: Path, generation: int, player: ModelRef, resign_threshold: float,
              workers: int | None, dask_address: str | None, device: str = "cpu") -> dict[str, Any]:
    """The champion's self-play games of this generation (subflow `selfplay`), nets on `device`."""
    run = selfplay.with_options(task_runner=task_runner(workers, dask_address))
    played = SelfPlaySettings(player.uri, settings.sims, size=settings.size, komi=settings.komi,
                              resign_threshold=resign_threshold, run=settings.loop, device=device,
                              **selfplay_search(settings))
    summary = run(played, settings.games, generation, str(data),
                  games_per_task=default_games_per_task(settings.games, workers, device), seed=settings.seed * 1_000 + generation)
    return {"games": summary.counts.games, "rows": summary.rows, "mean_length": round(summary.mean_length, 1),
            "counts": asdict(summary.counts), "winner_lows": list(summary.winner_lows),
            "resign_threshold": resign_threshold}


def _reanalyse(settings: LoopSettings, data: Path, generation: int, player: ModelRef, workers: int | None,
               dask_address: str | None, device: str = "cpu") -> dict[str, Any]:
    """The champion's new search of positions of earlier games (subflow `reanalyse`), nets on `device`."""
    never = ("full_search_prob", "fast_sims", "forced_playouts", "resign_disabled_fraction")  # no game is played
    full = {name: value for name, value in selfplay_search(settings).items() if name not in never}  # full, no noise
    searched = SelfPlaySettings(player.uri, settings.sims, size=settings.size, komi=settings.komi,
                                resign_threshold=None, run=settings.loop, device=device, **full)
    run = reanalyse.with_options(task_runner=task_runner(workers, dask_address))
    summary = run(searched, settings, generation, str(data))
    return {"positions": summary.expert + summary.selfplay, "rows": summary.rows, "expert": summary.expert,
            "selfplay": summary.selfplay, "generations": list(summary.generations), "tasks": summary.tasks,
            "tasks_skipped": summary.tasks_skipped}


def _gate(settings: LoopSettings, data: Path, generation: int, candidate: ModelRef, holder: ModelRef,
          workers: int | None, dask_address: str | None, device: str = "cpu") -> dict[str, Any]:
    """Candidate (A) against the champion (B), alternating colours, nets on `device`; the gate's verdict."""
    if settings.gate == "off":
        return {"passed": True, "rule": "off", "games": 0, "win_rate": None}
    run = evaluate.with_options(task_runner=task_runner(workers, dask_address))
    match = MatchSettings(candidate.uri, holder.uri, settings.gate_games, settings.sims,
                          MatchConfig(settings.size, settings.komi, seed=settings.seed * 1_000 + generation),
                          device=device)
    summary = run(match, f"{settings.loop}-gen{generation}-gate", str(data), gate=0.55,
                  sprt=GATE_SPRT if settings.gate == "sprt" else None, parallel=workers)
    return {"passed": bool(summary["gate_passed"]), "rule": summary["gate_rule"], "games": summary["games"],
            "win_rate": round(summary["a_winrate"], 4), "elo": summary["elo"], "sprt": summary["sprt"],
            "match": f"{settings.loop}-gen{generation}-gate"}


def _promote(settings: LoopSettings, data: Path, generation: int, candidate: ModelRef, gate: dict[str, Any],
             played: dict[str, Any], trained: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
    """Promote a candidate that passed, with the evidence as version tags; else keep the champion."""
    if not gate["passed"]:
        return {"promoted": False, "champion": start["champion"]["version"]}
    spent = loop_spend(loops.read_steps(data, settings.loop), generation)
    evidence = {"loop": settings.loop, "gate_games": gate["games"], **spent,
                "gate_win_rate": gate["win_rate"], "gate_rule": gate["rule"], "gate_elo": gate.get("elo"),
                "selfplay_games": played["games"], "window_rows": trained["window_rows"],
                "resign_threshold": start["resign_threshold"]}
    reason = "gate off" if gate["rule"] == "off" else f"won {gate['win_rate']:.1%} of {gate['games']} gate games"
    promote_candidate(candidate, reason, evidence, str(data))
    return {"promoted": True, "champion": candidate.version}


def _ladder(settings: LoopSettings, data: Path, promoted: ModelRef | None, workers: int | None,
            dask_address: str | None, device: str = "cpu") -> dict[str, Any]:
    """The new champion's ladder games and the refit ladder (gate games are rated too); its Elo."""
    if promoted is None or settings.ladder_opponents == 0:
        return {"played": False}
    run = ladder.with_options(task_runner=task_runner(workers, dask_address))
    rating = LadderSettings(size=settings.size, games_per_opponent=settings.ladder_games,
                            opponents=settings.ladder_opponents, sims=settings.sims, komi=settings.komi, device=device)
    table = run(rating, promoted.uri, str(data))
    mine = next((row for row in table.rows if row.player == promoted.label), None)  # tagged by the ladder
    return {"played": True, "matches": list(table.matches),
            "elo": None if mine is None else round(mine.elo, 1),
            "elo_stderr": None if mine is None or mine.stderr is None else round(mine.stderr, 1)}


def loop_summary(settings: LoopSettings, data: Path) -> LoopSummary:
    """The loop's generations from its records, and its champion now."""
    current = champion(settings, data)
    return LoopSummary(settings.loop, current.label if current else None,
                       tuple(generation_rows(loops.read_steps(data, settings.loop))))


def run_zero_loop(settings: LoopSettings, data_dir: str | None = None, workers: int | None = None,
                  dask_address: str | None = None, device: str = "auto", minutes: float | None = None,
                  inference_device: str = "cpu", cpu_hours: float | None = None) -> LoopSummary:
    """Run the flow under one Prefect API (a temporary server unless PREFECT_API_URL is set), its
    mapped tasks on a process pool of `workers` or the Dask scheduler at `dask_address`."""
    dask_address = dask_scheduler(dask_address) if dask_address else None  # a bad address fails now
    with prefect_api():
        return zero_loop(settings, data_dir, workers, dask_address, device, minutes=minutes,
                         inference_device=inference_device, cpu_hours=cpu_hours)
