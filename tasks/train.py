"""Prefect task of supervised training: one net on one dataset, from Parquet to a registered version.

`train_model` is an adapter (read via storage → `gocore.nn.training.train` → write via storage):

    manifest  = storage.datasets.read_manifest(dataset)      # encoder planes, board size
    net       = gocore.nn.nets.preset(preset, N, planes, family)
    run       = storage.registry.training_run(params: config + dataset manifest id + code version)
    train(net, StreamFactory(dataset), config)                # checkpoints, metrics, progress
    curves PNG, model dir → log_model → register              # returns a small dict

Checkpoints live in ``<data>/checkpoints/<run key>/``, keyed by a stable *run key*, not by the
MLflow run id: a rerun is a new MLflow run, but it must find the checkpoints of the run it
continues. The key is `run_name` when given, else derived from the dataset's manifest id, the
family, the net preset and the training fields a resume may not change (`run_key`), so rerunning
the same command resumes automatically. The directory holds:

    step-<8 digits>.pt     training checkpoints (storage.checkpoints), the newest KEEP_CHECKPOINTS
    run.json               what the key was made for (dataset, family, net): a clash is refused
    history.json           every metric reported up to the newest checkpoint, for the curves
    progress.json          {"step", "steps", "run_id"}, rewritten at every report (progress bars)
    result.json            the returned dict, once the model is registered
    model/                 the saved model (storage.checkpoints.save_model), logged to MLflow

A rerun with `result.json` at the configured steps returns it without training again; otherwise
it resumes from the newest readable checkpoint, re-logs the earlier metrics into the new MLflow
run (so that one run shows the whole curve) and trains only the steps still missing. No Prefect
retries: a failed training step is not an I/O hiccup, and a rerun resumes anyway.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn.device import choose_device
from gocore.nn.features import get_encoder
from gocore.nn.nets import build_net
from gocore.nn.nets import preset as net_preset
from gocore.nn.training import RESUMABLE_CHANGES, TrainConfig, TrainError, TrainState, train
from storage import checkpoints, datasets, layout, registry
from storage.atomic import write_json
from storage.stream import StreamFactory

OBJECTIVE_OF_FAMILY = {"policy": "policy", "value": "value", "dual": "dual"}
KEEP_CHECKPOINTS = 2  # the newest, and one before it in case the newest is damaged
CURVE_WORDS = ("loss", "top1", "mse")  # metrics drawn in the curves PNG
# Final validation metrics under the names `gozero models list` shows (registry.KEY_METRICS).
KEY_METRIC_NAMES = {"val/policy_top1": "val_policy_accuracy", "val/value_mse": "val_value_mse"}
RUN_FILE, HISTORY_FILE, PROGRESS_FILE, RESULT_FILE = "run.json", "history.json", "progress.json", "result.json"

History = dict[str, list[tuple[int, float]]]


@dataclasses.dataclass(frozen=True)
class DatasetFacts:
    """What training needs to know about a dataset, from its manifest."""

    name: str  # directory name under <data>/datasets/
    path: Path  # the dataset directory
    encoder: str  # feature encoder name
    in_planes: int  # planes per position (derived from the encoder)
    board_size: int  # N
    augment: str  # all8, random1 or none (at ingest)
    manifest_id: str  # 16 hex digits of the manifest's SHA-256: which build of the dataset
    rows: int  # rows in the manifest


def dataset_facts(dataset_dir: str | Path) -> DatasetFacts:
    """The facts of a complete dataset; DatasetError if it has no manifest."""
    path = Path(dataset_dir)
    manifest = datasets.read_manifest(path)
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    return DatasetFacts(name=path.name, path=path, encoder=manifest["encoder"],
                        in_planes=get_encoder(manifest["encoder"]).num_planes,
                        board_size=int(manifest["options"]["size"]), augment=manifest.get("augment", "none"),
                        manifest_id=hashlib.sha256(canonical).hexdigest()[:16], rows=int(manifest["rows"]))


def objective_config(family: str, train_config: Mapping[str, Any] | TrainConfig) -> TrainConfig:
    """The TrainConfig with the family's objective (the family decides it, whatever the config says)."""
    if family not in OBJECTIVE_OF_FAMILY:
        raise TrainError(f"family {family!r} is not one of {', '.join(OBJECTIVE_OF_FAMILY)}")
    config = train_config if isinstance(train_config, TrainConfig) else TrainConfig.from_dict(train_config)
    return dataclasses.replace(config, objective=OBJECTIVE_OF_FAMILY[family])


