"""The train_supervised flow once under the Prefect test harness; `gozero train` in-process.

The dataset recipe is the task test's (5x5 UCT-vs-random games), smaller: these tests check the
wiring (registered versions, the artifact, what the CLI prints), not what the nets learn.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from storage import registry, runs
from tests.helpers import read_artifact
from tests.tasks.test_train_task import build_dataset

GAMES = 40
DATASET = "uct5"

@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the dataset `uct5`."""
    root = tmp_path_factory.mktemp("train-flow")
    build_dataset(root, GAMES, DATASET)
    return root


def test_the_flow_trains_and_registers_a_policy_and_a_value_net(prefect_harness, data: Path) -> None:
    from flows.train_supervised import run_train_supervised
    from tasks.app.supervised_settings import SupervisedSettings

    settings = SupervisedSettings(DATASET, "policy", "tiny", steps=30, batch_size=32, also_value=True)
    results = run_train_supervised(settings, data_dir=str(data), device="cpu", run_name="flow")
    assert set(results) == {"policy", "value"}
    for family, result in results.items():
        assert result.step == 30
        assert result.model_uri == f"models:/gozero-5x5-{family}/{result.version}"
        assert runs.describe_run(result.run_id).status == "FINISHED"
    assert "val/value_mse" in results["value"].metrics and "val/policy_top1" in results["policy"].metrics
    report = read_artifact("train-uct5")
    assert report is not None
    for result in results.values():
        assert result.run_id in report.data and result.model_uri in report.data


def test_cli_trains_and_prints_the_run_id_and_model_uri(data: Path) -> None:
    result = CliRunner().invoke(app, ["train", "--dataset", DATASET, "--family", "dual", "--preset", "tiny",
                                      "--steps", "20", "--batch-size", "32", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    run_id = re.search(r"MLflow run: ([0-9a-f]{32})", result.stdout)[1]
    uri = re.search(r"model: (models:/gozero-5x5/\d+)", result.stdout)[1]
    assert runs.describe_run(run_id).status == "FINISHED"
    assert registry.describe(*registry.parse_model_uri(uri)).run.run_id == run_id
    # the final metrics by the names `gozero models list` uses, four decimals (not "5" for 5.000012)
    assert re.search(r"train/loss \d+\.\d{4}, val_policy_accuracy 0\.\d{4}, val_value_mse \d\.\d{4}", result.stdout)


@pytest.mark.parametrize("arguments, message", [
    (["--dataset", "nope"], f"make it with gozero ingest; datasets here: {DATASET}"),
    (["--dataset", DATASET, "--preset", "huge"], "unknown preset 'huge'"),
    (["--dataset", DATASET, "--family", "rollout"], "model 'rollout' is not one of"),
    (["--dataset", DATASET, "--device", "cuda:7"], "device 'cuda:7' was requested"),
    (["--dataset", DATASET, "--flow", "--init-from", "models:/x/1"], "--init-from train in-process"),  # not ignored
])
def test_cli_refuses_bad_input_in_one_red_line(arguments: list[str], message: str, data: Path) -> None:
    result = CliRunner().invoke(app, ["train", *arguments, "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    assert message in result.stderr and result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.output and result.stdout == ""


def test_a_cpu_run_sized_for_a_gpu_says_so_before_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    import flows.cli.train as cli_train
    from gocore.nn.training import PRESETS

    printed: list[str] = []
    monkeypatch.setattr(cli_train.console, "print", lambda text, **_: printed.append(str(text)))
    cli_train._warn_if_long_on_cpu(PRESETS["small"], "cpu", "small")
    cli_train._warn_if_long_on_cpu(PRESETS["tiny"], "cpu", "tiny")
    (line,) = printed
    assert "20,000 steps of 256 rows (5,120,000 rows) on the CPU" in line and "--preset tiny" in line
