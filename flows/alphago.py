"""The AlphaGo (2016) pipeline as a flow: each stage a task, recorded when it finishes, registered.

    sl       SL policy on the expert dataset (the supervised trainer)           gozero-<N>x<N>-policy
    rollout  the fast rollout policy on the same games                          gozero-<N>x<N>-rollout
    rl       REINFORCE from the SL policy against a pool of its own snapshots   gozero-<N>x<N>-rl
             (a snapshot registered every K iterations); champion if it scores >= 55 % against SL
    value    one position per game (SL moves, a random move at U, RL to the end), the value net on
             them; champion if its held-out MSE is below the constant predictor's  gozero-<N>x<N>-value
    eval     a round robin: AlphaGo's search at two simulation counts, SL, RL, the value net's
             greedy player, UCT, GNU Go; Elo from the shared ladder; MLflow run + Prefect artifact

Each stage writes a record (storage.loops, under <data>/loops/<name>/, "generation" 0) when it has
finished; a rerun skips recorded stages and resumes inside the first unfinished one (training
checkpoints, the RL checkpoint at the last snapshot, value batches on disk, match games on disk).
A stage asked for whose earlier stages have no record is refused with the stage to run first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.ingest import ingest
from flows.runtime import artifact_key, prefect_api, results_as_completed, task_runner
from gocore.errors import GozeroError
from gocore.nn.encode import EncodeOptions
from storage import datasets, layout, loops
from tasks.alphago import (
    check_value_net,
    play_value_batch,
    train_rollout_policy,
    train_sl_policy,
    train_value_net,
    value_batches,
)
from tasks.alphago_eval import (
    EvalTable,
    eval_players,
    evaluation_table,
    play_pair,
    publish_evaluation,
    round_robin,
    table_markdown,
)
from tasks.app.alphago_settings import RESUMABLE, STAGES, AlphaGoSettings
from tasks.app.models import ModelRef
from tasks.app.steps import Steps
from tasks.reinforce import check_rl_policy, train_rl_policy

STAGE = 0  # the "generation" of every stage record: the pipeline runs once
Devices = tuple[str, str]  # (training and the RL stage, the pool's games): `choose_device` names
NEEDS = {"sl": (), "rollout": (), "rl": ("sl",), "value": ("sl", "rl"), "eval": ("sl", "rl", "value")}


class AlphaGoError(GozeroError):
    """A pipeline that cannot run as asked (a stage before its prerequisites, a missing dataset)."""


@dataclass(frozen=True)
class AlphaGoSummary:
    """Where the pipeline stands: each finished stage's record, and the evaluation if it ran."""

    name: str
    stages: dict[str, dict[str, Any]]
    table: EvalTable | None


