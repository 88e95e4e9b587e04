"""`gozero train --dataset NAME --family policy|value|dual`: supervised training with a progress bar.

By default the net trains here, without a Prefect server (no 8-12 s start-up), through
`tasks.train.train_and_register`: the one function of training a net, which the
`train_supervised` flow's task (`train_model`) calls too, with the same `training_config`; this
command only turns its options into that function's arguments, and assembles no training of its
own. ``--flow`` runs the flow instead (visible in the Prefect UI). Either way the
bar is fed by polling the run's progress file (tasks/train.py writes it at every metrics report),
a rerun of the same command resumes from its checkpoints, and the end prints the MLflow run id and
the registered model URI. Errors a user can fix (missing dataset, unknown preset or family, no such
device) print one red line on stderr and exit 1. flows/cli/root.py mounts `train_command` as `train`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flows.cli.common import (
    DATA_DIR_HELP,
    THREADS_HELP,
    console,
    fail,
    quiet_prefect,
    shard_progress,
    use_threads,
    user_errors,
)
from flows.cli.fields import declared_fields, field_option

if TYPE_CHECKING:  # the real import waits for the command: `gozero --help` stays fast
    from tasks.train import TrainResult

SUPERVISED = declared_fields("tasks.app.supervised_settings", "SupervisedSettings")
"""The fields of the train_supervised flow's settings: the options below that set one take its doc and default."""


def train_command(
    dataset: Annotated[str | None, field_option(SUPERVISED, "dataset")] = None,
    selfplay: Annotated[str | None, typer.Option(help="self-play generations instead of a dataset: 3, 0..3 or 0,2")] = None,
    loop: Annotated[str | None, typer.Option(help="with --selfplay: the zero loop whose generations these are")] = None,
    family: Annotated[str, typer.Option(help=SUPERVISED["family"].doc)] = SUPERVISED["family"].default,
    preset: Annotated[str, typer.Option(help=SUPERVISED["preset"].doc)] = SUPERVISED["preset"].default,
    steps: Annotated[int | None, field_option(SUPERVISED, "steps", min=1)] = None,
    batch_size: Annotated[int | None, field_option(SUPERVISED, "batch_size", min=1)] = None,
    device: Annotated[str, typer.Option(help="auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i>, mps")] = "auto",
    init_from: Annotated[str | None, typer.Option(help="start from this model's weights (models:/..., a dir)")] = None,
    aux_heads: Annotated[bool, typer.Option(help="dual nets: KataGo's ownership and score heads, trained on the rows "
                                                 "that carry final counts (self-play, GNU Go's games)")] = False,
    set_: Annotated[list[str] | None, typer.Option("--set", help="change a training field: name=value, e.g. "
                                                                 "value_weight=0.25, lr=0.02, lr_schedule=cosine "
                                                                 "(gocore.nn.training.TrainConfig); repeatable")] = None,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    run_name: Annotated[str | None, typer.Option(help="checkpoint key, resumed on rerun (default: derived)")] = None,
    flow: Annotated[bool, typer.Option(help="run the Prefect flow train_supervised instead of in-process")] = False,
    threads: Annotated[int | None, typer.Option(min=1, help=THREADS_HELP)] = None,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (with --flow)")] = False,
) -> None:
    """Train a policy, value or dual net on a dataset or on self-play generations; register it in
    MLflow and print its URI."""
    quiet_prefect(verbose, data_dir)
    if (dataset is None) == (selfplay is None):
        raise fail("give --dataset NAME or --selfplay GENERATIONS (one of them)")
    if flow and (set_ or aux_heads or init_from):
        raise fail("--set, --aux-heads and --init-from train in-process: leave out --flow")
    if flow and selfplay is not None:
        raise fail("--flow trains datasets; self-play generations train in-process (or in gozero loop)")
    use_threads(threads)
    data = str(data_dir) if data_dir is not None else None
    if aux_heads and family != "dual":
        raise fail("--aux-heads needs --family dual (the heads sit beside a dual net's policy and value)")
    facts, config, key = _checked(dataset, selfplay, loop, family, preset, steps, batch_size, device, data, run_name,
                                  set_ or [])
    from tasks.train import read_progress, train_and_register

    _warn_if_long_on_cpu(config, device, preset)
    with shard_progress(lambda: read_progress(data, key), f"training {family} net"), user_errors():
        if flow:
            from flows.train_supervised import run_train_supervised
            from tasks.app.supervised_settings import SupervisedSettings

            settings = SupervisedSettings(dataset, family, preset, steps, batch_size)
            result = run_train_supervised(settings, data, device, run_name)[family]
        else:
            result = train_and_register(facts, family, preset, config, data, run_name, init_from, aux_heads=aux_heads)
    _print_result(family, result)