def run_key(facts: DatasetFacts, family: str, preset: str, config: TrainConfig, run_name: str | None = None) -> str:
    """The checkpoint directory's name: `run_name`, else a name stable across reruns of one setup."""
    if run_name:
        return layout.safe_name(run_name, "run name")
    fixed = {k: v for k, v in config.to_dict().items() if k not in RESUMABLE_CHANGES}
    digest = hashlib.sha256(json.dumps([facts.manifest_id, family, preset, fixed], sort_keys=True).encode())
    return layout.safe_name(f"{facts.name}-{family}-{preset}-{digest.hexdigest()[:8]}", "run key")


def read_progress(data_dir: str | Path | None, key: str) -> tuple[int, int]:
    """(steps done, steps planned) of the run with this key, (0, 0) before it reports; for progress bars."""
    path = layout.checkpoint_dir(layout.data_dir(data_dir), key) / PROGRESS_FILE
    try:
        progress = json.loads(path.read_text())
        return int(progress["step"]), int(progress["steps"])
    except (OSError, ValueError, KeyError):
        return 0, 0


@task(cache_policy=NO_CACHE)
def train_model(dataset_dir: str, family: str, preset: str, train_config: Mapping[str, Any] | TrainConfig,
                data_dir: str | None = None, run_name: str | None = None) -> dict[str, Any]:
    """Train a `family` net of net preset `preset` on the dataset, log and register it; a small dict."""
    return train_and_register(dataset_dir, family, preset, train_config, data_dir, run_name)


def train_and_register(dataset_dir: str | Path, family: str, preset: str,
                       train_config: Mapping[str, Any] | TrainConfig, data_dir: str | Path | None = None,
                       run_name: str | None = None) -> dict[str, Any]:
    """The body of `train_model`, callable without Prefect (the CLI runs it in-process)."""
    data = layout.data_dir(data_dir)
    facts = dataset_facts(dataset_dir)
    config = objective_config(family, train_config)
    choose_device(config.device)  # a missing GPU fails here, before an MLflow run is opened
    net_config = net_preset(preset, facts.board_size, facts.in_planes, family=family, encoder=facts.encoder)
    key = run_key(facts, family, preset, config, run_name)
    directory = layout.checkpoint_dir(data, key)
    _claim(directory, facts, family, net_config.to_dict())
    if (done := _finished(directory, config)) is not None:
        return done
    resume = latest_checkpoint(directory)
    history = _history_until(directory, resume.step if resume else 0)
    params = {"train": config.to_dict(), "net": net_config.to_dict(), "net_preset": preset, "run_key": key,
              "dataset": {"name": facts.name, "manifest_id": facts.manifest_id, "rows": facts.rows,
                          "encoder": facts.encoder, "augment": facts.augment},
              "resumed_from_step": resume.step if resume else 0}
    with registry.training_run(facts.board_size, params, dataset=facts.name, run_name=key, data=data) as run_id:
        _relog(run_id, history, data)
        torch.manual_seed(config.seed)  # the initial weights too: a rerun of a setup is the same run
        net = build_net(net_config)
        recorder = _Recorder(run_id, directory, config.steps, history, data)
        outcome = train(net, _streams(facts, config), config, resume=resume,
                        save_checkpoint=recorder.checkpoint, on_metrics=recorder.report)
        result = _publish(run_id, net, net_config.to_dict(), facts, key, directory, history, data)
        result |= {"step": outcome.step, "start_step": outcome.start_step, "device": outcome.device,
                   "seconds": round(outcome.seconds, 2), "checkpoint_dir": str(directory)}
    write_json(directory / RESULT_FILE, result)
    return result


# ---------------------------------------------------------------- the checkpoint directory
def _claim(directory: Path, facts: DatasetFacts, family: str, net: dict[str, Any]) -> None:
    """Record what this key trains; TrainError if the directory belongs to another setup."""
    identity = {"dataset": facts.name, "manifest_id": facts.manifest_id, "family": family, "net": net}
    path = directory / RUN_FILE
    if path.exists():
        recorded = json.loads(path.read_text())
        if recorded != identity:
            changed = sorted(k for k in identity if recorded.get(k) != identity[k])
            raise TrainError(f"run {directory.name!r} was trained with a different {', '.join(changed)}; "
                             "choose another run name, or delete " + str(directory))
        return
    directory.mkdir(parents=True, exist_ok=True)
    write_json(path, identity)


