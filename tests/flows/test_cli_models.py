"""`gozero models list|show|promote` through typer's runner, against a real SQLite-backed MLflow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli.models import models_app
from gocore.nn.nets import build_net, preset
from storage import registry, runs
from storage.checkpoints import save_model

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data dir holding gozero-9x9 versions 1 (champion) and 2, for every test of the module."""
    data = tmp_path_factory.mktemp("cli-models") / "gozero-data"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        patch.delenv("GOZERO_DATA", raising=False)  # the commands must honour --data-dir
        for generation in (1, 2):
            net = build_net(preset("tiny", 9, 17)).eval()
            model_dir = save_model(data / f"gen{generation}", net, net.config.to_dict())
            with runs.training_run(9, {"net": net.config, "lr": 0.01}, data=data) as run_id:
                runs.log_metrics(run_id, {"val_accuracy": 0.1 * generation}, 10, data=data)
                runs.log_model(run_id, model_dir, data=data)
            registry.register(run_id, generation=generation, data=data)
        registry.promote("gozero-9x9", 1, "first net", {"gate_win_rate": 0.55}, data=data)
        yield data


def invoke(*args: str):
    """Run `gozero models ARGS` with a wide terminal, so table cells are not wrapped."""
    return RUNNER.invoke(models_app, list(args), env={"COLUMNS": "80"})  # the width a pipe gets


def rows(output: str, name: str) -> dict[str, str]:
    """{version: its table row, continuation lines included} of model `name` in `list` output."""
    found: dict[str, str] = {}
    version = None
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0].startswith("gozero-"):
            version = cells[1] if cells[0] == name else None
            found.update({version: ""} if version else {})
        if version and cells:
            found[version] += line + "\n"
    return found


def test_list_shows_versions_aliases_generations_and_key_metrics(store: Path) -> None:
    result = invoke("list", "--size", "9", "--data-dir", str(store))
    assert result.exit_code == 0, result.output
    listed = rows(result.output, "gozero-9x9")
    assert sorted(listed) == ["1", "2"]
    assert "champion" in listed["1"] and "gate_win_rate=0.55" in listed["1"] and "val_accuracy=0.1" in listed["1"]
    assert "champion" not in listed["2"] and "dual" in listed["2"]


def test_list_of_a_size_without_models_says_so(store: Path) -> None:
    result = invoke("list", "--size", "13", "--data-dir", str(store))
    assert result.exit_code == 0 and "no registered gozero models yet for 13x13" in result.output


def test_show_prints_tags_params_metrics_and_source(store: Path) -> None:
    result = invoke("show", "models:/gozero-9x9@champion", "--data-dir", str(store))
    assert result.exit_code == 0, result.output
    assert "models:/gozero-9x9/1" in result.output and "aliases: champion" in result.output
    for text in ("promotion_reason", "first net", "net.blocks", "val_accuracy", "source: file://"):
        assert text in result.output
    by_name = invoke("show", "gozero-9x9", "2", "--data-dir", str(store))
    assert by_name.exit_code == 0 and "models:/gozero-9x9/2" in by_name.output


def test_promote_moves_champion_and_records_evidence(store: Path) -> None:
    result = invoke("promote", "gozero-9x9", "2", "--reason", "won the gate", "--evidence", "gate_win_rate=0.61",
                    "--evidence", "games=200", "--data-dir", str(store))
    assert result.exit_code == 0, result.output
    assert "gozero-9x9: champion is now version 2 (was version 1)" in result.output
    champion = registry.describe("gozero-9x9", "champion", data=store)
    assert champion.version == 2 and champion.tags["games"] == "200" and champion.tags["previous_champion"] == "1"
    listed = rows(invoke("list", "--data-dir", str(store)).output, "gozero-9x9")
    assert "champion" in listed["2"] and "champion" not in listed["1"]


def test_promote_takes_a_models_uri_as_show_does(store: Path) -> None:
    first = invoke("promote", "models:/gozero-9x9/1", "--reason", "by uri", "--data-dir", str(store))
    assert first.exit_code == 0 and registry.describe("gozero-9x9", "champion", data=store).version == 1, first.output
    result = invoke("promote", "models:/gozero-9x9/2", "--reason", "by uri", "--data-dir", str(store))
    assert result.exit_code == 0, result.output
    assert "gozero-9x9: champion is now version 2 (was version 1)" in result.output
    assert registry.describe("gozero-9x9", "champion", data=store).version == 2


