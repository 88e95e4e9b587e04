"""Prefect task of supervised training: one net on one dataset, from Parquet to a registered version.

`train_model` is an adapter (read via storage → `gocore.nn.training.train` → write via storage):

    manifest  = storage.datasets.read_manifest(dataset)      # encoder planes, board size
    net       = gocore.nn.nets.preset(preset, N, planes, family)
    run       = storage.runs.training_run(params: config + dataset manifest id + code version)
    train(net, StreamFactory(dataset), config)                # checkpoints, metrics, progress
    curves PNG, model dir → log_model → register              # returns a TrainResult

Checkpoints live in the run's directory (storage.run_dirs: checkpoints, identity, history,
progress, result), keyed by a stable *run key*: `run_name` when given, else derived from the
dataset's manifest id, the family, the net preset and the training fields a resume may not change
(`run_key`), so rerunning the same command resumes automatically.

A rerun whose stored result is at the configured steps returns it without training again; otherwise
it resumes from the newest readable checkpoint, re-logs the earlier metrics into the new MLflow
run (so that one run shows the whole curve) and trains only the steps still missing. No Prefect
retries: a failed training step is not an I/O hiccup, and a rerun resumes anyway.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn.device import choose_device
from gocore.nn.features import get_encoder
from gocore.nn.net_sizes import PRESETS as NET_PRESETS
from gocore.nn.nets import NetConfigError, build_net, net_size
from gocore.nn.nets import preset as net_preset
from gocore.nn.training import PRESETS, RESUMABLE_CHANGES, TrainConfig, TrainError, TrainState, train
from storage import checkpoints, datasets, layout, registry, run_dirs, runs
from storage import selfplay as selfplay_files
from storage.run_dirs import History
from storage.stream import StreamFactory
from storage.stream_mix import MixedStreamFactory
from tasks.app.rows import ROW_DECODER

GPU_TAG = "gpu"  # on every training task: a concurrency limit of 1 on it (flows/deploy.py) keeps one per GPU
OBJECTIVE_OF_FAMILY = {"policy": "policy", "value": "value", "dual": "dual"}
KEEP_CHECKPOINTS = 2  # the newest, and one before it in case the newest is damaged
CURVE_WORDS = ("loss", "top1", "mse")  # metrics drawn in the curves PNG
# Final validation metrics under the names `gozero models list` shows (storage.registry_records.KEY_METRICS).
KEY_METRIC_NAMES = {"val/policy_top1": "val_policy_accuracy", "val/value_mse": "val_value_mse"}


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """A trained and registered net: where it is, how training went. Stored as the run's result."""

    run_id: str  # MLflow run of this (last) training call
    run_key: str  # the checkpoint directory's key (stable across reruns)
    model_name: str  # registered model, e.g. gozero-9x9-policy
    version: int  # registered version
    model_uri: str  # models:/<name>/<version>
    artifact_uri: str  # the logged model directory
    metrics: dict[str, float]  # final value of every reported metric, and the KEY_METRIC_NAMES
    step: int  # steps trained in all
    start_step: int  # the step this call resumed from (0: from scratch)
    device: str  # torch device it trained on
    seconds: float  # training time of this call
    checkpoint_dir: str  # the run's directory

    @classmethod
    def stored(cls, fields: Mapping[str, Any] | None) -> TrainResult | None:
        """The result stored in a run directory, or None if there is none (or of an older layout)."""
        names = {f.name for f in dataclasses.fields(cls)}
        if not fields or not names <= set(fields):
            return None
        return cls(**{name: fields[name] for name in names})


@dataclasses.dataclass(frozen=True)
class DatasetFacts:
    """What training needs to know about a dataset, from its manifest."""

    name: str  # directory name under <data>/datasets/, or a name for self-play generations
    path: Path | tuple[Path, ...]  # the dataset directory, or self-play shard files
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
    return DatasetFacts(name=path.name, path=path, encoder=manifest["encoder"],
                        in_planes=get_encoder(manifest["encoder"]).num_planes,
                        board_size=int(manifest["options"]["size"]), augment=manifest.get("augment", "none"),
                        manifest_id=datasets.manifest_id(manifest), rows=int(manifest["rows"]))


