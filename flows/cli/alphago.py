"""`gozero alphago`: the AlphaGo (2016) pipeline (flows/alphago.py) with a live table of its stages.

The expert games come from `--source` (anything `gozero ingest` takes), ingested once into the
dataset `--dataset`; a rerun of the same command skips the ingest and every finished stage. The
table is redrawn twice a second from the stage records and training progress files on disk.
flows/cli/root.py mounts the command.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.live import Live
from rich.table import Table

from flows.cli.common import (
    DATA_DIR_HELP,
    PIPELINE_DEVICE_HELP,
    SIZE_HELP,
    console,
    fail,
    pipeline_devices,
    quiet_prefect,
    user_errors,
)
from flows.cli.fields import declared_fields, settings_epilog

if TYPE_CHECKING:
    from tasks.app.alphago_settings import AlphaGoSettings

OPTIONS = ("size", "preset", "sl_steps", "rollout_steps", "games_per_iteration", "iterations", "snapshot_every",
           "value_games", "value_steps", "value_heldout_games", "check_games", "eval_games", "key_games", "eval_sims",
           "uct_sims", "gnugo_levels", "dataset", "name")
"""The AlphaGoSettings fields `gozero alphago` has an option for; every other one is reachable with --set."""
TRAINED = {"sl": "policy", "rollout": "rollout", "value": "value"}  # stage -> the run key's family


def alphago(
    source: Annotated[list[str] | None, typer.Option(help="expert games to ingest first (as gozero ingest "
                                                      "takes them); not needed once the dataset exists")] = None,
    size: Annotated[int | None, typer.Option(min=5, max=19, help=SIZE_HELP)] = None,
    stages: Annotated[str, typer.Option(help="stages to run, in order: sl,rollout,rl,value,eval")] = "sl,rollout,rl,value,eval",
    preset: Annotated[str, typer.Option(help="tiny, small or full (the paper's counts and nets): nets and every "
                                             "count below")] = "small",
    net: Annotated[str | None, typer.Option(help="net size of the policy, RL and value nets instead of the "
                                                 "preset's: tiny, small, full, alphago (the paper's 13 layers "
                                                 "of 192) or b<layers>c<filters>")] = None,
    encoder: Annotated[str, typer.Option(help="input planes of the dataset --source is ingested into: alphago48 "
                                              "(the paper's 48; the value net adds the colour to play) or agz17, "
                                              "tactical")] = "alphago48",
    sl_steps: Annotated[int | None, typer.Option(min=1, help="SL policy: training steps")] = None,
    rollout_steps: Annotated[int | None, typer.Option(min=1, help="rollout policy: training steps")] = None,
    games_per_iteration: Annotated[int | None, typer.Option(min=1, help="RL: games per REINFORCE minibatch (n)")] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="RL: REINFORCE minibatches")] = None,
    snapshot_every: Annotated[int | None, typer.Option(min=1, help="RL: register a snapshot and add it to "
                                                      "the opponent pool every K iterations")] = None,
    value_games: Annotated[int | None, typer.Option(min=1, help="value: games (one position each)")] = None,
    value_steps: Annotated[int | None, typer.Option(min=1, help="value net: training steps")] = None,
    value_heldout_games: Annotated[int | None, typer.Option(min=1, help="value: held-out games of its check")] = None,
    check_games: Annotated[int | None, typer.Option(min=2, help="RL: games of its check against SL")] = None,
    eval_games: Annotated[int | None, typer.Option(min=2, help="eval: games per pair of the round robin")] = None,
    key_games: Annotated[int | None, typer.Option(min=2, help="eval: games of AlphaGo vs SL and vs UCT (default: eval games)")] = None,
    eval_sims: Annotated[str | None, typer.Option(help="eval: AlphaGo's simulation counts, e.g. 10,100")] = None,
    uct_sims: Annotated[int | None, typer.Option(min=1, help="eval: simulations of the UCT player")] = None,
    gnugo_levels: Annotated[str | None, typer.Option(help="eval: GNU Go levels, e.g. 1,5 ('' for none)")] = None,
    dataset: Annotated[str | None, typer.Option(help="dataset name (default: expert-<N>x<N>)")] = None,
    name: Annotated[str | None, typer.Option(help="pipeline name (default alphago-<N>x<N>)")] = None,
    set_: Annotated[list[str] | None, typer.Option("--set", help="any setting as NAME=VALUE (listed above); "
                                                                 "repeatable")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="processes for value data and matches (default: cores)")] = None,
    dask_address: Annotated[str | None, typer.Option(help="run the ingest's encoding, the value data games and "
                                                     "the evaluation matches on this Dask scheduler")] = None,
    device: Annotated[str | None, typer.Option(help=PIPELINE_DEVICE_HELP + "; the RL stage plays and learns "
                                                   "in one process, on the training device")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs")] = False,
) -> None:
    """Run the AlphaGo pipeline: SL policy, rollout policy, RL policy, value net, evaluation."""
    quiet_prefect(verbose, data_dir)
    from flows.alphago import parse_stages
    from storage import layout
    from tasks.app.sizes import resolve_size

    data = layout.data_dir(data_dir)
    devices = pipeline_devices(device)
    with user_errors():  # the sources and an existing --dataset name the size
        size = resolve_size(size, *(source or ()), datasets=[layout.dataset_dir(data, dataset)] if dataset else [])
        chosen = parse_stages(stages)
        if dask_address:  # a bad address fails now, before any server starts
            from flows.runtime import dask_scheduler

            dask_address = dask_scheduler(dask_address)
    settings = _settings(preset, size, dataset or f"expert-{size}x{size}", name or f"alphago-{size}x{size}",
                         {"preset": net, "sl_steps": sl_steps, "rollout_steps": rollout_steps, "value_steps": value_steps,
                          "value_heldout_games": value_heldout_games, "check_games": check_games,
                          "games_per_iteration": games_per_iteration, "iterations": iterations,
                          "snapshot_every": snapshot_every, "value_games": value_games, "eval_games": eval_games,
                          "key_games": key_games,
                          "eval_sims": _numbers(eval_sims), "uct_sims": uct_sims,
                          "gnugo_levels": _numbers(gnugo_levels)}, set_ or [])
    from flows.runtime import prefect_api

    with prefect_api():
        if source:
            _ingest(source, settings, encoder, data, workers, dask_address)
        summary = _run_live(settings, chosen, data, workers, dask_address, devices)
    if summary.table is not None:
        from tasks.alphago_eval import table_markdown

        console.print()
        console.print(table_markdown(summary.table), highlight=False)


def _numbers(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise fail(f"{text!r} is not a comma-separated list of numbers") from None


alphago.__doc__ += "\n\n" + settings_epilog(declared_fields("tasks.app.alphago_settings", "AlphaGoSettings"), set(OPTIONS))


def _settings(preset: str, size: int, dataset: str, name: str, changes: dict, items: list[str]) -> AlphaGoSettings:
    """The preset's settings with the options given, then the --set items."""
    from tasks.app.alphago_settings import PRESETS, AlphaGoSettings
    from tasks.app.overrides import dataclass_changes

    if preset not in PRESETS:
        raise fail(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    try:
        return dataclasses.replace(PRESETS[preset], size=size, dataset=dataset, name=name,
                                   **{k: v for k, v in changes.items() if v is not None},
                                   **dataclass_changes(AlphaGoSettings, items))
    except ValueError as error:
        raise fail(str(error)) from None


def _ingest(source: list[str], settings: AlphaGoSettings, encoder: str, data: Path, workers: int | None,
            dask_address: str | None) -> None:
    """Ingest the expert games into the dataset, read by `encoder`, unless it is already complete."""
    from flows.ingest import run_ingest
    from gocore.nn.encode import EncodeOptions
    from storage import datasets, layout

    directory = layout.dataset_dir(data, settings.dataset)
    try:
        datasets.read_manifest(directory)
        console.print(f"dataset {settings.dataset}: already ingested ({directory}; its encoder is kept)")
        return
    except datasets.DatasetError:
        pass
    console.print(f"ingesting {', '.join(source)} into dataset {settings.dataset} ({encoder} planes)")
    with user_errors():
        options = EncodeOptions(size=settings.size, encoder=encoder)  # an unknown encoder fails here
        run_ingest(source, settings.dataset, str(data), options, workers=workers,
                   dask_address=dask_address)


def _run_live(settings: AlphaGoSettings, stages: tuple[str, ...], data: Path, workers: int | None,
              dask_address: str | None, devices: tuple[str, str]):
    """The flow (training and the RL stage on `devices[0]`, the pool's games on `devices[1]`), with
    the table of stages redrawn from the records on disk."""
    from flows.alphago import run_alphago

    console.print(f"AlphaGo pipeline [bold]{settings.name}[/]: stages {','.join(stages)}, {settings.preset} "
                  f"nets, dataset {settings.dataset} -> {data}", soft_wrap=True)
    stop = threading.Event()
    if not console.is_terminal:  # a pipe or a log: a plain line per finished stage, ending with a newline
        return _run_plain(settings, stages, data, lambda: run_alphago(settings, stages, str(data), workers,
                                                                       dask_address, *devices))
    with Live(stages_table(settings, stages, data), console=console, auto_refresh=False) as live:
        def poll() -> None:
            while not stop.wait(0.5):
                live.update(stages_table(settings, stages, data), refresh=True)

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        try:
            with user_errors():
                return run_alphago(settings, stages, str(data), workers, dask_address, *devices)
        finally:
            stop.set()
            thread.join()
            live.update(stages_table(settings, stages, data), refresh=True)


def _run_plain(settings: AlphaGoSettings, stages: tuple[str, ...], data: Path, run):
    """`run()` while a thread prints "stage sl done: <headline> (<s> s)" for each stage that finishes."""
    from flows.alphago import STAGE, headline
    from storage import loops

    seen = {stage for stage in stages if loops.read_step(data, settings.name, STAGE, stage) is not None}
    stop = threading.Event()

    def report() -> None:
        for stage in stages:
            record = loops.read_step(data, settings.name, STAGE, stage)
            if record is not None and stage not in seen:
                seen.add(stage)
                console.print(f"stage {stage} done: {headline(stage, record)} ({record.get('seconds', 0):.0f} s)",
                              soft_wrap=True, highlight=False, markup=False)

    def poll() -> None:
        while not stop.wait(0.5):
            report()

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        with user_errors():
            return run()
    finally:
        stop.set()
        thread.join()
        report()


def stages_table(settings: AlphaGoSettings, stages: tuple[str, ...], data: Path) -> Table:
    """One row per asked stage: done (with its headline), running (with training progress), or waiting."""
    from flows.alphago import STAGE, headline
    from storage import loops
    from tasks.train import read_progress

    table = Table(title=f"AlphaGo pipeline {settings.name}")
    for column in ("stage", "status", "result", "s"):
        table.add_column(column, justify="right" if column == "s" else "left")
    running = True
    for stage in stages:
        record = loops.read_step(data, settings.name, STAGE, stage)
        if record is not None:
            table.add_row(stage, "[green]done[/]", headline(stage, record), f"{record.get('seconds', 0):.0f}")
            continue
        detail = ""
        if running and stage in TRAINED:
            done, total = read_progress(data, f"{settings.name}-{TRAINED[stage]}")
            detail = f"training step {done}/{total}" if total else ""
        table.add_row(stage, "running" if running else "waiting", detail, "")
        running = False
    return table
