"""Checkpoints: round trips of models and training state, and refusal of unsafe or damaged files."""

from __future__ import annotations

import hashlib
import json
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gocore.nn.nets import build_net, preset
from storage.checkpoints import (
    CONFIG_FILE,
    WEIGHTS_FILE,
    CheckpointError,
    capture_rng_state,
    load_model,
    load_training_checkpoint,
    load_weights,
    read_model_info,
    restore_rng_state,
    save_model,
    save_training_checkpoint,
)
from tests.helpers import Planted


def _trained_net(family: str = "dual", steps: int = 3) -> torch.nn.Module:
    """A tiny 5x5 net whose BN running stats and weights have moved off their initial values."""
    torch.manual_seed(0)
    net = build_net(preset("tiny", 5, 17, family))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(steps):
        out = net(torch.randn(4, 17, 5, 5))
        loss = sum(o.square().mean() for o in (out if isinstance(out, tuple) else (out,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return net.eval()


def _outputs(net: torch.nn.Module, planes: torch.Tensor) -> tuple[torch.Tensor, ...]:
    with torch.no_grad():
        out = net(planes)
    return out if isinstance(out, tuple) else (out,)


def _rehash(model_dir: Path) -> None:
    """Make config.json vouch for whatever weights.pt now holds (as an attacker could)."""
    meta = json.loads((model_dir / CONFIG_FILE).read_text())
    meta["weights_sha256"] = hashlib.sha256((model_dir / WEIGHTS_FILE).read_bytes()).hexdigest()
    (model_dir / CONFIG_FILE).write_text(json.dumps(meta))


# ---------------------------------------------------------------- models

@pytest.mark.parametrize("family", ["dual", "policy", "value"])  # rollout: tests/tasks/test_rollout_task.py
def test_saved_model_loads_with_identical_outputs_and_tensors(tmp_path: Path, family: str) -> None:
    net = _trained_net(family)
    save_model(tmp_path / "model", net, net.config.to_dict(), extra={"generation": 3})
    loaded, config = load_model(tmp_path / "model", build_net)
    assert config == net.config.to_dict() and loaded.config == net.config
    assert not loaded.training
    original, restored = net.state_dict(), loaded.state_dict()
    assert original.keys() == restored.keys()
    for key in original:
        assert torch.equal(original[key], restored[key]), key
    planes = torch.randn(3, 17, 5, 5)
    for a, b in zip(_outputs(net, planes), _outputs(loaded, planes)):
        assert torch.equal(a, b)


def test_model_directory_holds_weights_and_a_readable_config(tmp_path: Path) -> None:
    net = _trained_net()
    save_model(tmp_path / "model", net, net.config.to_dict(), extra={"dataset": "kgs-9x9"})
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == [CONFIG_FILE, WEIGHTS_FILE]
    info = read_model_info(tmp_path / "model")
    assert info["config"]["family"] == "dual" and info["extra"] == {"dataset": "kgs-9x9"}
    state, config = load_weights(tmp_path / "model")
    assert config == net.config.to_dict() and all(t.device.type == "cpu" for t in state.values())


def test_saving_over_a_model_replaces_it(tmp_path: Path) -> None:
    first, second = _trained_net(steps=1), _trained_net(steps=4)
    save_model(tmp_path / "model", first, first.config.to_dict())
    save_model(tmp_path / "model", second, second.config.to_dict())
    loaded, _ = load_model(tmp_path / "model", build_net)
    assert torch.equal(loaded.state_dict()["stem.0.weight"], second.state_dict()["stem.0.weight"])


def test_weights_that_do_not_fit_the_config_are_refused(tmp_path: Path) -> None:
    net = _trained_net()
    save_model(tmp_path / "model", net, {**net.config.to_dict(), "filters": 16})
    with pytest.raises(CheckpointError, match="do not fit the net built from its config"):
        load_model(tmp_path / "model", build_net)


def test_half_overwritten_model_is_refused(tmp_path: Path) -> None:
    net = _trained_net()
    save_model(tmp_path / "model", net, net.config.to_dict())
    torch.save({"stem.0.weight": torch.zeros(1)}, tmp_path / "model" / WEIGHTS_FILE)
    with pytest.raises(CheckpointError, match="does not match the hash"):
        load_weights(tmp_path / "model")


def test_missing_model_or_config_is_a_checkpoint_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no such model directory"):
        load_weights(tmp_path / "nowhere")
    (tmp_path / "model").mkdir()
    torch.save({}, tmp_path / "model" / WEIGHTS_FILE)
    with pytest.raises(CheckpointError, match=f"no {CONFIG_FILE}"):
        load_weights(tmp_path / "model")


def test_unsaveable_config_is_refused_before_writing(tmp_path: Path) -> None:
    net = _trained_net()
    with pytest.raises(CheckpointError, match="not JSON data"):
        save_model(tmp_path / "model", net, {"device": torch.device("cpu")})
    assert not (tmp_path / "model" / CONFIG_FILE).exists()


# ---------------------------------------------------------------- unsafe and damaged files

def test_planted_payload_really_runs_code_when_unpickled(tmp_path: Path) -> None:
    """Control: the payloads below are live, so their refusal below means something."""
    marker = tmp_path / "marker"
    pickle.loads(pickle.dumps(Planted(marker)))
    assert marker.exists()


@pytest.mark.parametrize("writer", ["pickle.dump", "torch.save"])
def test_planted_pickle_in_a_model_is_refused_without_running(tmp_path: Path, writer: str) -> None:
    marker = tmp_path / "marker"
    net = _trained_net()
    save_model(tmp_path / "model", net, net.config.to_dict())
    payload = {"stem.0.weight": Planted(marker)}
    with open(tmp_path / "model" / WEIGHTS_FILE, "wb") as handle:
        (pickle.dump if writer == "pickle.dump" else torch.save)(payload, handle)
    _rehash(tmp_path / "model")
    with pytest.raises(CheckpointError, match="is not a weights-only checkpoint") as caught:
        load_model(tmp_path / "model", build_net)
    assert WEIGHTS_FILE in str(caught.value)
    assert not marker.exists()


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_planted_pickle_as_a_training_checkpoint_is_refused_without_running(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / "marker"
    with open(tmp_path / "raw.pt", "wb") as handle:
        pickle.dump(Planted(marker), handle, protocol=protocol)
    torch.save({"format": "gozero-training-checkpoint", "model": Planted(marker)}, tmp_path / "saved.pt")
    for name in ("raw.pt", "saved.pt"):
        with pytest.raises(CheckpointError, match=rf"{name}: is not a weights-only checkpoint"):
            load_training_checkpoint(tmp_path / name)
    assert not marker.exists()


def test_refusal_names_the_blocked_object(tmp_path: Path) -> None:
    torch.save({"x": Planted(tmp_path / "marker")}, tmp_path / "saved.pt")
    with pytest.raises(CheckpointError, match="plant_marker"):
        load_training_checkpoint(tmp_path / "saved.pt")


def test_truncated_checkpoint_is_a_checkpoint_error(tmp_path: Path) -> None:
    net = _trained_net()
    path = save_training_checkpoint(tmp_path / "step-1.pt", net.state_dict(), {}, 1, {})
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 30):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=r"step-1\.pt: corrupt or truncated"):
            load_training_checkpoint(path)


def test_truncated_model_weights_are_a_checkpoint_error(tmp_path: Path) -> None:
    net = _trained_net()
    save_model(tmp_path / "model", net, net.config.to_dict())
    weights = tmp_path / "model" / WEIGHTS_FILE
    weights.write_bytes(weights.read_bytes()[:1000])
    _rehash(tmp_path / "model")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_weights(tmp_path / "model")


@pytest.mark.parametrize(("content", "reason"), [(None, "no such file"), (b"", "empty file"),
                                                 (b"not a checkpoint at all", "corrupt or truncated")])
def test_missing_empty_or_garbage_file_is_a_checkpoint_error(tmp_path: Path, content: bytes | None,
                                                             reason: str) -> None:
    path = tmp_path / "step-9.pt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CheckpointError, match=reason) as caught:
        load_training_checkpoint(path)
    assert caught.value.path == path


def test_other_torch_file_is_not_taken_for_a_training_checkpoint(tmp_path: Path) -> None:
    torch.save({"weights": torch.ones(2)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a gozero-training-checkpoint"):
        load_training_checkpoint(tmp_path / "other.pt")


def test_state_that_would_not_load_back_is_refused_at_save(tmp_path: Path) -> None:
    net = _trained_net()
    with pytest.raises(CheckpointError, match=r"checkpoint\['rng'\]\['numpy'\]: a numpy.ndarray"):
        save_training_checkpoint(tmp_path / "c.pt", net.state_dict(), {}, 1, {},
                                 rng_state={"numpy": np.zeros(3)})
    assert not (tmp_path / "c.pt").exists()


# ---------------------------------------------------------------- training state

def _train_steps(net: torch.nn.Module, optimizer: torch.optim.Optimizer, steps: int) -> list[float]:
    """SGD steps on batches drawn from the global torch RNG; returns each step's loss."""
    losses = []
    for _ in range(steps):
        planes = (torch.rand(4, 17, 5, 5) < 0.3).float()  # (B, C, N, N)
        moves, outcomes = torch.randint(0, 26, (4,)), torch.rand(4) * 2 - 1  # (B,), (B,)
        logits, value = net(planes)
        loss = F.cross_entropy(logits, moves) + F.mse_loss(value, outcomes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("optimizer_name", ["adamw", "sgd-momentum"])
def test_resumed_training_continues_exactly(tmp_path: Path, optimizer_name: str) -> None:
    def make(seed: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        torch.manual_seed(seed)
        net = build_net(preset("tiny", 5, 17))
        if optimizer_name == "adamw":
            return net, torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
        return net, torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

    net, optimizer = make(seed=0)
    _train_steps(net, optimizer, 3)
    path = save_training_checkpoint(tmp_path / "step-3.pt", net.state_dict(), optimizer.state_dict(), 3,
                                    {"lr": 1e-3}, rng_state=capture_rng_state(), extra={"games_seen": 12})
    uninterrupted = _train_steps(net, optimizer, 2)

    resumed_net, resumed_optimizer = make(seed=1)  # different weights until the load
    checkpoint = load_training_checkpoint(path)
    resumed_net.load_state_dict(checkpoint.model_state)
    resumed_optimizer.load_state_dict(checkpoint.optimizer_state)
    restore_rng_state(checkpoint.rng_state)
    assert checkpoint.step == 3 and checkpoint.config == {"lr": 1e-3} and checkpoint.extra == {"games_seen": 12}
    assert _train_steps(resumed_net, resumed_optimizer, 2) == uninterrupted
    for a, b in zip(net.parameters(), resumed_net.parameters()):
        assert torch.equal(a, b)


def test_resuming_without_optimizer_state_would_diverge(tmp_path: Path) -> None:
    """Control for the test above: the optimizer state is what makes the next steps match."""
    torch.manual_seed(0)
    net = build_net(preset("tiny", 5, 17))
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    _train_steps(net, optimizer, 3)
    path = save_training_checkpoint(tmp_path / "step-3.pt", net.state_dict(), optimizer.state_dict(), 3, {},
                                    rng_state=capture_rng_state())
    uninterrupted = _train_steps(net, optimizer, 2)
    checkpoint = load_training_checkpoint(path)
    fresh = build_net(preset("tiny", 5, 17))
    fresh.load_state_dict(checkpoint.model_state)
    restore_rng_state(checkpoint.rng_state)
    assert _train_steps(fresh, torch.optim.AdamW(fresh.parameters(), lr=1e-3), 2)[1] != uninterrupted[1]


def test_rng_state_round_trip_restores_every_generator(tmp_path: Path) -> None:
    torch.manual_seed(7)
    np.random.seed(7)
    random.seed(7)
    save_training_checkpoint(tmp_path / "c.pt", {}, {}, 0, {}, rng_state=capture_rng_state())
    expected = (torch.rand(3), np.random.rand(3), random.random())
    torch.manual_seed(8)
    np.random.seed(8)
    random.seed(8)
    restore_rng_state(load_training_checkpoint(tmp_path / "c.pt").rng_state)
    assert torch.equal(torch.rand(3), expected[0])
    assert np.array_equal(np.random.rand(3), expected[1])
    assert random.random() == expected[2]