def parse_stages(text: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The stages of ``sl,rl,...`` in pipeline order; AlphaGoError naming an unknown one."""
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text) if s.strip()]
    if unknown := sorted(set(names) - set(STAGES)):
        raise AlphaGoError(f"unknown stage(s) {', '.join(unknown)}; stages: {','.join(STAGES)}")
    return tuple(s for s in STAGES if s in names)


@flow(name="alphago", log_prints=True)
def alphago(settings: AlphaGoSettings = AlphaGoSettings(), stages: tuple[str, ...] = STAGES,
            data_dir: str | None = None, device: str = "auto", sources: list[str] | None = None,
            inference_device: str = "cpu") -> AlphaGoSummary:
    """Run the asked stages of pipeline `settings.name` that have no record yet.

    Args:
        settings: What the pipeline is (a rerun must keep it) and its expert dataset.
        stages: Stages to run, in pipeline order: sl, rollout, rl, value, eval.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) of the datasets and registry.
        device: Training device: auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i> or mps; also
            the RL stage's (one process that plays its games and learns from them).
        sources: Expert games to ingest into settings.dataset first if it is not there yet (anything
            ingest takes: gnugo-9x9:level=1,games=1500 has GNU Go play itself, offline).
        inference_device: Where the pool's games run their nets (value data, the RL-vs-SL check,
            the round robin): cpu by default, since each worker process would hold its own CUDA context.
    """
    data = layout.data_dir(data_dir)
    stages = parse_stages(stages)
    if sources and not _has_dataset(settings, data):
        ingest(list(sources), settings.dataset, str(data), EncodeOptions(size=settings.size))
    with loops.lock(data, settings.name):
        loops.claim(data, settings.name, asdict(settings), RESUMABLE)
        for stage in stages:
            _run_stage(settings, stage, data, (device, inference_device))
    summary = alphago_summary(settings, data)
    create_table_artifact([{"stage": s, **{k: str(v) for k, v in r.items() if k not in ("generation", "step")}}
                           for s, r in summary.stages.items()], key=artifact_key("alphago", settings.name),
                          description=f"stages of AlphaGo pipeline {settings.name}")
    return summary


def _run_stage(settings: AlphaGoSettings, stage: str, data: Path, devices: Devices) -> dict[str, Any]:
    """The stage's record: read if it has one, else the stage is run and then recorded; `devices`:
    (training, inference in the pool)."""
    steps = Steps(data, settings.name, STAGE)
    current = lambda record: stage != "eval" or record.get("eval_settings") == _eval_settings(settings)
    if (done := steps.done(stage)) is not None and current(done):
        print(f"{stage}: done before ({headline(stage, done)})")
        return done
    missing = [need for need in NEEDS[stage] if steps.done(need) is None]
    if missing:
        raise AlphaGoError(f"stage {stage} needs stage {', '.join(missing)} of {settings.name} first "
                           f"(--stages {','.join([*missing, stage])})")
    print(f"{stage}: running")
    facts = steps.step(stage, lambda: STAGE_WORK[stage](settings, data, devices), current)
    print(f"{stage}: finished in {facts['seconds']:.0f} s ({headline(stage, facts)})")
    return facts


def _model(settings: AlphaGoSettings, data: Path, stage: str) -> ModelRef:
    """The model a finished stage registered (its record's)."""
    record = loops.read_step(data, settings.name, STAGE, stage)
    return ModelRef(**record["model"])


def _has_dataset(settings: AlphaGoSettings, data: Path) -> bool:
    try:
        _need_dataset(settings, data)
    except AlphaGoError:
        return False
    return True


def _need_dataset(settings: AlphaGoSettings, data: Path) -> None:
    directory = layout.dataset_dir(data, settings.dataset)
    try:
        datasets.read_manifest(directory)
    except GozeroError as error:
        raise AlphaGoError(f"no dataset {settings.dataset!r} in {data / 'datasets'} ({error}); ingest one "
                           f"with gozero ingest --source SOURCE --dataset {settings.dataset}") from error


def _sl(settings: AlphaGoSettings, data: Path, devices: Devices) -> dict[str, Any]:
    _need_dataset(settings, data)
    return train_sl_policy(settings, str(data), devices[0])


def _rollout(settings: AlphaGoSettings, data: Path, devices: Devices) -> dict[str, Any]:
    _need_dataset(settings, data)
    return train_rollout_policy(settings, str(data), devices[0])


def _rl(settings: AlphaGoSettings, data: Path, devices: Devices) -> dict[str, Any]:
    sl = _model(settings, data, "sl")
    trained = train_rl_policy(settings, sl, str(data), devices[0])
    check = check_rl_policy(settings, ModelRef(**trained["model"]), sl, str(data), devices[1])
    return {**trained, "check": check}


def _value(settings: AlphaGoSettings, data: Path, devices: Devices) -> dict[str, Any]:
    sl, rl = _model(settings, data, "sl"), _model(settings, data, "rl")
    batches = value_batches(settings)
    futures = play_value_batch.map(batches, unmapped(settings), unmapped(sl.uri), unmapped(rl.uri), unmapped(str(data)),
                                   unmapped(devices[1]))
    played = list(results_as_completed(futures))
    trained = train_value_net(settings, str(data), devices[0])
    check = check_value_net(settings, ModelRef(**trained["model"]), str(data))
    return {**trained, "value_rows": sum(b["rows"] for b in played), "batches": len(batches), "check": check}


def _eval(settings: AlphaGoSettings, data: Path, devices: Devices) -> dict[str, Any]:
    from tasks.app.players import has_gnugo

    nets = {"policy": _model(settings, data, "sl"), "rl": _model(settings, data, "rl"),
            "value": _model(settings, data, "value")}
    rollout = loops.read_step(data, settings.name, STAGE, "rollout")
    if rollout and rollout.get("champion"):  # the search rolls out with it; else uniformly at random
        nets["rollout"] = ModelRef(**rollout["model"])
    players = eval_players(settings, nets, has_gnugo())
    pairs = round_robin(settings, players, data, devices[1])
    print(f"eval: {len(players)} players, {len(pairs)} matches of {settings.eval_games} games")
    futures = play_pair.map([match for match, _ in pairs], [s for _, s in pairs])
    summaries = list(results_as_completed(futures))
    table = evaluation_table(settings, players, pairs, summaries, data)
    run_id = publish_evaluation(settings, table, str(data))
    create_markdown_artifact(f"# AlphaGo round robin `{settings.name}`\n\n" + table_markdown(table),
                             key=artifact_key("alphago-eval", settings.name),
                             description=f"round robin of AlphaGo pipeline {settings.name}")
    return {"eval_settings": _eval_settings(settings), "mlflow_run": run_id,
            "pairs": [asdict(r) for r in table.pairs], "players": [asdict(r) for r in table.players]}


def _eval_settings(settings: AlphaGoSettings) -> dict[str, Any]:
    return {name: list(value) if isinstance(value, tuple) else value
            for name, value in asdict(settings).items() if name in RESUMABLE}


STAGE_WORK: dict[str, Callable[[AlphaGoSettings, Path, Devices], dict[str, Any]]] = {
    "sl": _sl, "rollout": _rollout, "rl": _rl, "value": _value, "eval": _eval}


def headline(stage: str, facts: dict[str, Any]) -> str:
    """One line about a finished stage for the progress output."""
    model = facts.get("model")
    where = f"{model['name']}/{model['version']}" if model else ""
    check = facts.get("check")
    if stage == "rl" and check:
        return f"{where}, scores {check['win_rate']:.0%} of {check['games']} against SL"
    if stage == "value" and check:
        return f"{where}, held-out MSE {check['mse']:.3f} vs constant {check['constant_mse']:.3f}"
    if stage == "eval":
        return f"{len(facts.get('pairs', []))} matches, MLflow run {facts.get('mlflow_run')}"
    if stage == "sl" and facts.get("val_policy_top1") is not None:
        return f"{where}, validation top-1 {facts['val_policy_top1']:.1%}"
    if stage == "rollout" and facts.get("val_move_top1") is not None:
        return f"{where}, held-out top-1 {facts['val_move_top1']:.1%} (uniform {facts.get('uniform_top1', 0.0):.1%})"
    return where


def alphago_summary(settings: AlphaGoSettings, data: Path) -> AlphaGoSummary:
    """The pipeline's finished stages from their records, and its evaluation table if it ran."""
    records = {r["step"]: r for r in loops.read_steps(data, settings.name) if r.get("generation") == STAGE}
    stages = {stage: records[stage] for stage in STAGES if stage in records}
    table = None
    if "eval" in stages:
        from tasks.alphago_eval import PairRow, PlayerRow

        table = EvalTable(tuple(PairRow(**r) for r in stages["eval"]["pairs"]),
                          tuple(PlayerRow(**r) for r in stages["eval"]["players"]))
    return AlphaGoSummary(settings.name, stages, table)


def run_alphago(settings: AlphaGoSettings, stages: tuple[str, ...] = STAGES, data_dir: str | None = None,
                workers: int | None = None, dask_address: str | None = None, device: str = "auto",
                inference_device: str = "cpu") -> AlphaGoSummary:
    """Run the flow under one Prefect API, value batches and matches on a process pool of `workers`
    (default: cores) or a Dask cluster."""
    runner = task_runner(workers, dask_address)  # a bad Dask address fails now, before any server starts
    with prefect_api():
        return alphago.with_options(task_runner=runner)(settings, stages, data_dir, device,
                                                         inference_device=inference_device)
