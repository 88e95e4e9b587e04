"""Training: the loss falls and beats the most-frequent-move baseline, a killed run resumes exactly.

The dataset is made the way ingest makes one (the encode tasks' functions, without a Prefect
server) from 5x5 games of UCT (30 simulations) against a random player: on 5x5, 30 simulations
try every move, so UCT's moves carry a signal; on 9x9 they would be nearly uniform.
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from gocore.nn.nets import build_net, preset
from gocore.nn.training import (
    PRESETS,
    TINY,
    TrainConfig,
    TrainError,
    TrainState,
    check_objective,
    learning_rate,
    loss_terms,
    train,
)
from storage.checkpoints import load_training_checkpoint, save_training_checkpoint
from storage.memory_batches import InMemoryBatches
from storage.stream import BatchStream, StreamFactory
from tasks.app.rows import ROW_DECODER
from tests.helpers import build_uct_dataset

SIZE = 5
GAMES = 300
VAL_PERCENT = 10
REPO = Path(__file__).resolve().parents[3]

@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ingested dataset of UCT-vs-random 5x5 games (about 10k rows, 4 shards)."""
    root = tmp_path_factory.mktemp("training")
    return build_uct_dataset(root / "raw" / "uct-vs-random", root / "datasets" / "uct5", GAMES, SIZE)


def tiny_net(family: str = "dual") -> torch.nn.Module:
    torch.manual_seed(0)
    return build_net(preset("tiny", SIZE, 17, family=family, encoder="agz17"))


def moves_of(dataset: Path, split: str) -> np.ndarray:
    stream = BatchStream(dataset, 1024, decoder=ROW_DECODER, split=split, val_percent=VAL_PERCENT, epochs=1, prefetch=0)
    return np.concatenate([batch.move for batch in stream])


def test_loss_falls_and_policy_beats_the_most_frequent_move(dataset: Path) -> None:
    train_moves, val_moves = moves_of(dataset, "train"), moves_of(dataset, "val")
    baseline = float(np.mean(val_moves == np.bincount(train_moves).argmax()))
    config = dataclasses.replace(TINY, steps=300, batch_size=64, lr=5e-3, val_every=150, val_batches=100,
                                 log_every=20)
    factory = StreamFactory(dataset, 64, ROW_DECODER, val_percent=VAL_PERCENT, shuffle_buffer=4096, seed=1,
                            random_symmetry=True)
    reports: list[tuple[int, dict[str, float]]] = []
    result = train(tiny_net(), factory, config, on_metrics=lambda step, m: reports.append((step, m)))

    train_reports = [m for _, m in reports if "train/loss" in m]
    assert result.step == 300 and len(train_reports) == 15
    assert np.mean([m["train/loss"] for m in train_reports[-3:]]) < train_reports[0]["train/loss"] - 0.3
    assert {"train/policy_loss", "train/value_mse", "train/policy_top1", "train/lr", "train/l2",
            "train/samples_per_s", "train/data_wait"} <= set(train_reports[-1])
    val_steps = [step for step, m in reports if "val/policy_top1" in m]
    assert val_steps == [150, 300]
    assert result.val_metrics["rows"] == len(val_moves)  # the whole validation split was read
    assert result.val_metrics["policy_top1"] > baseline + 0.02, (result.val_metrics, baseline)
    assert result.val_metrics["value_mse"] < 1.0  # better than always answering 0
    assert train_reports[-1]["train/lr"] == pytest.approx(5e-4)  # dropped x0.1 after 75%


KILLABLE_RUN = """
import sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.gocore.nn.test_training import run_resumable
run_resumable(Path({dataset!r}), Path({checkpoint!r}), pause_at={pause_at}, marker=Path({marker!r}))
"""


def kill_test_config() -> TrainConfig:
    return TrainConfig(objective="dual", steps=30, batch_size=16, optimizer="sgd", lr=0.02, lr_steps=(0.5,),
                       checkpoint_every=10, val_every=0, log_every=5, seed=3)


def run_resumable(dataset: Path, checkpoint: Path, pause_at: int | None = None,
                  marker: Path | None = None) -> torch.nn.Module:
    """Train (resuming from `checkpoint` if it exists), checkpointing there; optionally stop
    forever at step `pause_at` after touching `marker`, to be killed."""
    torch.set_num_threads(1)
    net = tiny_net()
    resume = load_training_checkpoint(checkpoint) if checkpoint.exists() else None

    def save(state: TrainState) -> None:
        save_training_checkpoint(checkpoint, **vars(state))  # the same field names, by design

    def on_metrics(step: int, metrics: dict[str, float]) -> None:
        if step == pause_at:
            marker.touch()
            time.sleep(600)

    factory = StreamFactory(dataset, 16, ROW_DECODER, shuffle_buffer=512, seed=7, random_symmetry=True)
    result = train(net, factory, kill_test_config(), save_checkpoint=save, resume=resume, on_metrics=on_metrics)
    assert result.step == 30 and np.isfinite(result.metrics["loss"])
    return net


