"""Prefect task of AlphaGo's rollout policy: expert rows → sparse features → weights → registry.

    facts    = tasks.train.dataset_facts(dataset)              # encoder planes, board size, manifest id
    train    = rows of the train split → rollout_training.examples (feature ids, expert move)
    val      = the same from the held-out split (by game, as every training run splits)
    fit      → RolloutPolicy weights; accuracy on val next to a uniform choice among the candidates
    register → gozero-<N>x<N>-rollout, version tags rollout_key, val_accuracy, uniform_accuracy

Idempotent: the version carries a `rollout_key` tag, a digest of the dataset build (manifest id)
and every setting; a rerun with the same inputs finds that version and returns it instead of
training and registering another. Training takes seconds to minutes, so a killed run simply
starts over (there are no checkpoints to resume from).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import torch
from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn import rollout_training
from gocore.nn.features import get_encoder
from gocore.nn.nets import NetConfig, RolloutPolicy, build_net
from gocore.nn.rollout_training import Examples, RolloutTrainConfig, RolloutTrainError
from storage import checkpoints, layout, registry, run_dirs, runs
from storage.stream import BatchStream
from tasks.app.rows import ROW_DECODER
from tasks.train import DatasetFacts, dataset_facts

FEATURES_VERSION = "patterns-v1"  # part of the key: a change of features must not reuse old weights
READ_BATCH = 2048  # rows decoded at a time while building examples


@dataclasses.dataclass(frozen=True)
class RolloutResult:
    """A trained and registered rollout policy and how well it predicts held-out expert moves."""

    model_name: str  # gozero-<N>x<N>-rollout
    version: int  # registered version
    model_uri: str  # models:/<name>/<version>
    key: str  # the rollout_key tag: dataset build and settings
    val_accuracy: float  # top-1 expert-move prediction on held-out rows
    uniform_accuracy: float  # the same for a uniform choice among the candidates
    policy_accuracy: float | None  # the SL policy's on the same rows, when one was given
    train_examples: int  # positions trained on
    val_examples: int  # positions measured on
    reused: bool  # True: an earlier run with the same inputs had registered it


@task(cache_policy=NO_CACHE)
def train_rollout(dataset: str, size: int | None = None, config: RolloutTrainConfig | None = None,
                  data_dir: str | None = None, max_rows: int = 100_000, val_rows: int = 10_000,
                  policy_model: str | None = None) -> RolloutResult:
    """Train the rollout policy on a dataset (a directory, or a name under <data>/datasets) and
    register it; `size` checks the dataset's board size; `policy_model` (a model URI) adds the SL
    policy's accuracy on the same held-out rows."""
    return train_and_register_rollout(dataset, size, config or RolloutTrainConfig(), data_dir, max_rows,
                                      val_rows, policy_model)


def train_and_register_rollout(dataset: str | Path, size: int | None, config: RolloutTrainConfig,
                               data_dir: str | Path | None = None, max_rows: int = 100_000,
                               val_rows: int = 10_000, policy_model: str | None = None) -> RolloutResult:
    """The body of `train_rollout`, callable without Prefect."""
    data = layout.data_dir(data_dir)
    path = Path(dataset)
    facts = dataset_facts(path if path.is_dir() else layout.dataset_dir(data, str(dataset)))
    if size is not None and size != facts.board_size:
        raise RolloutTrainError(f"dataset {facts.name} is {facts.board_size}x{facts.board_size}, "
                                                 f"not {size}x{size}")
    key = rollout_key(facts, config, max_rows, val_rows)
    name = registry.model_name(facts.board_size, "rollout")
    if (done := _registered(name, key, data)) is not None:
        return done
    train = read_examples(facts, "train", max_rows, config.seed)
    val = read_examples(facts, "val", val_rows, config.seed)
    policy_score = policy_accuracy(policy_model, facts, val_rows, config.seed, data) if policy_model else None
    net_config = NetConfig(board_size=facts.board_size, in_planes=facts.in_planes, encoder=facts.encoder,
                           family="rollout", blocks=0, filters=1, value_hidden=1)
    params = {"rollout": dataclasses.asdict(config), "max_rows": max_rows, "val_rows": val_rows, "key": key,
              "features": FEATURES_VERSION, "dataset": {"name": facts.name, "manifest_id": facts.manifest_id}}
    with runs.training_run(facts.board_size, params, dataset=facts.name, run_name=f"rollout-{key}", data=data) as run_id:
        torch.manual_seed(config.seed)
        net = build_net(net_config)
        assert isinstance(net, RolloutPolicy)
        rollout_training.fit(net, train, config,
                             on_loss=lambda step, loss: runs.log_metrics(run_id, {"train/loss": loss}, step, data))
        scores = {"val_accuracy": rollout_training.accuracy(net, val),
                  "uniform_accuracy": rollout_training.uniform_accuracy(val)}
        if policy_score is not None:
            scores["policy_accuracy"] = policy_score
        runs.log_metrics(run_id, scores, config.steps, data)
        model_dir = checkpoints.save_model(run_dirs.model_dir(run_dirs.run_dir(data, f"rollout-{key}")), net,
                                           net_config.to_dict(), extra={"dataset": facts.name, "rollout_key": key})
        runs.log_model(run_id, model_dir, data)
        tags = {"rollout_key": key, "train_examples": len(train), "val_examples": len(val),
                **{k: f"{v:.4f}" for k, v in scores.items()}}
        version = registry.register(run_id, dataset=facts.name, tags={k: str(v) for k, v in tags.items()}, data=data)
    return _result(name, version, key, tags, reused=False)


