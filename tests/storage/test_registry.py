"""Registry: runs, registration, promotion and safe loading against a real SQLite-backed MLflow."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gocore.nn.nets import DualNet, PolicyNet, build_net, preset
from storage import mlflow_store, registry, runs
from storage.checkpoints import CONFIG_FILE, WEIGHTS_FILE, save_model
from storage.mlflow_store import RegistryError
from tests.helpers import Planted

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data dir whose embedded store serves the module: creating one costs seconds."""
    data = tmp_path_factory.mktemp("registry") / "gozero-data"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        patch.setenv("GOZERO_DATA", str(data))
        yield data


def trained_net(family: str = "dual", size: int = 9, seed: int = 0) -> torch.nn.Module:
    """A tiny net whose weights and BN running statistics have moved off their initial values."""
    torch.manual_seed(seed)
    net = build_net(preset("tiny", size, 17, family))
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(2):
        out = net(torch.randn(4, 17, size, size))
        loss = sum(o.square().mean() for o in (out if isinstance(out, tuple) else (out,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return net.eval()


def outputs(net: torch.nn.Module, size: int = 9) -> tuple[torch.Tensor, ...]:
    """The net's outputs on fixed random planes."""
    planes = torch.randn(3, 17, size, size, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        out = net(planes)
    return out if isinstance(out, tuple) else (out,)


def same_outputs(a: torch.nn.Module, b: torch.nn.Module, size: int = 9) -> bool:
    return all(torch.equal(x, y) for x, y in zip(outputs(a, size), outputs(b, size), strict=True))


def log_and_register(net: torch.nn.Module, model_dir: Path, generation: int) -> tuple[str, int]:
    """One training run that logs `net`'s model dir, registered; (run id, version)."""
    save_model(model_dir, net, net.config.to_dict())
    with runs.training_run(net.config.board_size, {"net": net.config}, dataset="test-set") as run_id:
        runs.log_model(run_id, model_dir)
    return run_id, registry.register(run_id, generation=generation)


@pytest.fixture(scope="module")
def dual_versions(store: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[torch.nn.Module, Path]]:
    """Two registered versions of gozero-9x9, none promoted: {version: (net, local model dir)}."""
    models = tmp_path_factory.mktemp("dual-models")
    found = {}
    for generation in (1, 2):
        net = trained_net(seed=generation)
        _, version = log_and_register(net, models / f"gen{generation}", generation)
        found[version] = (net, models / f"gen{generation}")
    return found


@pytest.fixture(scope="module")
def policy_version(store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[torch.nn.Module, int]:
    """A registered AlphaGo policy net for 9x9 (never promoted): (net, version)."""
    net = trained_net("policy", seed=5)
    return net, log_and_register(net, tmp_path_factory.mktemp("policy") / "model", 1)[1]


# ---------------------------------------------------------------- store and names

def test_default_store_is_sqlite_with_artifacts_in_the_data_dir(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = mlflow_store.tracking_uri(tmp_path)
    assert uri == f"sqlite:///{tmp_path}/mlflow.db" and uri.startswith("sqlite:////")
    assert mlflow_store.artifact_root(uri) == (tmp_path / "mlartifacts").as_uri()


def test_tracking_uri_override_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///shared/m.db")
    assert mlflow_store.tracking_uri() == f"sqlite:///{tmp_path}/shared/m.db"
    assert mlflow_store.artifact_root(mlflow_store.tracking_uri()) == (tmp_path / "shared" / "mlartifacts").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert mlflow_store.tracking_uri() == "http://127.0.0.1:5000"
    assert mlflow_store.artifact_root("http://127.0.0.1:5000") is None  # the server decides


def test_model_names_per_board_size_and_family() -> None:
    assert runs.experiment_name(9) == registry.model_name(9) == "gozero-9x9"
    assert registry.model_name(19, "policy") == "gozero-19x19-policy"


def test_code_version_names_the_checkout_commit() -> None:
    assert mlflow_store.code_version().startswith(("git:", "gozero=="))


def test_store_that_is_not_a_database_is_one_registry_error(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mlflow.db").write_text("not a database")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/mlflow.db")
    with pytest.raises(RegistryError, match="unreachable"):
        registry.list_models()


def test_tracking_server_that_is_down_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(RegistryError, match="MLflow server http://127.0.0.1:9 is unreachable"):
        registry.list_models()


@pytest.mark.slow  # two cold interpreters (importing mlflow costs ~3 s of CPU each) plus the store
def test_processes_creating_one_store_at_once_all_succeed(tmp_path: Path) -> None:
    script = ("import sys; from pathlib import Path; from storage import mlflow_store; "
              "mlflow_store.client(Path(sys.argv[1])); print('ok')")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DO_NOT_TRACK": "true"}
    workers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "data")], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [worker.communicate(timeout=120) for worker in workers]
    assert [w.returncode for w in workers] == [0, 0], [err[-500:] for _, err in results]
    assert [out for out, _ in results] == ["ok\n"] * 2 and (tmp_path / "data" / "mlflow.db").is_file()


# ---------------------------------------------------------------- runs

def test_flatten_config_dots_nested_keys_and_keeps_values_as_strings() -> None:
    flat = runs.flatten_config({"net": preset("tiny", 9, 17), "lr": 0.01, "name": "x", "steps": [1, 2]})
    assert flat["net.blocks"] == "4" and flat["net.family"] == "dual"
    assert flat["lr"] == "0.01" and flat["name"] == "x" and flat["steps"] == "[1, 2]"


def test_plot_curves_writes_a_png(tmp_path: Path) -> None:
    path = runs.plot_curves({"loss": [(0, 2.0), (1, 1.5)], "val_accuracy": [(1, 0.3)]}, tmp_path / "c.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_logs_params_metrics_and_artifacts(store: Path, tmp_path: Path) -> None:
    net = trained_net()
    config = {"net": net.config.to_dict(), "train": {"lr": 0.01, "batch": 32}}
    history = {"loss": [(0, 2.0), (1, 1.5), (2, 1.2)], "val_accuracy": [(2, 0.25)]}
    with runs.training_run(9, config, dataset="kgs-2024@abc123", run_name="sl-test") as run_id:
        for step in range(3):
            runs.log_metrics(run_id, {"loss": history["loss"][step][1]}, step)
        runs.log_metrics(run_id, {"val_accuracy": 0.25}, 2)
        runs.log_curves(run_id, history)
        runs.log_model(run_id, save_model(tmp_path / "model", net, net.config.to_dict()))
    run = runs.describe_run(run_id)
    assert run.status == "FINISHED" and run.metrics == {"loss": 1.2, "val_accuracy": 0.25}
    assert run.params["net.blocks"] == "4" and run.params["train.lr"] == "0.01"
    assert run.params["dataset"] == run.tags["dataset"] == "kgs-2024@abc123"
    assert run.params["code_version"] == mlflow_store.code_version() and run.tags["board_size"] == "9"
    artifacts = store / "mlartifacts" / "gozero-9x9" / run_id / "artifacts"  # absolute, in the data dir
    assert run.artifact_uri == artifacts.as_uri()
    assert json.loads((artifacts / "config.json").read_text()) == config
    assert (artifacts / "plots" / "curves.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (artifacts / "model").iterdir()) == [CONFIG_FILE, WEIGHTS_FILE]


def test_run_that_raises_is_marked_failed(store: Path) -> None:
    with pytest.raises(ZeroDivisionError), runs.training_run(9, {"lr": 0.1}) as run_id:
        raise ZeroDivisionError
    assert runs.describe_run(run_id).status == "FAILED"


# ---------------------------------------------------------------- registry

def test_versions_load_by_number_and_local_path_with_identical_outputs(dual_versions: dict) -> None:
    assert sorted(dual_versions) == [1, 2]
    for version, (net, model_dir) in dual_versions.items():
        for uri in (f"models:/gozero-9x9/{version}", model_dir, str(model_dir)):
            loaded, config = registry.load(uri, build_net)
            assert isinstance(loaded, DualNet) and not loaded.training and config == net.config.to_dict()
            assert same_outputs(loaded, net)


def test_versions_carry_family_generation_dataset_and_code_version(dual_versions: dict) -> None:
    versions = registry.list_versions("gozero-9x9")
    assert [v.version for v in versions] == [1, 2]
    assert versions[1].tags.items() >= {"family": "dual", "generation": "2", "dataset": "test-set",
                                        "board_size": "9", "code_version": mlflow_store.code_version()}.items()
    assert versions[1].run is not None and versions[1].source.endswith("/artifacts/model")


def test_registering_a_run_twice_gives_the_same_version(dual_versions: dict) -> None:
    run_id = registry.describe("gozero-9x9", 2).run.run_id
    assert registry.register(run_id) == 2 and len(registry.list_versions("gozero-9x9")) == 2


def test_promote_moves_champion_and_records_previous_and_evidence(dual_versions: dict) -> None:
    assert registry.promote("gozero-9x9", 1, "first trained net") is None
    assert same_outputs(registry.load("models:/gozero-9x9@champion", build_net)[0], dual_versions[1][0])
    evidence = {"gate_win_rate": 0.58, "games": 400, "elo": 57.0}
    assert registry.promote("gozero-9x9", 2, "won the gate", evidence) == 1
    champion = registry.describe("gozero-9x9")
    assert champion.version == 2 and champion.aliases == ("champion",)
    assert champion.tags.items() >= {"previous_champion": "1", "promotion_reason": "won the gate",
                                     "gate_win_rate": "0.58", "games": "400", "elo": "57.0"}.items()
    assert champion.key_metrics()["gate_win_rate"] == "0.58"
    first = registry.describe("gozero-9x9", 1)
    assert first.aliases == () and first.tags["replaced_by"] == "2"
    assert same_outputs(registry.load("models:/gozero-9x9@champion", build_net)[0], dual_versions[2][0])
    assert registry.promote("gozero-9x9", 2, "retried task") == 2  # already champion: unchanged
    assert registry.describe("gozero-9x9", 2).tags["promotion_reason"] == "won the gate"


def test_evidence_may_not_overwrite_bookkeeping_tags(dual_versions: dict) -> None:
    with pytest.raises(RegistryError, match="reserved"):
        registry.promote("gozero-9x9", 1, "x", {"previous_champion": "7"})


def test_each_family_has_its_own_model_and_loads_as_that_net(policy_version: tuple) -> None:
    net, version = policy_version
    assert "gozero-9x9-policy" in registry.list_models(9)
    assert registry.describe("gozero-9x9-policy", version).tags["family"] == "policy"
    loaded, _ = registry.load("models:/gozero-9x9-policy/latest", build_net)
    assert isinstance(loaded, PolicyNet) and same_outputs(loaded, net)


@pytest.mark.parametrize(("uri", "message"), [
    ("models:/gozero-9x9@nope", r"gozero-9x9 has no alias 'nope'; aliases: "),
    ("models:/gozero-9x9-policy@champion", r"no champion yet: promote a version \(gozero models promote"),
    ("models:/gozero-9x9/99", r"gozero-9x9 has no version 99; versions: 1, 2"),
    ("models:/gozero-13x13/1", r"no registered model 'gozero-13x13' in sqlite:///.*mlflow.db; registered: .*gozero-9x9\b"),
    ("models:/gozero-9x9", r"is not a model URI"),
    ("gozero-9x9", r"cannot load gozero-9x9: no such model directory"),
])
def test_unknown_models_versions_and_aliases_raise_registry_error(
        dual_versions: dict, policy_version: tuple, uri: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        registry.load(uri, build_net)


def test_registering_a_run_without_a_model_is_refused(store: Path) -> None:
    with runs.training_run(9, {"lr": 0.1}) as run_id:
        pass
    with pytest.raises(RegistryError, match="has no loadable model/.*log one with log_model"):
        registry.register(run_id)


@pytest.mark.parametrize("payload", ["raw-pickle", "pickled-object-in-torch-zip"])
def test_planted_pickle_is_refused_by_uri_and_path_and_never_runs(store: Path, tmp_path: Path,
                                                                   payload: str) -> None:
    marker = tmp_path / "pwned"
    net = trained_net("value", size=5)
    model_dir = save_model(tmp_path / "model", net, net.config.to_dict())
    if payload == "raw-pickle":
        planted = pickle.dumps({"stem.weight": Planted(marker)})
    else:
        buffer = io.BytesIO()
        torch.save({"stem.weight": Planted(marker)}, buffer)
        planted = buffer.getvalue()
    (model_dir / WEIGHTS_FILE).write_bytes(planted)
    meta = json.loads((model_dir / CONFIG_FILE).read_text())
    meta["weights_sha256"] = hashlib.sha256(planted).hexdigest()  # vouch for it, as an attacker could
    (model_dir / CONFIG_FILE).write_text(json.dumps(meta))
    with runs.training_run(5, {"lr": 0.1}) as run_id:
        runs.log_model(run_id, model_dir)
    uri = f"models:/gozero-5x5-value/{registry.register(run_id)}"
    for source in (uri, str(model_dir)):
        with pytest.raises(RegistryError, match=rf"^cannot load {re.escape(source)}: .*refusing to unpickle"):
            registry.load(source, build_net)
    assert not marker.exists()


def test_the_sqlite_view_reads_what_mlflow_reads(dual_versions: dict, policy_version: tuple, store: Path) -> None:
    from storage.registry_records import local_versions, read_versions

    registry.promote("gozero-9x9", 2, "won the gate", {"gate_win_rate": 0.6})
    registry.tag_version("gozero-9x9", 1, {"elo": 12.5})
    through_mlflow = [v for name in registry.list_models(None, store) for v in registry.list_versions(name, store)]
    assert len(through_mlflow) >= 3 and any(v.aliases for v in through_mlflow)
    assert local_versions(None, store) == through_mlflow  # aliases, tags, created, source, run metrics
    assert local_versions(9, store) == [v for v in through_mlflow if v.name.startswith("gozero-9x9")]
    assert local_versions(13, store) == []
    assert read_versions(store / "nothing.db") == []


def test_the_sqlite_view_steps_aside_for_a_store_it_does_not_know(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from storage.registry_records import local_versions, read_versions

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE model_versions (name TEXT)")
    assert read_versions(other) is None  # not MLflow's tables: the caller goes through MLflow
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000")
    assert local_versions(None, tmp_path) is None  # a server: only MLflow can read it


def test_a_copied_data_dir_reads_and_writes_its_own_artifacts_not_the_originals(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow records artifact locations as absolute URIs: without relocation a copy would go on
    writing into the original's mlartifacts (and a moved dir would find nothing)."""
    import shutil
    import sqlite3

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    original, copy = tmp_path / "original", tmp_path / "copy"
    monkeypatch.setenv("GOZERO_DATA", str(original))
    net = trained_net(seed=3)
    log_and_register(net, tmp_path / "model", 1)
    shutil.copytree(original, copy)
    shutil.rmtree(original / "mlartifacts")  # as good as moved: only the copy's files are left
    monkeypatch.setenv("GOZERO_DATA", str(copy))
    loaded, _ = registry.load("models:/gozero-9x9/1", build_net)
    assert same_outputs(loaded, net)
    _, version = log_and_register(trained_net(seed=4), tmp_path / "model2", 2)
    assert version == 2 and not (original / "mlartifacts").exists()  # nothing written into the original
    with sqlite3.connect(copy / "mlflow.db") as connection:
        uris = [row[0] for table, column in mlflow_store.RELOCATED_COLUMNS[:4]
                for row in connection.execute(f"SELECT {column} FROM {table}") if "mlartifacts" in row[0]]  # noqa: S608
    assert len(uris) >= 6 and all(uri.startswith((copy / "mlartifacts").as_uri() + "/") or
                                  uri == (copy / "mlartifacts").as_uri() for uri in uris), uris
    assert mlflow_store.relocate_artifacts(copy / "mlflow.db") == []  # once is enough


def test_a_version_whose_files_are_only_at_the_old_place_keeps_pointing_there(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy that went on registering into the original's mlartifacts (before relocation existed):
    what was copied moves to the copy's artifacts, what exists only in the original stays readable."""
    import shutil

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    original, copy = tmp_path / "original", tmp_path / "copy"
    monkeypatch.setenv("GOZERO_DATA", str(original))
    first, second = trained_net(seed=5), trained_net(seed=6)
    log_and_register(first, tmp_path / "m1", 1)
    shutil.copytree(original, copy)
    log_and_register(second, tmp_path / "m2", 2)  # its files: only under original/mlartifacts
    shutil.copy(original / "mlflow.db", copy / "mlflow.db")
    monkeypatch.setenv("GOZERO_DATA", str(copy))
    assert same_outputs(registry.load("models:/gozero-9x9/1", build_net)[0], first)
    assert same_outputs(registry.load("models:/gozero-9x9/2", build_net)[0], second)
    sources = {v.version: v.source for v in registry.list_versions("gozero-9x9")}
    assert sources[1].startswith((copy / "mlartifacts").as_uri()) and sources[2].startswith((original / "mlartifacts").as_uri())
    shutil.rmtree(copy / "mlartifacts")
    with pytest.raises(Exception):  # noqa: B017 - version 1 reads the copy's files only
        registry.load("models:/gozero-9x9/1", build_net)
