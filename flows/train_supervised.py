"""Supervised training flow: an encoded dataset → an AlphaGo SL policy (and value) net → MLflow.

    config  = training_config(preset, steps, batch_size, device)   # gocore.nn.training presets
    policy  = train_model(dataset, "policy", preset, config)        # run, curves, registered version
    value   = train_model(dataset, "value", preset, config)         # with also_value=True
    artifact: run ids, model URIs and final metrics (Markdown)

The flow takes `SupervisedSettings` whole (what is trained: the Prefect form shows each field's doc)
beside where it runs (data dir, device) and its checkpoint key. `preset` names both the net size
(gocore.nn.nets) and the training schedule (gocore.nn.training). A rerun of the same call resumes
from the checkpoints of the earlier one (tasks/train.py). `gozero train` trains in-process through
the same `tasks.train.train_and_register` (the body of `train_model`), with the same `training_config`.
`run_train_supervised` runs the flow with one Prefect API (a temporary server if none is set).
"""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from flows.runtime import artifact_key, prefect_api
from storage import layout
from tasks.app.supervised_settings import SupervisedSettings
from tasks.train import TrainResult, families_to_train, train_model, training_config


@flow(name="train_supervised", log_prints=True)
def train_supervised(settings: SupervisedSettings, data_dir: str | None = None, device: str = "auto",
                     run_name: str | None = None) -> dict[str, TrainResult]:
    """Train `settings.family` (and a value net with `settings.also_value`) on a dataset; results by family.

    Args:
        settings: What is trained: the dataset, the net family and size, the schedule.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) with the dataset and registry.
        device: Where the nets train: auto (CUDA, then MPS, else the CPU), cpu, cuda, cuda:<i>, mps.
        run_name: The checkpoint key a rerun resumes (a value net's: <run_name>-value); default:
            derived from the dataset, family, preset and schedule.
    """
    data = layout.data_dir(data_dir)
    dataset, family, preset = settings.dataset, settings.family, settings.preset
    dataset_dir = str(layout.dataset_dir(data, dataset))
    config = training_config(preset, settings.steps, settings.batch_size, device)
    results = {}
    for name in families_to_train(family, settings.also_value):
        run = f"{run_name}-{name}" if run_name and name != family else run_name
        print(f"training a {name} net ({preset}, {config.steps} steps) on {dataset}")
        results[name] = train_model(dataset_dir, name, preset, config.to_dict(), str(data), run)
        print(f"{name}: run {results[name].run_id}, {results[name].model_uri}")
    create_markdown_artifact(results_markdown(dataset, results), key=artifact_key("train", dataset),
                             description=f"supervised training on {dataset}")
    return results


def results_markdown(dataset: str, results: dict[str, TrainResult]) -> str:
    """Run ids, model URIs and final metrics as a Markdown report."""
    lines = [f"# Supervised training on `{dataset}`", ""]
    for family, result in results.items():
        lines += [f"## {family} net", "", f"- MLflow run: `{result.run_id}`",
                  f"- model: `{result.model_uri}`",
                  f"- steps: {result.step} (resumed from {result.start_step}), device {result.device}",
                  "", "| metric | final value |", "|---|---|"]
        lines += [f"| {name} | {value:.4g} |" for name, value in sorted(result.metrics.items())]
        lines.append("")
    return "\n".join(lines)


def run_train_supervised(settings: SupervisedSettings, data_dir: str | None = None, device: str = "auto",
                         run_name: str | None = None) -> dict[str, TrainResult]:
    """Run the flow under one Prefect API (a temporary server unless PREFECT_API_URL is set)."""
    with prefect_api():
        return train_supervised(settings, data_dir, device, run_name)