def selfplay_facts(data: Path, generations: Sequence[int], run: str = "") -> DatasetFacts:
    """The facts of the finished self-play batches of `generations` (of loop `run`, else the data
    dir's own), trained on as one dataset; TrainError if there are none."""
    sidecars = [s for g in generations for s in selfplay_files.finished_sidecars(data, g, run)]
    if not sidecars:
        where = layout.selfplay_dir(data, min(generations, default=0), run).parent
        raise TrainError(f"no finished self-play games in generations {format_generations(generations)} "
                         f"under {where}; play them with gozero selfplay")
    encoders = {s.get("encoder", s["settings"]["encoder"]) for s in sidecars}
    sizes = {int(s["settings"]["size"]) for s in sidecars}
    if len(encoders) > 1 or len(sizes) > 1:
        raise TrainError(f"self-play generations {format_generations(generations)} mix encoders {sorted(encoders)} "
                         f"or board sizes {sorted(sizes)}: train on one kind at a time")
    shards = tuple(Path(s["shard"]) for s in sidecars)
    identity = json.dumps(sorted((path.name, s["bytes"]) for path, s in zip(shards, sidecars)))
    encoder = encoders.pop()
    return DatasetFacts(name=f"{run or 'selfplay'}-gen{format_generations(generations)}", path=shards,
                        encoder=encoder, in_planes=get_encoder(encoder).num_planes, board_size=sizes.pop(),
                        augment="none", manifest_id=hashlib.sha256(identity.encode()).hexdigest()[:16],
                        rows=sum(int(s["rows"]) for s in sidecars))


@dataclasses.dataclass(frozen=True)
class ExpertMix:
    """Expert rows mixed into training: `share` of every train batch from `facts` (an SGF dataset)."""

    facts: DatasetFacts
    share: float  # in (0, 1)

    def __post_init__(self) -> None:
        if not 0 < self.share < 1:
            raise TrainError(f"the expert share of a batch is in (0, 1), not {self.share}")

    def rows_per_batch(self, batch_size: int) -> int:
        """Expert rows in a batch of `batch_size`: at least one, and at least one other row."""
        if batch_size < 2:
            raise TrainError("mixing expert rows needs batches of at least 2 rows")
        return min(batch_size - 1, max(1, round(batch_size * self.share)))

    def check(self, facts: DatasetFacts) -> None:
        """TrainError unless the expert rows are encoded like `facts`' (same encoder and board)."""
        mine, theirs = (self.facts.encoder, self.facts.board_size), (facts.encoder, facts.board_size)
        if mine != theirs:
            raise TrainError(f"expert dataset {self.facts.name} is {mine[0]} on {mine[1]}x{mine[1]}, the training "
                             f"data {theirs[0]} on {theirs[1]}x{theirs[1]}: encode them alike")

    def identity(self) -> dict[str, Any]:
        """What decides the expert rows of a run (part of its identity and key)."""
        return {"dataset": self.facts.name, "manifest_id": self.facts.manifest_id, "share": self.share}


def format_generations(generations: Sequence[int]) -> str:
    """``3`` or ``0..3`` (a contiguous range) or ``0,2,5``."""
    ordered = sorted(set(generations))
    if ordered and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return str(ordered[0]) if len(ordered) == 1 else f"{ordered[0]}..{ordered[-1]}"
    return ",".join(map(str, ordered))


def objective_config(family: str, train_config: Mapping[str, Any] | TrainConfig) -> TrainConfig:
    """The TrainConfig with the family's objective (the family decides it, whatever the config says)."""
    if family not in OBJECTIVE_OF_FAMILY:
        raise TrainError(f"family {family!r} is not one of {', '.join(OBJECTIVE_OF_FAMILY)}")
    config = train_config if isinstance(train_config, TrainConfig) else TrainConfig.from_dict(train_config)
    return dataclasses.replace(config, objective=OBJECTIVE_OF_FAMILY[family])


