"""The AlphaGo Zero loop for Baghchal, and Baghchal matches, as flows.

    champion = initial_champion()          # generation 0: a random net, promoted "initial"
    for k in 1 .. generations:
        start      pin this generation's champion
        selfplay   the champion plays `games` games (mapped tasks: a Parquet shard of rows in all
                   8 symmetries and the records in the library's notation each)
        train      a candidate from the champion's weights on the last generations' rows
        gate       candidate vs champion, sides alternating (draws half): `gate_threshold` to pass,
                   or a draw-aware SPRT that stops once decided (`gate="sprt"`)
        promote    move `champion` of the model `baghchal` in MLflow, with the evidence as tags
        ladder     a new champion's games against random and the library's engine; the Elo of
                   every Baghchal player (its own ladder); a PNG of a gate game's final position

Each step writes its record (storage.loops, `tasks.app.steps.Steps`) when it has finished: a
rerun, after a crash or a SIGKILL, continues at the first unfinished step, and inside it at the
first unplayed self-play batch or match chunk, or the training checkpoint. The loop's lock
refuses a second process on the same loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, unmapped

from flows.loop_driver import LoopKind, drive
from flows.runtime import StoppingProcessPool, prefect_api, results_as_completed, task_runner
from gocore.play.ratings import SprtConfig, sprt_of_scores
from storage import baghchal as files
from storage import layout, loops, registry
from tasks.app.baghchal_settings import ADDED_LATER, BAGHCHAL_RESUMABLE, BaghchalLoopSettings, BaghchalMatchSettings
from tasks.app.loop_view import is_cpu_spent, loop_spend
from tasks.app.models import ModelRef
from tasks.app.steps import Steps
from tasks.baghchal import batch_seed, champion, initial_champion, selfplay_batch, train_candidate
from tasks.baghchal_match import (
    fit_ladder_here,
    match_chunks,
    match_summary,
    picture_of_record,
    play_match_chunk,
    start_match,
)
from tasks.promotion import promote

GATE_SPRT = SprtConfig()  # H0 no gain, H1 +35 Elo (a 55 % score), alpha = beta = 0.05
GATE_WAVE_CHUNKS = 4  # a sprt gate decides after every 4 chunks of 4 games (16 games)
STEPS = ("start", "selfplay", "train", "gate", "promote", "ladder")
BAGHCHAL_LOOP = LoopKind("baghchal", STEPS, BAGHCHAL_RESUMABLE, dataclasses.asdict, initial_champion, ADDED_LATER)


@flow(name="baghchal-loop", log_prints=True, task_runner=StoppingProcessPool())
def baghchal_loop(settings: BaghchalLoopSettings = BaghchalLoopSettings(), data_dir: str | None = None,
                  device: str = "auto", inference_device: str = "cpu",
                  more_generations: int | None = None) -> dict[str, Any]:
    """Run the Baghchal loop `settings.loop` up to `settings.generations` generations (resuming where it stopped).

    Args:
        settings: What the loop is (a rerun must keep all but `generations`) and how far it goes.
        data_dir: The data dir (default: $GOZERO_DATA, else the per-user one) of the loop and registry.
        device: Training device: auto (CUDA, then MPS, else CPU), cpu, cuda or mps.
        inference_device: Where self-play and gate games run the nets (cpu by default).
        more_generations: Play this many generations beyond the last finished one (a scheduled run
            advances the loop) instead of settings.generations.
    """
    data = layout.data_dir(data_dir)
    settings = drive(BAGHCHAL_LOOP, settings, data,
                     lambda settings, generation: run_generation(settings, data, generation, device, inference_device),
                     lambda settings, generation: stop_reason(settings, data, generation), more_generations)
    return loop_summary(settings, data)


def stop_reason(settings: BaghchalLoopSettings, data: Path, generation: int) -> str | None:
    """Why generation `generation` may not start: the loop has a budget, the generation no step
    yet, and its learning (every step but the ladder's) has spent the budget's CPU hours."""
    if settings.budget_cpu_hours is None or not is_cpu_spent(loops.read_steps(data, settings.loop), generation,
                                                             settings.budget_cpu_hours):
        return None
    return f"{learning_cpu_hours(data, settings.loop):.2f} of {settings.budget_cpu_hours:g} CPU hours spent"


def learning_cpu_hours(data: Path, loop: str) -> float:
    """CPU hours the loop's finished learning steps have recorded (every attempt of each)."""
    return loop_spend(loops.read_steps(data, loop), 1 << 30).get("loop_cpu_minutes", 0.0) / 60


def run_generation(settings: BaghchalLoopSettings, data: Path, generation: int, device: str,
                   inference_device: str) -> None:
    """Every step of one generation that has no record yet."""
    step = Steps(data, settings.loop, generation).step
    start = step("start", lambda: {"champion": dataclasses.asdict(champion(settings, data))})
    pinned = ModelRef(**start["champion"])
    played = step("selfplay", lambda: _selfplay(settings, data, generation, pinned, inference_device))
    trained = step("train", lambda: train_candidate(settings, generation, pinned, str(data), device))
    candidate = ModelRef(pinned.name, int(trained["candidate"]))
    gate = step("gate", lambda: _gate(settings, data, generation, candidate, pinned, inference_device))
    promoted = step("promote", lambda: _promote(settings, data, generation, candidate, gate, played, trained))
    step("ladder", lambda: _ladder(settings, data, generation, candidate if promoted["promoted"] else None,
                                   inference_device))
    print(f"loop {settings.loop} generation {generation}: self-play {played['games']} games "
          f"(Goat {played['goat_wins']}, Tiger {played['tiger_wins']}, draws {played['draws']}), "
          f"gate {gate['score']}, {'promoted' if promoted['promoted'] else 'kept'} {promoted['champion']}")


def _selfplay(settings: BaghchalLoopSettings, data: Path, generation: int, player: ModelRef,
              device: str) -> dict[str, Any]:
    """The champion's self-play games of this generation, a task per batch."""
    files.clean_partial(data, settings.loop, generation)  # a killed run's temp files, before any batch writes
    batches = [(batch_seed(settings, generation, index), count)
               for index, (_, count) in enumerate(match_chunks(settings.games, settings.games_per_task))]
    futures = selfplay_batch.map(unmapped(settings), unmapped(player.uri), unmapped(generation),
                                 [seed for seed, _ in batches], [count for _, count in batches],
                                 unmapped(str(data)), unmapped(device))
    sidecars = list(results_as_completed(futures))
    totals = {key: sum(int(s.get(key, 0)) for s in sidecars)
              for key in ("games", "positions", "rows", "goat_wins", "tiger_wins", "draws")}
    reasons = {key: sum(int(s.get(key, 0)) for s in sidecars) for key in {k for s in sidecars for k in s
                                                                           if k.startswith("ended_")}}
    return {**totals, **reasons, "mean_length": round(totals["positions"] / max(totals["games"], 1), 1)}


def play_match(settings: BaghchalMatchSettings, match_id: str, data: Path, per_chunk: int = 4,
               wave: int | None = None, is_decided: Callable[[list[dict[str, Any]]], bool] | None = None,
               ) -> list[dict[str, Any]]:
    """The games of a match, its chunks as mapped tasks (finished chunks are read back); with `wave`,
    `wave` chunks at a time, stopping once `is_decided(rows so far)` (a rerun replays the same waves)."""
    start_match(settings, match_id, data)
    chunks = match_chunks(settings.games, per_chunk)
    step = wave or len(chunks)
    rows: list[dict[str, Any]] = []
    for start in range(0, len(chunks), step):
        part = chunks[start:start + step]
        futures = play_match_chunk.map(unmapped(settings), unmapped(match_id), [first for first, _ in part],
                                       [count for _, count in part], unmapped(str(data)))
        rows = sorted(rows + [row for found in results_as_completed(futures) for row in found],
                      key=lambda row: row["game"])
        if is_decided is not None and is_decided(rows):
            break
    return rows


def _match_settings(settings: BaghchalLoopSettings, a: str, b: str, games: int, seed: int,
                    device: str) -> BaghchalMatchSettings:
    return BaghchalMatchSettings(a, b, games, settings.sims, opening=2, seed=seed,
                                 captures_to_win=settings.captures_to_win, repetition=settings.repetition,
                                 max_plies=settings.max_plies, device=device)


def _gate(settings: BaghchalLoopSettings, data: Path, generation: int, candidate: ModelRef, holder: ModelRef,
          device: str) -> dict[str, Any]:
    """Candidate (A) against the champion (B): whether it scored `gate_threshold` (fixed), or what the
    draw-aware SPRT decided, in waves of 16 games (sprt; the threshold if undecided after all games)."""
    if settings.gate == "off" or settings.gate_games == 0:
        return {"passed": True, "rule": "off", "games": 0, "score": None}
    match_id = f"{settings.loop}-gen{generation}-gate"
    match = _match_settings(settings, candidate.uri, holder.uri, settings.gate_games,
                            settings.seed * 1_000 + generation, device)
    decide = lambda played: sprt_of_scores([row["a_score"] for row in played], GATE_SPRT)
    if settings.gate == "sprt":
        rows = play_match(match, match_id, data, wave=GATE_WAVE_CHUNKS, is_decided=lambda played: decide(played) != "continue")
        decision = decide(rows)
    else:
        rows, decision = play_match(match, match_id, data), "continue"
    summary = match_summary(rows)
    picture = picture_of_record(rows[0]["record"], match.rules(), data, match_id,
                                f"{match_id} game 0: {rows[0]['goat']} (Goat) vs {rows[0]['tiger']} (Tiger), "
                                f"{rows[0]['reason']}")
    threshold = f"score >= {settings.gate_threshold}"
    sprt_name = f"sprt [{GATE_SPRT.elo0:g}, {GATE_SPRT.elo1:g}]"
    if decision == "continue":  # fixed, or an sprt gate undecided after all its games
        passed = summary["a_score"] >= settings.gate_threshold
        rule = f"{sprt_name} undecided: {threshold}" if settings.gate == "sprt" else threshold
    else:
        passed, rule = decision == "accept", f"{sprt_name}: {decision}"
    return {"passed": passed, "rule": rule,
            "games": summary["games"], "score": summary["a_score"], "sides": summary["sides"],
            "match": match_id, "picture": str(picture)}


def _promote(settings: BaghchalLoopSettings, data: Path, generation: int, candidate: ModelRef,
             gate: dict[str, Any], played: dict[str, Any], trained: dict[str, Any]) -> dict[str, Any]:
    """Promote a candidate that passed, with the evidence as tags; else keep the champion."""
    if not gate["passed"]:
        return {"promoted": False, "champion": champion(settings, data).version}
    evidence = {"loop": settings.loop, "gate_games": gate["games"], "gate_score": gate["score"],
                "selfplay_games": played["games"], "window_rows": trained["window_rows"]}
    reason = "gate off" if gate["rule"] == "off" else f"scored {gate['score']:.1%} of {gate['games']} gate games ({gate['rule']})"
    promote(candidate.name, candidate.version, reason, evidence, data)
    return {"promoted": True, "champion": candidate.version}


def _ladder(settings: BaghchalLoopSettings, data: Path, generation: int, promoted: ModelRef | None,
            device: str) -> dict[str, Any]:
    """The new champion's games against random and the library's engine, then every player's Elo."""
    if promoted is None or settings.ladder_games == 0:
        return {"played": False}
    anchors = ["random"] + ([f"library:{settings.ladder_depth}"] if settings.ladder_depth else [])
    scores = {}
    for anchor in anchors:
        match_id = f"{settings.loop}-gen{generation}-vs-{anchor.replace(':', '-d')}"
        match = _match_settings(settings, promoted.uri, anchor, settings.ladder_games,
                                settings.seed * 1_000 + generation, device)
        scores[anchor] = match_summary(play_match(match, match_id, data))["a_score"]
    table = fit_ladder_here(data)
    mine = next((row for row in table if row["player"] == promoted.label), None)
    if mine is not None:
        registry.tag_version(promoted.name, promoted.version, {"elo": mine["elo"], "elo_stderr": mine["stderr"]}, data)
    return {"played": True, "scores": scores, "elo": None if mine is None else mine["elo"],
            "elo_stderr": None if mine is None else mine["stderr"]}


def loop_summary(settings: BaghchalLoopSettings, data: Path) -> dict[str, Any]:
    """The loop's champion and its generations' records, by generation."""
    current = champion(settings, data)
    generations: dict[int, dict[str, Any]] = {}
    for record in loops.read_steps(data, settings.loop):
        generations.setdefault(int(record["generation"]), {})[record["step"]] = record
    return {"loop": settings.loop, "champion": current.label if current else None,
            "generations": [generations[g] for g in sorted(generations)],
            "ladder": files.read_ladder(data) or []}


def run_baghchal_loop(settings: BaghchalLoopSettings, data_dir: str | None = None, workers: int | None = None,
                      device: str = "auto") -> dict[str, Any]:
    """Run the flow under one Prefect API (a temporary server unless PREFECT_API_URL is set), its
    mapped tasks on a process pool of `workers`."""
    with prefect_api():
        return baghchal_loop.with_options(task_runner=task_runner(workers))(settings, data_dir, device)
