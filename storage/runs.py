"""MLflow training runs: start and end, params, metrics, the curves PNG, model artifacts, summaries.

    experiment  gozero-<N>x<N>            one per board size; a training task is one run
                baghchal                  Baghchal's (a game other than Go has one, named after it)
    run         params: the flattened config, dataset, code_version; tags: board_size, dataset,
                code_version; artifacts: config.json, model/ (a storage.checkpoints model dir),
                plots/curves.png (a "ladder" run: storage.ratings.log_ladder, plots/ladder.png)

Registering a run's model/ as a model version is storage.registry's part.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunStatus
from mlflow.exceptions import MlflowException

from storage.atomic import atomic_path
from storage.mlflow_store import artifact_root, client, code_version, mlflow_errors, tracking_uri
from storage.registry_records import RunSummary

MODEL_ARTIFACT = "model"
CONFIG_ARTIFACT = "config.json"
CURVES_ARTIFACT = "plots/curves.png"
_PARAMS_PER_CALL, _PARAM_MAX = 100, 6000  # MLflow's limits


def experiment_name(board_size: int, game: str = "go") -> str:
    """The experiment of every training run on this board size, e.g. ``gozero-9x9``; a game other
    than Go has one experiment, named after it (``baghchal``)."""
    return f"gozero-{int(board_size)}x{int(board_size)}" if game == "go" else game


@mlflow_errors
def start_run(board_size: int, config: Mapping[str, Any], *, dataset: str | None = None,
              run_name: str | None = None, data: Path | None = None, game: str = "go") -> str:
    """Start a run in the board size's (or the game's) experiment, logging the config as params and JSON; its id."""
    store = client(data)
    facts = {"code_version": code_version(), **({"dataset": dataset} if dataset is not None else {})}
    run = store.create_run(_experiment_id(store, experiment_name(board_size, game), data), run_name=run_name,
                            tags={"board_size": str(board_size), **facts})
    params = [Param(k, v) for k, v in {**flatten_config(config), **facts}.items()]
    for start in range(0, len(params), _PARAMS_PER_CALL):
        store.log_batch(run.info.run_id, params=params[start:start + _PARAMS_PER_CALL])
    with tempfile.TemporaryDirectory(prefix="gozero-run-") as temp:
        (Path(temp) / CONFIG_ARTIFACT).write_text(_json(config, indent=2))
        store.log_artifact(run.info.run_id, str(Path(temp) / CONFIG_ARTIFACT))
    return run.info.run_id


@mlflow_errors
def end_run(run_id: str, status: str = "FINISHED", data: Path | None = None) -> None:
    """Mark the run FINISHED (or FAILED, KILLED)."""
    client(data).set_terminated(run_id, status=RunStatus.to_string(RunStatus.from_string(status)))


@contextlib.contextmanager
def training_run(board_size: int, config: Mapping[str, Any], *, dataset: str | None = None,
                 run_name: str | None = None, data: Path | None = None, game: str = "go") -> Iterator[str]:
    """`start_run` for a block: FINISHED when it completes, FAILED (KILLED if interrupted) if it raises."""
    run_id = start_run(board_size, config, dataset=dataset, run_name=run_name, data=data, game=game)
    try:
        yield run_id
    except Exception:
        end_run(run_id, "FAILED", data)
        raise
    except BaseException:  # KeyboardInterrupt, SystemExit
        end_run(run_id, "KILLED", data)
        raise
    end_run(run_id, "FINISHED", data)


@mlflow_errors
def log_metrics(run_id: str, metrics: Mapping[str, float], step: int, data: Path | None = None) -> None:
    """Log one step's metrics in a single call."""
    now = int(time.time() * 1000)
    client(data).log_batch(run_id, metrics=[Metric(k, float(v), now, int(step)) for k, v in metrics.items()])