def training_config(preset: str = "small", steps: int | None = None, batch_size: int | None = None,
                    device: str = "auto") -> TrainConfig:
    """The training preset with the given steps, batch size and device; TrainError if unknown. A
    net-size preset without a schedule of its own (alphago, b6c96) trains with its size's schedule."""
    if preset not in PRESETS:
        try:
            preset = net_size(preset).schedule
        except NetConfigError:
            raise TrainError(f"unknown preset {preset!r}; presets: {', '.join(NET_PRESETS)}, "
                             "or a net size such as b6c96") from None
    changes: dict[str, Any] = {"device": device}
    if steps is not None:
        changes["steps"] = steps
    if batch_size is not None:
        changes["batch_size"] = batch_size
    return dataclasses.replace(PRESETS[preset], **changes)


def families_to_train(family: str, also_value: bool) -> list[str]:
    """The nets one flow run trains: `family`, then a value net if asked and not already one."""
    if family not in OBJECTIVE_OF_FAMILY:
        raise TrainError(f"model {family!r} is not one of {', '.join(OBJECTIVE_OF_FAMILY)}")
    return [family] + (["value"] if also_value and family not in ("value", "dual") else [])


def run_key(facts: DatasetFacts, family: str, preset: str, config: TrainConfig, run_name: str | None = None,
            expert: ExpertMix | None = None) -> str:
    """The checkpoint directory's name: `run_name`, else a name stable across reruns of one setup."""
    if run_name:
        return layout.safe_name(run_name, "run name")
    fixed = {k: v for k, v in config.to_dict().items() if k not in RESUMABLE_CHANGES}
    setup = [facts.manifest_id, family, preset, fixed] + ([expert.identity()] if expert is not None else [])
    digest = hashlib.sha256(json.dumps(setup, sort_keys=True).encode())
    return layout.safe_name(f"{facts.name}-{family}-{preset}-{digest.hexdigest()[:8]}", "run key")


def read_progress(data_dir: str | Path | None, key: str) -> tuple[int, int]:
    """(steps done, steps planned) of the run with this key, (0, 0) before it reports; for progress bars."""
    return run_dirs.read_progress(run_dirs.run_dir(layout.data_dir(data_dir), key))


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_model(dataset_dir: str, family: str, preset: str, train_config: Mapping[str, Any] | TrainConfig,
                data_dir: str | None = None, run_name: str | None = None) -> TrainResult:
    """Train a `family` net of net preset `preset` on the dataset, log and register it."""
    return train_and_register(dataset_dir, family, preset, train_config, data_dir, run_name)


