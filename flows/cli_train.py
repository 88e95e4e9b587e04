"""`gozero train --dataset NAME --model policy|value|dual`: supervised training with a progress bar.

By default the training task's function runs here, without a Prefect server (no 8-12 s start-up);
``--flow`` runs the `train_supervised` flow instead (visible in the Prefect UI). Either way the
bar is fed by polling the run's progress file (tasks/train.py writes it at every metrics report),
a rerun of the same command resumes from its checkpoints, and the end prints the MLflow run id and
the registered model URI. Errors a user can fix (missing dataset, unknown preset or model, no such
device) print one red line on stderr and exit 1. flows/cli.py mounts `train_command` as `train`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli_common import console, fail

MODELS = ("policy", "value", "dual")


def train_command(
    dataset: Annotated[str, typer.Option(help="dataset name: <data>/datasets/NAME (made by gozero ingest)")],
    model: Annotated[str, typer.Option(help="policy (SL policy), value or dual (AlphaGo Zero)")] = "policy",
    preset: Annotated[str, typer.Option(help="net size and schedule: tiny, small or full")] = "small",
    steps: Annotated[int | None, typer.Option(min=1, help="optimizer steps (default: the preset's)")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="rows per step (default: the preset's)")] = None,
    device: Annotated[str, typer.Option(help="auto (CUDA, then MPS, else CPU), cpu, cuda, cuda:<i>, mps")] = "auto",
    data_dir: Annotated[Path | None, typer.Option(help="data dir (default $GOZERO_DATA or ./gozero-data)")] = None,
    run_name: Annotated[str | None, typer.Option(help="checkpoint key, resumed on rerun (default: derived)")] = None,
    flow: Annotated[bool, typer.Option(help="run the Prefect flow train_supervised instead of in-process")] = False,
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (with --flow)")] = False,
) -> None:
    """Train a policy, value or dual net on a dataset; register it in MLflow and print its URI."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "CRITICAL")  # before Prefect loads
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    data = str(data_dir) if data_dir is not None else None
    key = _checked_run_key(dataset, model, preset, steps, batch_size, device, data, run_name)
    from flows.cli import shard_progress
    from tasks.train import read_progress

    with shard_progress(lambda: read_progress(data, key), f"training {model} net"):
        try:
            result = _run(dataset, model, preset, steps, batch_size, device, data, run_name, flow)
        except Exception as error:  # the task's error, whatever its type: one line, not a trace
            raise fail(f"{type(error).__name__}: {error}") from None
    _print_result(model, result)


def _checked_run_key(dataset: str, model: str, preset: str, steps: int | None, batch_size: int | None,
                     device: str, data: str | None, run_name: str | None) -> str:
    """The run key the task will use; typer.Exit(1) with one line for anything a user must fix."""
    from flows.train_supervised import families_to_train, training_config
    from gocore.nn.device import DeviceError, choose_device
    from gocore.nn.nets import PRESETS as NET_PRESETS
    from storage import layout
    from storage.datasets import DatasetError
    from tasks.train import dataset_facts, objective_config, run_key

    try:
        families_to_train(model, also_value=False)
        if preset not in NET_PRESETS:
            raise ValueError(f"unknown preset {preset!r}; presets: {', '.join(NET_PRESETS)}")
        config = objective_config(model, training_config(preset, steps, batch_size, device))
        choose_device(device)
        path = layout.dataset_dir(layout.data_dir(data), dataset)
        try:
            facts = dataset_facts(path)
        except DatasetError:
            raise ValueError(f"dataset {dataset!r} not found at {path} (no manifest.json); "
                             "make it with gozero ingest") from None
        return run_key(facts, model, preset, config, run_name)
    except (ValueError, DeviceError) as error:  # TrainError, LayoutError, NetConfigError are ValueErrors
        raise fail(str(error)) from None


def _run(dataset: str, model: str, preset: str, steps: int | None, batch_size: int | None, device: str,
         data: str | None, run_name: str | None, flow: bool) -> dict[str, Any]:
    """Train here (the task's function) or through the flow; the task's result dict."""
    from flows.train_supervised import run_train_supervised, training_config
    from storage import layout
    from tasks.train import train_and_register

    if flow:
        return run_train_supervised(dataset, model, preset, steps, batch_size, device, data, False, run_name)[model]
    path = layout.dataset_dir(layout.data_dir(data), dataset)
    return train_and_register(path, model, preset, training_config(preset, steps, batch_size, device), data, run_name)


def _print_result(model: str, result: dict[str, Any]) -> None:
    """Run id, model URI and the final metrics."""
    metrics = result["metrics"]
    shown = [f"{name} {metrics[name]:.4g}" for name in ("train/loss", "val/policy_top1", "val/value_mse")
             if name in metrics]
    resumed = f", resumed from step {result['start_step']}" if result.get("start_step") else ""
    console.print(f"trained a {model} net: {result['step']} steps on {result['device']}{resumed}"
                  + (f"; {', '.join(shown)}" if shown else ""))
    console.print(f"MLflow run: {result['run_id']}", soft_wrap=True)
    console.print(f"model: {result['model_uri']}", soft_wrap=True)
