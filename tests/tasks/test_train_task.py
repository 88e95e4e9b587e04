"""The training task: a registered, loadable model with metrics and curves; a killed run resumes.

The dataset is made as in tests/gocore/nn/test_training.py (5x5 UCT-vs-random games through the
encode tasks' functions, no Prefect server), inside a data dir so the task finds it by layout.
MLflow is the session's SQLite store (tests/conftest.py), shared with other tests: version
numbers are read from results, never assumed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from gocore.nn.nets import build_net
from gocore.nn.training import TINY
from storage import checkpoints, layout, mlflow_store, registry, run_dirs, runs
from tasks import train as train_task
from tasks.train import train_model
from tests.helpers import build_uct_dataset

SIZE = 5
GAMES = 120
DATASET = "uct5"
CONFIG = dataclasses.replace(TINY, steps=30, batch_size=32, checkpoint_every=10, val_every=15, val_batches=5,
                             log_every=5, device="cpu")

def build_dataset(data: Path, games: int = GAMES, name: str = DATASET) -> Path:
    """An ingested dataset of 5x5 UCT(30)-vs-random games at <data>/datasets/<name>/; its directory."""
    return build_uct_dataset(layout.raw_dir(data, "uct-vs-random"), layout.dataset_dir(data, name), games, SIZE)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A dataset and one uninterrupted 30-step policy run on it."""
    data = tmp_path_factory.mktemp("train-task")
    dataset = build_dataset(data)
    result = train_model.fn(str(dataset), "policy", "tiny", CONFIG.to_dict(), str(data), "whole")
    return SimpleNamespace(data=data, dataset=dataset, result=result)


def sample_planes() -> torch.Tensor:
    """A few random 0/1 agz17 positions."""
    generator = torch.Generator().manual_seed(7)
    return torch.randint(0, 2, (6, 17, SIZE, SIZE), generator=generator).float()  # (B, 17, N, N)


def test_training_registers_a_version_that_loads_as_the_trained_net(trained: SimpleNamespace) -> None:
    result = trained.result
    assert (result.step, result.start_step, result.device) == (CONFIG.steps, 0, "cpu")
    assert result.model_uri == f"models:/gozero-5x5-policy/{result.version}"
    info = registry.describe("gozero-5x5-policy", result.version)
    assert info.run.run_id == result.run_id and info.tags["dataset"] == DATASET
    loaded, config = registry.load(result.model_uri, build_net)
    assert config["family"] == "policy" and config["encoder"] == "agz17"
    directory = layout.checkpoint_dir(trained.data, "whole")
    last = train_task.latest_checkpoint(directory)
    assert last.step == CONFIG.steps
    trained_net = build_net(config)
    trained_net.load_state_dict(last.model_state)  # the module as training left it
    saved, _ = checkpoints.load_model(directory / "model", build_net)
    planes = sample_planes()
    with torch.no_grad():
        expected = trained_net.eval()(planes)
        assert torch.equal(loaded(planes), expected) and torch.equal(saved(planes), expected)


def test_the_run_holds_params_metrics_and_curves(trained: SimpleNamespace) -> None:
    run = runs.describe_run(trained.result.run_id)
    assert run.status == "FINISHED"
    assert run.params["dataset"] == DATASET and run.params["code_version"]
    assert len(run.params["dataset.manifest_id"]) == 16 and run.params["train.objective"] == "policy"
    assert {"train/loss", "train/policy_top1", "val/policy_top1", "val_policy_accuracy"} <= set(run.metrics)
    store = mlflow_store.client()
    assert [m.step for m in store.get_metric_history(run.run_id, "train/loss")] == [5, 10, 15, 20, 25, 30]
    assert [a.path for a in store.list_artifacts(run.run_id, "plots")] == [runs.CURVES_ARTIFACT]
    assert trained.result.metrics["val_policy_accuracy"] == run.metrics["val/policy_top1"]