def train_and_register(dataset: str | Path | DatasetFacts, family: str, preset: str,
                       train_config: Mapping[str, Any] | TrainConfig, data_dir: str | Path | None = None,
                       run_name: str | None = None, init_from: str | None = None,
                       version_tags: Mapping[str, str] | None = None, aux_heads: bool = False,
                       expert: ExpertMix | None = None) -> TrainResult:
    """The body of `train_model`, callable without Prefect (the CLI runs it in-process). `dataset`
    is a dataset directory or `selfplay_facts`; `init_from` a model URI whose weights the net
    starts from (the zero loop's champion) instead of a random initialisation; `version_tags` go
    on the registered version (the zero loop's loop and generation); `aux_heads` gives a dual net
    the ownership and score heads, trained on the rows that carry their targets; `expert` mixes a
    fixed share of another dataset's rows into every train batch (the zero loop's expert rows)."""
    data = layout.data_dir(data_dir)
    facts = dataset if isinstance(dataset, DatasetFacts) else dataset_facts(dataset)
    if expert is not None:
        expert.check(facts)
    config = objective_config(family, train_config)
    choose_device(config.device)  # a missing GPU fails here, before an MLflow run is opened
    net_config = net_preset(preset, facts.board_size, facts.in_planes, family=family, encoder=facts.encoder,
                            aux_heads=aux_heads)
    key = run_key(facts, family, preset, config, run_name, expert)
    directory = run_dirs.run_dir(data, key)
    _claim(directory, facts, family, net_config.to_dict(), expert)
    if (done := _finished(directory, config)) is not None:
        return done
    resume = latest_checkpoint(directory)
    history = run_dirs.read_history(directory, resume.step if resume else 0)
    params = {"train": config.to_dict(), "net": net_config.to_dict(), "net_preset": preset, "run_key": key,
              "dataset": {"name": facts.name, "manifest_id": facts.manifest_id, "rows": facts.rows,
                          "encoder": facts.encoder, "augment": facts.augment},
              "resumed_from_step": resume.step if resume else 0,
              **({"expert": expert.identity()} if expert is not None else {})}
    with runs.training_run(facts.board_size, params, dataset=facts.name, run_name=key, data=data) as run_id:
        log_history(run_id, history, data)
        torch.manual_seed(config.seed)  # the initial weights too: a rerun of a setup is the same run
        net = build_net(net_config)
        if init_from is not None and resume is None:
            _start_from(net, init_from, data)
        recorder = _Recorder(run_id, directory, config.steps, history, data)
        outcome = train(net, _streams(facts, config, aux_heads, expert), config, resume=resume,
                        save_checkpoint=recorder.checkpoint, on_metrics=recorder.report)
        published = _publish(run_id, net, net_config.to_dict(), facts, key, directory, history, data,
                             version_tags or {})
        result = TrainResult(**published, step=outcome.step, start_step=outcome.start_step, device=outcome.device,
                             seconds=round(outcome.seconds, 2), checkpoint_dir=str(directory))
    run_dirs.write_result(directory, dataclasses.asdict(result))
    return result


# ---------------------------------------------------------------- the checkpoint directory
def _claim(directory: Path, facts: DatasetFacts, family: str, net: dict[str, Any],
           expert: ExpertMix | None = None) -> None:
    """Record what this key trains; TrainError if the directory belongs to another setup."""
    identity = {"dataset": facts.name, "manifest_id": facts.manifest_id, "family": family, "net": net,
                **({"expert": expert.identity()} if expert is not None else {})}
    recorded = run_dirs.read_identity(directory)
    if recorded is None:
        run_dirs.write_identity(directory, identity)
    elif recorded != identity:
        changed = sorted(k for k in identity if recorded.get(k) != identity[k])
        raise TrainError(f"run {directory.name!r} was trained with a different {', '.join(changed)}; "
                         "choose another run name, or delete " + str(directory))


def _finished(directory: Path, config: TrainConfig) -> TrainResult | None:
    """The stored result if this run already reached the configured steps and was registered."""
    result = TrainResult.stored(run_dirs.read_result(directory))
    return result if result is not None and result.step == config.steps else None


def latest_checkpoint(directory: Path) -> checkpoints.TrainingCheckpoint | None:
    """The newest readable checkpoint, or None (a damaged newest one falls back to the one before)."""
    for path in reversed(run_dirs.checkpoint_files(directory)):
        try:
            return checkpoints.load_training_checkpoint(path)
        except checkpoints.CheckpointError:
            continue
    return None


def _start_from(net: Any, uri: str, data: Path) -> None:
    """Copy the weights of the model `uri` into `net`; TrainError if its architecture differs."""
    from tasks.app.models import load_net

    source = load_net(uri, data)
    try:
        net.load_state_dict(source.state_dict())
    except RuntimeError as error:
        raise TrainError(f"cannot start from {uri}: its net is not this preset's ({str(error)[:200]})") from error


def log_history(run_id: str, history: History, data: Path) -> None:
    """Log a run's metric history (e.g. a resumed run's earlier metrics) into an MLflow run, one call per step."""
    by_step: dict[int, dict[str, float]] = {}
    for name, points in history.items():
        for step, value in points:
            by_step.setdefault(step, {})[name] = value
    for step in sorted(by_step):
        runs.log_metrics(run_id, by_step[step], step, data)