@mlflow_errors
def log_curves(run_id: str, history: Mapping[str, list[tuple[int, float]]], data: Path | None = None) -> None:
    """Draw `history` with `plot_curves` and log it as the run's plots/curves.png."""
    with tempfile.TemporaryDirectory(prefix="gozero-plot-") as temp:
        png = plot_curves(history, Path(temp) / Path(CURVES_ARTIFACT).name)
        client(data).log_artifact(run_id, str(png), str(Path(CURVES_ARTIFACT).parent))


@mlflow_errors
def log_artifact(run_id: str, path: Path, artifact_dir: str, data: Path | None = None) -> None:
    """Log the file `path` into the run's `artifact_dir` (e.g. ``plots``)."""
    client(data).log_artifact(run_id, str(path), artifact_dir)


@mlflow_errors
def log_model(run_id: str, model_dir: Path, data: Path | None = None) -> str:
    """Log a model directory (`storage.checkpoints.save_model`) as the run's model/; its artifact URI."""
    from storage.checkpoints import read_model_info

    read_model_info(Path(model_dir))  # refuse now what could never be registered and loaded
    store = client(data)
    store.log_artifacts(run_id, str(model_dir), MODEL_ARTIFACT)
    return f"{store.get_run(run_id).info.artifact_uri}/{MODEL_ARTIFACT}"


@mlflow_errors
def describe_run(run_id: str, data: Path | None = None) -> RunSummary:
    """The run's status, params, latest metrics, tags and artifact URI."""
    return run_summary(client(data), run_id)


def plot_curves(history: Mapping[str, list[tuple[int, float]]], path: Path) -> Path:
    """Draw each metric's (step, value) points in a panel of its own into the PNG `path`; returns it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    names = sorted(history) or ["(no metrics)"]
    columns = min(len(names), 2)
    rows = -(-len(names) // columns)
    figure = Figure(figsize=(5 * columns, 2.6 * rows), layout="constrained")
    FigureCanvasAgg(figure)  # Agg without pyplot: no global backend state, safe in worker threads
    for index, name in enumerate(names):
        points = sorted(history.get(name, []))
        axes = figure.add_subplot(rows, columns, index + 1, title=name, xlabel="step")
        axes.plot([s for s, _ in points], [v for _, v in points], marker="." if len(points) < 30 else None)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    with atomic_path(Path(path)) as temp:
        figure.savefig(temp, format="png", dpi=100)
    return Path(path)


def flatten_config(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A nested config as MLflow params: dotted keys (``net.blocks``), values as strings."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        if isinstance(value, Mapping) and value:
            flat.update(flatten_config(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = (value if isinstance(value, str) else _json(value))[:_PARAM_MAX]
    return flat


def _experiment_id(store: MlflowClient, name: str, data: Path | None) -> str:
    """The experiment `name`, created with an absolute artifact location if missing."""
    if (experiment := store.get_experiment_by_name(name)) is not None:
        return experiment.experiment_id
    root = artifact_root(tracking_uri(data), data)
    try:
        return store.create_experiment(name, artifact_location=root and f"{root}/{name}")
    except MlflowException:  # another process created it in between
        if (experiment := store.get_experiment_by_name(name)) is None:
            raise
        return experiment.experiment_id


def run_summary(store: MlflowClient, run_id: str) -> RunSummary:
    """The summary of a run, read through an open client."""
    run = store.get_run(run_id)
    return RunSummary(run_id=run.info.run_id, status=run.info.status, params=dict(run.data.params),
                      metrics=dict(run.data.metrics), artifact_uri=run.info.artifact_uri,
                      tags={k: v for k, v in run.data.tags.items() if not k.startswith("mlflow.")})


def _json(value: Any, indent: int | None = None) -> str:
    """JSON of a config; dataclasses as dicts, anything else unknown (paths, enums) as a string."""
    def plain(item: Any) -> Any:
        return dataclasses.asdict(item) if dataclasses.is_dataclass(item) else str(item)
    return json.dumps(value, indent=indent, sort_keys=True, default=plain)