@pytest.mark.parametrize(("args", "message"), [
    (("promote", "gozero-7x7", "1", "--reason", "x"), "no registered model 'gozero-7x7'"),
    (("promote", "gozero-9x9", "9", "--reason", "x"), "gozero-9x9 has no version 9"),
    (("promote", "gozero-9x9", "1", "--reason", "x", "--evidence", "oops"), "--evidence takes KEY=VALUE"),
    (("show", "models:/gozero-9x9@nope"), "gozero-9x9 has no alias 'nope'"),
    (("show", "nope'name"), "is not a model name"),
    (("promote", "gozero-9x9", "1", "--reason", "x", "--evidence", "family=x"), "evidence keys ['family'] are reserved"),
    (("promote", "gozero-9x9", "--reason", "x"), "which version of gozero-9x9?"),
    (("promote", "models:/gozero-9x9@champion", "--reason", "x"), "a version number, not an alias"),
    (("promote", "models:/gozero-9x9/9", "--reason", "x"), "gozero-9x9 has no version 9"),
])
def test_errors_print_one_line_and_exit_1(store: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke(*args, "--data-dir", str(store))
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_a_rated_version_lists_its_rough_rank_and_gtp_names_it(store: Path, tmp_path: Path) -> None:
    from tasks.app.models import model_strength
    from tasks.ladder import LadderRow, tag_rated_versions

    ladder = [LadderRow("gnugo-1", 300.0, 40.0, 40, 20.0, None), LadderRow("gozero-9x9/2", 340.0, 30.0, 84, 45.0, 2),
              LadderRow("random", 0.0, None, 50, 5.0, None)]
    assert tag_rated_versions(store, 9, ladder) == 1
    tags = registry.describe("gozero-9x9", "2", store).tags
    assert tags["strength"] == f"{tags['rank']} (Elo +40 ± 98 (95 %) vs GNU Go level 1, 84 games)"
    assert float(tags["elo"]) == 340.0 and tags["elo_games"] == "84"
    listed = rows(invoke("list", "--size", "9", "--data-dir", str(store)).output, "gozero-9x9")
    assert "vs GNU Go level 1" in " ".join(listed["2"].split()) and "GNU Go" not in listed["1"]
    assert model_strength("models:/gozero-9x9/2", store) == f"gozero-9x9 v2, {tags['strength']}"
    assert model_strength("models:/gozero-9x9/1", store) == "gozero-9x9 v1, not on the ladder"
    assert model_strength(str(tmp_path), store) is None  # a model directory has no registry tags


def test_show_says_whether_the_dataset_is_still_the_build_a_version_was_trained_on(store: Path) -> None:
    from storage import datasets, layout

    folder = layout.dataset_dir(store, "lineage-set")
    folder.mkdir(parents=True)
    datasets.write_manifest(folder, {"rows": 12, "shards": []})
    trained_on = datasets.manifest_id(datasets.read_manifest(folder))
    net = build_net(preset("tiny", 9, 17)).eval()
    model_dir = save_model(store / "lineage", net, net.config.to_dict())
    with runs.training_run(9, {"net": net.config}, data=store) as run_id:
        runs.log_model(run_id, model_dir, data=store)
    version = registry.register(run_id, dataset="lineage-set", dataset_key=trained_on, data=store)
    assert registry.describe("gozero-9x9", version, store).tags["dataset_key"] == trained_on
    shown = " ".join(invoke("show", f"models:/gozero-9x9/{version}", "--data-dir", str(store)).output.split())
    assert f"dataset lineage-set: the build it was trained on ({trained_on})" in shown
    datasets.write_manifest(folder, {"rows": 2, "shards": []})  # the same name, rebuilt from other games
    shown = " ".join(invoke("show", f"models:/gozero-9x9/{version}", "--data-dir", str(store)).output.split())
    assert "dataset lineage-set has been rebuilt since this model was trained" in shown and trained_on in shown
    with pytest.raises(registry.RegistryError, match="reserved"):
        registry.tag_version("gozero-9x9", version, {"dataset_key": "0" * 16}, store)