def _finished(directory: Path, config: TrainConfig) -> dict[str, Any] | None:
    """The stored result if this run already reached the configured steps and was registered."""
    path = directory / RESULT_FILE
    if not path.exists():
        return None
    result = json.loads(path.read_text())
    return result if result.get("step") == config.steps else None


def checkpoint_files(directory: Path) -> list[Path]:
    """The run's checkpoint files, oldest first."""
    return sorted(directory.glob("step-*.pt"))


def latest_checkpoint(directory: Path) -> checkpoints.TrainingCheckpoint | None:
    """The newest readable checkpoint, or None (a damaged newest one falls back to the one before)."""
    for path in reversed(checkpoint_files(directory)):
        try:
            return checkpoints.load_training_checkpoint(path)
        except checkpoints.CheckpointError:
            continue
    return None


def _history_until(directory: Path, step: int) -> History:
    """The metrics history saved with the checkpoints, up to `step` (later points get reported again)."""
    path = directory / HISTORY_FILE
    if step == 0 or not path.exists():
        return {}
    saved = json.loads(path.read_text())
    return {name: [(int(s), float(v)) for s, v in points if s <= step] for name, points in saved.items()}


def _relog(run_id: str, history: History, data: Path) -> None:
    """Log a resumed run's earlier metrics into its new MLflow run, one call per step."""
    by_step: dict[int, dict[str, float]] = {}
    for name, points in history.items():
        for step, value in points:
            by_step.setdefault(step, {})[name] = value
    for step in sorted(by_step):
        registry.log_metrics(run_id, by_step[step], step, data)


class _Recorder:
    """Where `train`'s reports and checkpoints go: MLflow, the history, the progress file, disk."""

    def __init__(self, run_id: str, directory: Path, steps: int, history: History, data: Path):
        self.run_id, self.directory, self.steps, self.history, self.data = run_id, directory, steps, history, data

    def report(self, step: int, metrics: dict[str, float]) -> None:
        """One report (all its metrics in one MLflow call), remembered for the curves."""
        registry.log_metrics(self.run_id, metrics, step, self.data)
        for name, value in metrics.items():
            self.history.setdefault(name, []).append((step, float(value)))
        write_json(self.directory / PROGRESS_FILE, {"step": step, "steps": self.steps, "run_id": self.run_id})

    def checkpoint(self, state: TrainState) -> None:
        """Save the state, then the history up to it; keep the newest KEEP_CHECKPOINTS files."""
        path = self.directory / f"step-{state.step:08d}.pt"
        checkpoints.save_training_checkpoint(path, state.model_state, state.optimizer_state, state.step,
                                             state.config, state.rng_state, state.extra)
        write_json(self.directory / HISTORY_FILE, {k: [list(p) for p in v] for k, v in self.history.items()})
        for old in checkpoint_files(self.directory)[:-KEEP_CHECKPOINTS]:
            old.unlink(missing_ok=True)


def _streams(facts: DatasetFacts, config: TrainConfig) -> StreamFactory:
    """Train/val streams over the dataset; random symmetries unless ingest stored all eight."""
    return StreamFactory(facts.path, config.batch_size, seed=config.seed,
                         random_symmetry=facts.augment != "all8")


# ---------------------------------------------------------------- the end of a run
def _publish(run_id: str, net: Any, net_config: dict[str, Any], facts: DatasetFacts, key: str,
             directory: Path, history: History, data: Path) -> dict[str, Any]:
    """Curves, model dir, registration; the small dict the task returns."""
    final = {name: points[-1][1] for name, points in history.items() if points}
    key_metrics = {KEY_METRIC_NAMES[k]: v for k, v in final.items() if k in KEY_METRIC_NAMES}
    if key_metrics:
        registry.log_metrics(run_id, key_metrics, max(s for p in history.values() for s, _ in p), data)
    registry.log_curves(run_id, {k: v for k, v in history.items() if any(w in k for w in CURVE_WORDS)}, data)
    model_dir = checkpoints.save_model(directory / "model", net, net_config,
                                       extra={"run_key": key, "dataset": facts.name,
                                              "manifest_id": facts.manifest_id})
    artifact_uri = registry.log_model(run_id, model_dir, data)
    version = registry.register(run_id, dataset=facts.name, data=data)
    name = registry.model_name(facts.board_size, net_config["family"])
    return {"run_id": run_id, "run_key": key, "model_name": name, "version": version,
            "model_uri": f"models:/{name}/{version}", "artifact_uri": artifact_uri,
            "metrics": {**final, **key_metrics}}