def test_a_killed_run_resumes_from_its_checkpoint_and_ends_like_an_uninterrupted_one(
        trained: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    report = train_task._Recorder.report

    def killed_at_25(self, step: int, metrics: dict[str, float]) -> None:
        if step >= 25:
            raise KeyboardInterrupt("killed")  # like Ctrl-C: the MLflow run ends KILLED
        report(self, step, metrics)

    monkeypatch.setattr(train_task._Recorder, "report", killed_at_25)
    arguments = (str(trained.dataset), "policy", "tiny", CONFIG.to_dict(), str(trained.data), "resumed")
    with pytest.raises(KeyboardInterrupt):
        train_model.fn(*arguments)
    directory = layout.checkpoint_dir(trained.data, "resumed")
    assert [p.name for p in run_dirs.checkpoint_files(directory)] == ["step-00000010.pt", "step-00000020.pt"]
    monkeypatch.setattr(train_task._Recorder, "report", report)

    result = train_model.fn(*arguments)
    assert (result.start_step, result.step) == (20, CONFIG.steps)
    history = mlflow_store.client().get_metric_history(result.run_id, "train/loss")
    assert [m.step for m in history] == [5, 10, 15, 20, 25, 30]  # earlier points re-logged, none twice
    resumed, _ = registry.load(result.model_uri, build_net)
    whole, _ = registry.load(trained.result.model_uri, build_net)
    planes = sample_planes()
    with torch.no_grad():
        torch.testing.assert_close(resumed(planes), whole(planes))  # CPU: the same batches, the same steps

    assert train_model.fn(*arguments) == result  # finished: a rerun returns it without training again


def test_a_run_name_cannot_be_reused_for_another_family(trained: SimpleNamespace) -> None:
    with pytest.raises(ValueError, match="different family"):
        train_model.fn(str(trained.dataset), "value", "tiny", CONFIG.to_dict(), str(trained.data), "whole")


def test_the_default_run_key_is_stable_and_ignores_resumable_fields(trained: SimpleNamespace) -> None:
    facts = train_task.dataset_facts(trained.dataset)
    key = train_task.run_key(facts, "policy", "tiny", CONFIG)
    assert key.startswith("uct5-policy-tiny-")
    assert train_task.run_key(facts, "policy", "tiny", dataclasses.replace(CONFIG, steps=90)) == key
    assert train_task.run_key(facts, "policy", "tiny", dataclasses.replace(CONFIG, lr=1e-2)) != key


# --- self-play generations as training data, from a model's weights ----------------------------------

def play_generation(data: Path, generation: int, run: str = "", games: int = 4) -> None:
    """A few 5x5 self-play games without a net (uniform priors) as generation `generation`."""
    from tasks.app.selfplay_settings import SelfPlaySettings
    from tasks.selfplay import play_shard

    settings = SelfPlaySettings("uniform", sims=8, size=SIZE, max_moves=30, run=run)
    play_shard(settings, games, generation, seed=generation, data_dir=str(data))


def test_selfplay_generations_train_a_dual_net_from_a_given_models_weights(tmp_path: Path) -> None:
    from gocore.nn.nets import preset
    from tasks.app.models import load_net

    for generation in (0, 1):
        play_generation(tmp_path, generation, run="zero-5x5")
    facts = train_task.selfplay_facts(tmp_path, [0, 1], "zero-5x5")
    assert facts.name == "zero-5x5-gen0..1" and facts.board_size == SIZE and facts.encoder == "agz17"
    assert len(facts.path) == 2 and facts.rows > 0
    with pytest.raises(train_task.TrainError, match="no finished self-play games in generations 2"):
        train_task.selfplay_facts(tmp_path, [2], "zero-5x5")
    start = tmp_path / "start"
    config = preset("tiny", SIZE, 17)
    checkpoints.save_model(start, build_net(config), config.to_dict())
    zero_steps = dataclasses.replace(CONFIG, steps=1, checkpoint_every=1, val_every=1, log_every=1, lr=1e-9,
                                     weight_decay=0.0)
    result = train_task.train_and_register(facts, "dual", "tiny", zero_steps, tmp_path, "from-start",
                                           init_from=str(start))
    trained = dict(load_net(result.model_uri, tmp_path).named_parameters())
    for name, tensor in load_net(start).named_parameters():  # lr ~0: still the weights it started from
        assert torch.allclose(tensor, trained[name], atol=1e-6), name
    assert any(not torch.allclose(tensor, trained[name], atol=1e-3)  # not a fresh net that happens to match
               for name, tensor in build_net(config).named_parameters())