class _Recorder:
    """Where `train`'s reports and checkpoints go: MLflow, the history, the progress file, disk."""

    def __init__(self, run_id: str, directory: Path, steps: int, history: History, data: Path):
        self.run_id, self.directory, self.steps, self.history, self.data = run_id, directory, steps, history, data

    def report(self, step: int, metrics: dict[str, float]) -> None:
        """One report (all its metrics in one MLflow call), remembered for the curves."""
        runs.log_metrics(self.run_id, metrics, step, self.data)
        for name, value in metrics.items():
            self.history.setdefault(name, []).append((step, float(value)))
        run_dirs.write_progress(self.directory, step, self.steps, self.run_id)

    def checkpoint(self, state: TrainState) -> None:
        """Save the state, then the history up to it; keep the newest KEEP_CHECKPOINTS files."""
        path = run_dirs.checkpoint_path(self.directory, state.step)
        checkpoints.save_training_checkpoint(path, state.model_state, state.optimizer_state, state.step,
                                             state.config, state.rng_state, state.extra)
        run_dirs.write_history(self.directory, self.history)
        run_dirs.prune_checkpoints(self.directory, KEEP_CHECKPOINTS)


Recorder = _Recorder
"""The checkpoint and metrics recorder, for other training tasks (`tasks.baghchal`)."""


def _streams(facts: DatasetFacts, config: TrainConfig, aux_targets: bool = False,
             expert: ExpertMix | None = None) -> StreamFactory | MixedStreamFactory:
    """Train/val streams over the dataset; random symmetries unless ingest stored all eight;
    ownership and score targets for a net with auxiliary heads; with `expert`, its share of every
    train batch from the expert dataset."""
    rows = 0 if expert is None else expert.rows_per_batch(config.batch_size)
    main = StreamFactory(facts.path, config.batch_size - rows, ROW_DECODER, seed=config.seed,
                         random_symmetry=facts.augment != "all8", aux_targets=aux_targets,
                         loader_workers=config.loader_workers, value_mix=config.value_mix)
    if expert is None:
        return main
    mixed = StreamFactory(expert.facts.path, rows, ROW_DECODER, seed=config.seed + 1,
                          random_symmetry=expert.facts.augment != "all8", aux_targets=aux_targets,
                          loader_workers=config.loader_workers)
    return MixedStreamFactory(main, mixed)


# ---------------------------------------------------------------- the end of a run
def _publish(run_id: str, net: Any, net_config: dict[str, Any], facts: DatasetFacts, key: str,
             directory: Path, history: History, data: Path, version_tags: Mapping[str, str]) -> dict[str, Any]:
    """Curves, model dir, registration; the TrainResult fields they give."""
    final = {name: points[-1][1] for name, points in history.items() if points}
    key_metrics = {KEY_METRIC_NAMES[k]: v for k, v in final.items() if k in KEY_METRIC_NAMES}
    if key_metrics:
        runs.log_metrics(run_id, key_metrics, max(s for p in history.values() for s, _ in p), data)
    runs.log_curves(run_id, {k: v for k, v in history.items() if any(w in k for w in CURVE_WORDS)}, data)
    model_dir = checkpoints.save_model(run_dirs.model_dir(directory), net, net_config,
                                       extra={"run_key": key, "dataset": facts.name,
                                              "manifest_id": facts.manifest_id})
    artifact_uri = runs.log_model(run_id, model_dir, data)
    version = registry.register(run_id, dataset=facts.name, dataset_key=facts.manifest_id, tags=version_tags,
                                data=data)
    name = registry.model_name(facts.board_size, net_config["family"])
    return {"run_id": run_id, "run_key": key, "model_name": name, "version": version,
            "model_uri": f"models:/{name}/{version}", "artifact_uri": artifact_uri,
            "metrics": {**final, **key_metrics}}