def test_a_killed_run_resumes_to_the_same_step_and_weights(dataset: Path, tmp_path: Path) -> None:
    checkpoint, marker = tmp_path / "last.pt", tmp_path / "paused"
    script = KILLABLE_RUN.format(repo=str(REPO), dataset=str(dataset), checkpoint=str(checkpoint),
                                 pause_at=15, marker=str(marker))
    process = subprocess.Popen([sys.executable, "-c", script], cwd=REPO)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), f"the run did not reach step 15 (exit code {process.poll()})"
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert load_training_checkpoint(checkpoint).step == 10  # steps 11..15 were lost with the process

    resumed = run_resumable(dataset, checkpoint)
    assert load_training_checkpoint(checkpoint).step == 30
    uninterrupted = run_resumable(dataset, tmp_path / "fresh.pt")
    for name, tensor in uninterrupted.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], tensor), name


def test_a_run_resumed_with_loader_workers_ends_with_the_in_process_weights(dataset: Path) -> None:
    states: list[TrainState] = []
    config = kill_test_config()
    factory = StreamFactory(dataset, 16, ROW_DECODER, shuffle_buffer=512, seed=7, random_symmetry=True)
    uninterrupted = tiny_net()
    train(uninterrupted, factory, config, save_checkpoint=states.append)
    with_workers = dataclasses.replace(config, loader_workers=2)  # a resumable change: same batches
    resumed = tiny_net()
    train(resumed, dataclasses.replace(factory, loader_workers=2), with_workers, resume=states[0])
    assert states[0].step == 10
    for name, tensor in uninterrupted.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], tensor), name


def test_learning_rate_drops_after_each_fraction_of_the_steps() -> None:
    config = TrainConfig(steps=100, lr=0.1, lr_steps=(0.5, 0.75))
    rates = [learning_rate(config, step) for step in (1, 50, 51, 75, 76, 100)]
    assert rates == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])


def test_cosine_learning_rate_falls_from_lr_to_zero_and_keeps_old_configs_dicts() -> None:
    config = TrainConfig(steps=100, lr=0.1, lr_schedule="cosine")
    rates = [learning_rate(config, step) for step in (1, 51, 100)]
    assert rates == pytest.approx([0.1, 0.05, 0.1 * 0.5 * (1 + math.cos(math.pi * 99 / 100))])
    assert TrainConfig.from_dict(config.to_dict()) == config
    assert "lr_schedule" not in TrainConfig().to_dict()  # run keys of step-schedule runs are unchanged
    with pytest.raises(TrainError, match="lr_schedule"):
        TrainConfig(lr_schedule="linear")


def test_presets_are_valid_configs_and_round_trip_through_dicts() -> None:
    assert set(PRESETS) == {"tiny", "small", "full"}
    for config in PRESETS.values():
        assert TrainConfig.from_dict(config.to_dict()) == config
    with pytest.raises(TrainError, match="objective"):
        TrainConfig(objective="reinforce")
    with pytest.raises(TrainError, match="lr_steps"):
        TrainConfig(lr_steps=(1.5,))


def test_the_objective_must_match_the_net() -> None:
    check_objective(tiny_net("policy"), "policy")
    check_objective(tiny_net("value"), "value")
    with pytest.raises(TrainError, match="cannot train a 'policy' net"):
        check_objective(tiny_net("policy"), "dual")
    with pytest.raises(TrainError, match="cannot train a 'value' net"):
        check_objective(tiny_net("value"), "policy")


def test_a_one_hot_pi_gives_the_cross_entropy_of_the_move() -> None:
    net, planes = tiny_net(), torch.rand(8, 17, SIZE, SIZE)  # (B, C, N, N)
    move = torch.arange(8) * 3
    batch = {"planes": planes, "move": move, "value": torch.ones(8)}
    one_hot = torch.nn.functional.one_hot(move, SIZE * SIZE + 1).float()  # (B, N*N+1)
    with_moves, with_pi = loss_terms(net, "dual", batch), loss_terms(net, "dual", {**batch, "pi": one_hot})
    assert with_pi["policy_loss"].item() == pytest.approx(with_moves["policy_loss"].item(), rel=1e-5)
    assert with_pi["value_mse"].item() == pytest.approx(with_moves["value_mse"].item())


def test_value_and_policy_nets_train_on_in_memory_batches_with_soft_targets() -> None:
    rng = np.random.default_rng(0)
    planes = rng.integers(0, 2, (256, 17, SIZE, SIZE)).astype(np.float32)
    pi = rng.dirichlet(np.ones(SIZE * SIZE + 1), 256).astype(np.float32)
    value = np.sign(planes[:, 0].sum((1, 2)) - planes[:, 1].sum((1, 2))).astype(np.float32)
    memory = InMemoryBatches(planes, pi.argmax(1), value, pi, batch_size=32, seed=0)
    factory = lambda split, skip: InMemoryBatches(planes, pi.argmax(1), value, pi, batch_size=32,
                                                  skip_batches=skip, epochs=None if split == "train" else 1)
    config = dataclasses.replace(TINY, steps=20, batch_size=32, val_every=10, log_every=10)
    value_run = train(tiny_net("value"), factory, dataclasses.replace(config, objective="value"))
    assert set(value_run.metrics) >= {"loss", "value_mse"} and "policy_loss" not in value_run.metrics
    assert value_run.val_metrics["rows"] == len(memory)
    policy_run = train(tiny_net("policy"), factory, dataclasses.replace(config, objective="policy"))
    assert np.isfinite(policy_run.metrics["policy_loss"]) and "value_mse" not in policy_run.metrics


