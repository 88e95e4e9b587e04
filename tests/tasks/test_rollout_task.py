"""The rollout task: trains on an ingested dataset, registers once, and the weights come back.

MLflow is the session's SQLite store (tests/conftest.py), shared with other tests: version
numbers are read from results, never assumed.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from gocore.nn import rollout_training
from gocore.nn.nets import RolloutPolicy
from gocore.nn.rollout_training import RolloutTrainConfig, RolloutTrainError
from gocore.rules.board import Position
from gocore.search.rollout import PatternRollouts
from storage import layout, registry
from tasks import rollout as rollout_task
from tasks.app.models import ModelError, load_net, load_rollout_policy
from tasks.rollout import train_rollout
from tasks.train import dataset_facts
from tests.helpers import build_uct_dataset

SIZE = 5
CONFIG = RolloutTrainConfig(steps=150, batch_size=64, lr=0.05)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    data = tmp_path_factory.mktemp("rollout-task")
    dataset = build_uct_dataset(layout.raw_dir(data, "uct"), layout.dataset_dir(data, "uct5"), 40, SIZE)
    result = train_rollout.fn("uct5", SIZE, CONFIG, str(data), max_rows=2000, val_rows=1000)
    return SimpleNamespace(data=data, dataset=dataset, result=result)


def test_the_reported_accuracies_are_the_registered_models_on_held_out_rows(trained: SimpleNamespace) -> None:
    result = trained.result
    assert result.model_name == "gozero-5x5-rollout" and not result.reused
    assert result.train_examples > 500 and result.val_examples > 20
    facts = dataset_facts(trained.dataset)
    val = rollout_task.read_examples(facts, "val", 1000, CONFIG.seed)
    net = load_net(result.model_uri, trained.data)
    assert len(val) == result.val_examples
    assert result.val_accuracy == pytest.approx(rollout_training.accuracy(net, val), abs=1e-4)
    assert result.uniform_accuracy == pytest.approx(rollout_training.uniform_accuracy(val), abs=1e-4)
    assert 0.05 < result.uniform_accuracy < 0.5  # about one in the ~10 candidates of a 5x5 game


def test_a_rerun_with_the_same_inputs_registers_no_second_version(trained: SimpleNamespace) -> None:
    again = train_rollout.fn(str(trained.dataset), SIZE, CONFIG, str(trained.data), max_rows=2000, val_rows=1000)
    assert again.reused and again.version == trained.result.version and again.key == trained.result.key
    assert again.val_accuracy == pytest.approx(trained.result.val_accuracy, abs=1e-4)
    versions = registry.list_versions("gozero-5x5-rollout", trained.data)
    assert [v.version for v in versions if v.tags["rollout_key"] == again.key] == [again.version]


def test_registered_weights_load_weights_only_and_play_rollouts(trained: SimpleNamespace) -> None:
    net = load_net(trained.result.model_uri, trained.data)
    assert isinstance(net, RolloutPolicy) and net.config.family == "rollout"
    weights = net.weights_array()
    assert np.count_nonzero(weights) > 100  # trained, not the zero initialisation
    ids = torch.tensor([[[0, 1, 2, 3], [-1, -1, -1, -1]]])
    assert net(ids)[0, 0].item() == pytest.approx(weights[:4].sum(), rel=1e-6)
    assert net(ids)[0, 1].item() == float("-inf")
    scores = PatternRollouts(weights).scores(Position.initial(SIZE), 20, seed=1)
    assert scores.shape == (20,) and np.all(np.abs(scores) <= SIZE * SIZE + 7.5)


def test_a_wrong_board_size_is_refused_before_training(trained: SimpleNamespace) -> None:
    with pytest.raises(RolloutTrainError, match="is 5x5, not 9x9"):
        train_rollout.fn(str(trained.dataset), 9, CONFIG, str(trained.data))


def test_load_rollout_policy_refuses_another_size(trained: SimpleNamespace) -> None:
    rollouts = load_rollout_policy(trained.result.model_uri, SIZE, trained.data)
    assert np.array_equal(rollouts.weights, load_net(trained.result.model_uri, trained.data).weights_array())
    with pytest.raises(ModelError, match="not a 9x9 rollout policy"):
        load_rollout_policy(trained.result.model_uri, 9, trained.data)
