"""The CPU convolution path: measured on the first start, read from the cache after, same outputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from gocore.nn import conv_paths
from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules.board import Position
from storage import layout
from storage.conv_cache import JsonChoiceStore
from tasks.models import use_conv_cache


@pytest.fixture
def net() -> torch.nn.Module:
    torch.manual_seed(0)
    return build_net(preset("tiny", 5, 17, encoder="agz17"))


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Counts measurements (each appends the key's net family); no store installed after the test."""
    calls: list[str] = []
    real = conv_paths.measure_paths

    def counting(net: torch.nn.Module, *args, **kwargs) -> dict[str, float]:
        calls.append(net.config.family)
        return real(net, *args, **kwargs)

    monkeypatch.setattr(conv_paths, "measure_paths", counting)
    yield calls
    conv_paths.use_store(None)


def test_the_second_start_reads_the_choice_instead_of_measuring(net, measured: list[str], tmp_path: Path) -> None:
    use_conv_cache(tmp_path)
    first = NetEvaluator(net).conv_path
    assert measured == ["dual"] and first in conv_paths.CONV_PATHS
    stored = json.loads(layout.conv_cache_path(tmp_path).read_text())
    assert stored[conv_paths.choice_key(net)]["path"] == first
    assert set(stored[conv_paths.choice_key(net)]["rates"]) == set(conv_paths.CONV_PATHS)
    use_conv_cache(tmp_path)  # a new process: a new store on the same file
    assert NetEvaluator(net).conv_path == first and measured == ["dual"]


def test_the_stored_choice_is_the_one_used(net, measured: list[str], tmp_path: Path) -> None:
    store = JsonChoiceStore(tmp_path / "choices.json")
    store.put(conv_paths.choice_key(net), "native", {"native": 2.0})
    conv_paths.use_store(store)
    assert NetEvaluator(net).conv_path == "native" and measured == []


def test_a_corrupt_cache_file_is_ignored_and_rewritten(net, measured: list[str], tmp_path: Path) -> None:
    path = layout.conv_cache_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"truncated": {"pa')
    use_conv_cache(tmp_path)
    chosen = NetEvaluator(net).conv_path
    assert measured == ["dual"]
    stored = json.loads(path.read_text())
    assert list(stored) == [conv_paths.choice_key(net)] and stored[conv_paths.choice_key(net)]["path"] == chosen


def test_without_a_store_auto_is_torchs_default_and_measures_nothing(net, measured: list[str]) -> None:
    assert NetEvaluator(net).conv_path == conv_paths.DEFAULT_PATH and measured == []


def test_every_path_gives_the_same_priors_and_values(net) -> None:
    positions = [Position.initial(5)]
    for move in (12, 6, 18, 8):
        positions.append(positions[-1].play(move))
    outputs = {path: NetEvaluator(build_net(net.config), conv_path=path) for path in conv_paths.CONV_PATHS}
    for evaluator in outputs.values():
        evaluator.policy_net.load_state_dict(net.state_dict())
    results = {path: evaluator.evaluate(positions) for path, evaluator in outputs.items()}
    base_priors, base_values = results[conv_paths.DEFAULT_PATH]
    for path, (priors, values) in results.items():
        np.testing.assert_allclose(priors, base_priors, rtol=0, atol=1e-5, err_msg=path)
        np.testing.assert_allclose(values, base_values, rtol=0, atol=1e-5, err_msg=path)
    assert results["channels_last"][0].shape == (5, 26)


def test_an_unknown_path_is_refused(net) -> None:
    with pytest.raises(ValueError, match="unknown conv path"):
        NetEvaluator(net, conv_path="winograd")
