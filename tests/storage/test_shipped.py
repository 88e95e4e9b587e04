"""The net that ships with gozero is registered in a data dir on first use, once per build of its
weights, whichever process comes first; a replaced net becomes the next version and the champion."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest

from gocore.nn.nets import NetConfig, build_net
from storage import registry, shipped
from storage.checkpoints import save_model
from storage.mlflow_store import RegistryError


def ship(folder: Path, seed: int) -> None:
    """A tiny 9x9 net saved where the shipped one lives, with its provenance."""
    import torch

    torch.manual_seed(seed)
    config = NetConfig(board_size=9, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    save_model(folder / "gozero-9x9", build_net(config), dataclasses.asdict(config))
    (folder / "gozero-9x9" / shipped.PROVENANCE_FILE).write_text(json.dumps(
        {"command": "gozero strong ...", "strength": "test net", "dataset": "d", "dataset_key": "k"}))


@pytest.fixture
def shelf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shelf"
    folder.mkdir()
    monkeypatch.setattr(shipped, "_HERE", folder)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the data dir's own registry, as a user has
    return folder


def test_the_shorthand_registers_once_and_names_the_champion(shelf: Path, tmp_path: Path):
    ship(shelf, 0)
    data = tmp_path / "data"
    assert shipped.prepared("shipped", data) == "models:/gozero-9x9-shipped@champion"
    assert shipped.prepared("models:/gozero-9x9-shipped/1", data) == "models:/gozero-9x9-shipped/1"
    assert shipped.prepared("random", data) == "random"  # other specs pass through
    versions = registry.list_versions("gozero-9x9-shipped", data)
    assert [v.version for v in versions] == [1] and "champion" in versions[0].aliases
    assert versions[0].tags["shipped"] == "true" and versions[0].tags["dataset_key"] == "k"
    net, _ = registry.load("models:/gozero-9x9-shipped@champion", build_net, data)
    assert net.config.board_size == 9


def test_a_replaced_net_becomes_the_next_version_and_the_champion(shelf: Path, tmp_path: Path):
    data = tmp_path / "data"
    ship(shelf, 0)
    assert shipped.ensure_registered(9, data) == 1
    ship(shelf, 1)  # a stronger net committed later
    assert shipped.ensure_registered(9, data) == 2
    assert shipped.ensure_registered(9, data) == 2
    champion = registry.describe("gozero-9x9-shipped", "champion", data)
    assert champion.version == 2


def test_two_first_uses_at_once_register_one_version(shelf: Path, tmp_path: Path):
    ship(shelf, 0)
    data = tmp_path / "data"
    shipped.ensure_registered(9, tmp_path / "warm")  # MLflow's store creation is not what is tested
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(shipped.ensure_registered(9, data))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [1, 1] and len(registry.list_versions("gozero-9x9-shipped", data)) == 1


def test_a_size_that_ships_no_net_is_one_clear_error(shelf: Path, tmp_path: Path):
    ship(shelf, 0)
    with pytest.raises(RegistryError, match=r"no 13x13 net ships with gozero \(shipped: 9x9\)"):
        shipped.prepared("shipped-13x13", tmp_path / "data")
    assert shipped.shorthand_size("models:/gozero-9x9-shipped@champion") == 9
    assert shipped.shorthand_size("models:/gozero-9x9@champion") is None