def parse_generations(text: str) -> list[int]:
    """``3`` → [3], ``0..3`` → [0, 1, 2, 3], ``0,2`` → [0, 2]; ValueError otherwise."""
    try:
        if ".." in text:
            first, last = (int(part) for part in text.split("..", 1))
            generations = list(range(first, last + 1))
        else:
            generations = [int(part) for part in text.split(",")]
    except ValueError:
        generations = []
    if not generations or min(generations) < 0:
        raise ValueError(f"--selfplay {text!r}: give generations like 3, 0..3 or 0,2")
    return generations


def _checked(dataset: str | None, selfplay: str | None, loop: str | None, family: str, preset: str,
             steps: int | None, batch_size: int | None, device: str, data: str | None, run_name: str | None,
             changes: list[str]):
    """(the data's facts, the TrainConfig, the run key); one red line for anything a user must fix."""
    from gocore.nn.device import choose_device
    from gocore.nn.nets import net_size
    from gocore.nn.training import TrainConfig
    from storage import layout
    from storage.datasets import DatasetError
    from tasks.app.overrides import dataclass_changes
    from tasks.train import dataset_facts, families_to_train, objective_config, run_key, selfplay_facts, training_config

    with user_errors():
        try:
            families_to_train(family, also_value=False)
            net_size(preset)  # an unknown preset: one line naming the known ones
            config = objective_config(family, training_config(preset, steps, batch_size, device))
            config = dataclasses.replace(config, **dataclass_changes(TrainConfig, changes))
            choose_device(device)
            root = layout.data_dir(data)
            if selfplay is not None:
                facts = selfplay_facts(root, parse_generations(selfplay), loop or "")
            else:
                path = layout.dataset_dir(root, dataset)
                try:
                    facts = dataset_facts(path)
                except DatasetError:
                    from flows.cli.datasets import dataset_manifests

                    known = [name for name, manifest in dataset_manifests(root) if manifest is not None]
                    raise ValueError(f"dataset {dataset!r} not found at {path} (no manifest.json); make it with "
                                     f"gozero ingest; datasets here: {', '.join(known) or 'none'}") from None
            return facts, config, run_key(facts, family, preset, config, run_name)
        except ValueError as error:  # a bad --selfplay, preset or dataset: one line too
            raise fail(str(error)) from None


def _print_result(family: str, result: TrainResult) -> None:
    """Run id, model URI and the final metrics."""
    metrics = result.metrics
    from tasks.train import KEY_METRIC_NAMES  # the names `gozero models list` shows them by

    shown = [f"{KEY_METRIC_NAMES.get(name, name)} {metrics[name]:.4f}"
             for name in ("train/loss", "val/policy_top1", "val/value_mse") if name in metrics]
    resumed = f", resumed from step {result.start_step}" if result.start_step else ""
    console.print(f"trained a {family} net: {result.step} steps on {result.device}{resumed}"
                  + (f"; {', '.join(shown)}" if shown else ""), soft_wrap=True)
    console.print(f"MLflow run: {result.run_id}", soft_wrap=True)
    console.print(f"model: {result.model_uri}", soft_wrap=True)


CPU_SAMPLES_WARNING = 1_000_000  # rows trained (steps x batch) on a CPU from which a run takes hours


def _warn_if_long_on_cpu(config: Any, device: str, preset: str) -> None:
    """A yellow line when a CPU run is sized for a GPU (small and full presets: 5M and 200M rows)."""
    from gocore.nn.device import choose_device

    samples = config.steps * config.batch_size
    if choose_device(device).type == "cpu" and samples >= CPU_SAMPLES_WARNING:
        console.print(f"[yellow]note: {config.steps:,} steps of {config.batch_size} rows ({samples:,} rows) on the CPU: "
                      f"the {preset} preset is sized for a GPU and this takes hours here; --steps N or --preset tiny "
                      "for minutes[/]", soft_wrap=True)