def rollout_key(facts: DatasetFacts, config: RolloutTrainConfig, max_rows: int, val_rows: int) -> str:
    """16 hex digits naming the inputs of a training: dataset build, features and settings."""
    inputs = [facts.manifest_id, FEATURES_VERSION, dataclasses.asdict(config), max_rows, val_rows]
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def _registered(name: str, key: str, data: Path) -> RolloutResult | None:
    """The version already registered for `key`, if any."""
    try:
        versions = registry.list_versions(name, data)
    except registry.RegistryError:  # no such model yet
        return None
    found = [v for v in versions if v.tags.get("rollout_key") == key]
    return _result(name, found[0].version, key, found[0].tags, reused=True) if found else None


def _result(name: str, version: int, key: str, tags: dict, reused: bool) -> RolloutResult:
    policy = tags.get("policy_accuracy")
    return RolloutResult(model_name=name, version=int(version), model_uri=f"models:/{name}/{version}", key=key,
                         val_accuracy=float(tags["val_accuracy"]), uniform_accuracy=float(tags["uniform_accuracy"]),
                         policy_accuracy=None if policy is None else float(policy),
                         train_examples=int(tags["train_examples"]), val_examples=int(tags["val_examples"]),
                         reused=reused)


def _stream(facts: DatasetFacts, split: str, seed: int) -> BatchStream:
    return BatchStream(facts.path, READ_BATCH, decoder=ROW_DECODER, split=split, seed=seed, epochs=1, prefetch=0)


def read_examples(facts: DatasetFacts, split: str, limit: int, seed: int) -> Examples:
    """Up to `limit` rows of a split, as examples (rows without a candidate move dropped)."""
    names = get_encoder(facts.encoder).plane_names
    parts, rows = [], 0
    for batch in _stream(facts, split, seed):
        take = min(len(batch), limit - rows)
        parts.append(rollout_training.examples(batch.planes[:take], batch.move[:take], names, facts.board_size))
        rows += take
        if rows >= limit:
            break
    if not parts:
        raise RolloutTrainError(f"dataset {facts.name} has no {split} rows")
    return rollout_training.concat(parts)


@torch.no_grad()
def policy_accuracy(uri: str, facts: DatasetFacts, limit: int, seed: int, data: str | Path | None = None) -> float:
    """Top-1 accuracy of a policy net on the held-out rows whose move is a rollout candidate."""
    from tasks.app.models import load_net

    net = load_net(uri, data).eval()
    names = get_encoder(facts.encoder).plane_names
    hits = total = counted = 0
    for batch in _stream(facts, "val", seed):
        take = min(len(batch), limit - total)
        kept = rollout_training.examples(batch.planes[:take], batch.move[:take], names, facts.board_size)
        logits = net(torch.from_numpy(batch.planes[kept.rows]))  # (B, N*N+1)
        logits = logits[0] if isinstance(logits, tuple) else logits  # a dual net's policy
        hits += int(np.sum(logits.argmax(dim=1).numpy() == kept.targets))
        total += take
        counted += len(kept)
        if total >= limit:
            break
    return hits / max(counted, 1)