def test_resuming_with_a_different_config_is_refused(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    factory = StreamFactory(dataset, 16, ROW_DECODER, shuffle_buffer=256, seed=0)
    config = dataclasses.replace(kill_test_config(), steps=2, checkpoint_every=1)
    states = []
    train(tiny_net(), factory, config, save_checkpoint=states.append)
    assert [s.step for s in states] == [1, 2] and states[-1].extra == {"batches_consumed": 2}
    with pytest.raises(TrainError, match="lr"):
        train(tiny_net(), factory, dataclasses.replace(config, lr=0.5), resume=states[0])
    longer = train(tiny_net(), factory, dataclasses.replace(config, steps=3), resume=states[-1])
    assert (longer.start_step, longer.step) == (2, 3)
    from gocore.nn import conv_paths

    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)  # CPU bf16 autocast runs anywhere, emulated
    in_bf16 = train(tiny_net(), factory, dataclasses.replace(config, steps=3, cpu_bf16=True), resume=states[0])
    assert (in_bf16.start_step, in_bf16.step) == (1, 3)  # a loop's rerun may turn cpu_bf16 on or off mid-generation
    with pytest.raises(TrainError, match="batches of 16"):
        train(tiny_net(), factory, dataclasses.replace(config, batch_size=8))


def test_cpu_bf16_trains_in_bf16_only_where_the_cpu_does_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from gocore.nn import conv_paths
    from gocore.nn.cpu_precision import wanted

    rng = np.random.default_rng(0)
    planes = rng.integers(0, 2, (128, 17, SIZE, SIZE)).astype(np.float32)
    pi = rng.dirichlet(np.ones(SIZE * SIZE + 1), 128).astype(np.float32)
    value = np.sign(planes[:, 0].sum((1, 2)) - planes[:, 1].sum((1, 2))).astype(np.float32)
    factory = lambda split, skip: InMemoryBatches(planes, pi.argmax(1), value, pi, batch_size=32,  # noqa: E731
                                                  skip_batches=skip, epochs=None if split == "train" else 1)
    config = dataclasses.replace(TINY, steps=12, batch_size=32, val_every=0, log_every=6)

    def weights(cpu_bf16: bool) -> tuple[list[torch.Tensor], torch.nn.Module, dict[str, float]]:
        torch.manual_seed(0)
        net = tiny_net("dual")
        result = train(net, factory, dataclasses.replace(config, cpu_bf16=cpu_bf16))
        return [p.detach().clone() for p in net.parameters()], net, result.metrics

    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)  # CPU bf16 autocast runs anywhere, emulated
    plain, _, _ = weights(False)
    bf16, net, metrics = weights(True)
    assert np.isfinite(metrics["loss"])
    assert any(not torch.equal(a, b) for a, b in zip(plain, bf16))  # the steps really ran in bf16
    conv = next(m for m in net.modules() if isinstance(m, torch.nn.Conv2d)).weight
    assert conv.is_contiguous()  # NHWC while training only: the saved weights load anywhere
    assert wanted(True, torch.device("cpu")) and not wanted(False, torch.device("cpu"))
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: False)  # a CPU without it: float32, same weights
    assert not wanted(True, torch.device("cpu"))
    assert all(torch.equal(a, b) for a, b in zip(plain, weights(True)[0]))
    assert "cpu_bf16" not in TrainConfig().to_dict()  # run keys of float32 runs are unchanged
    asked = TrainConfig(cpu_bf16=True)
    assert TrainConfig.from_dict(asked.to_dict()) == asked


def test_cpu_bf16_is_a_setting_of_loops_and_recipes_that_reaches_their_training() -> None:
    from tasks.app.loop_settings import RESUMABLE, LoopSettings, loop_record
    from tasks.app.strong import StrongSettings
    from tasks.zero import candidate_config

    plain = LoopSettings(search="puct", aux_heads=False, playout_cap=False, forced_playouts=False)
    assert "cpu_bf16" not in loop_record(plain) and not candidate_config(plain, 3, 100).cpu_bf16
    asked = dataclasses.replace(plain, cpu_bf16=True)
    assert loop_record(asked)["cpu_bf16"] is True and candidate_config(asked, 3, 100).cpu_bf16
    assert "cpu_bf16" in RESUMABLE  # a rerun may turn it on or off
    recipe = StrongSettings(cpu_bf16=True)
    assert recipe.sl_config().cpu_bf16 and recipe.loop_settings("models:/x/1").cpu_bf16
    assert "cpu_bf16" not in StrongSettings().record() and recipe.record()["cpu_bf16"] is True
