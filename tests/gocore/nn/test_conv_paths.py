"""The CPU convolution path: measured on the first start, read from the cache after, same outputs."""

from __future__ import annotations

import json
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
from tasks.app.models import conv_path_for


@pytest.fixture
def net() -> torch.nn.Module:
    torch.manual_seed(0)
    return build_net(preset("tiny", 5, 17, encoder="agz17"))


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts measurements: each appends the measured net's family."""
    calls: list[str] = []
    real = conv_paths.measure_paths

    def counting(net: torch.nn.Module, *args, **kwargs) -> dict[str, float]:
        calls.append(net.config.family)
        return real(net, *args, **kwargs)

    monkeypatch.setattr(conv_paths, "measure_paths", counting)
    return calls


def test_the_second_start_reads_the_choice_instead_of_measuring(net, measured: list[str], tmp_path: Path) -> None:
    first = conv_path_for(net, tmp_path)
    assert measured == ["dual"] and first in conv_paths.CONV_PATHS
    stored = json.loads(layout.conv_cache_path(tmp_path).read_text())
    assert stored[conv_paths.choice_key(net)]["path"] == first
    assert set(stored[conv_paths.choice_key(net)]["rates"]) == set(conv_paths.CONV_PATHS)
    assert conv_path_for(net, tmp_path) == first and measured == ["dual"]  # a new start: a new store, same file


def test_another_net_shape_is_measured_and_kept_beside_the_first(net, measured: list[str], tmp_path: Path) -> None:
    other = build_net(preset("tiny", 7, 17, encoder="agz17"))
    conv_path_for(net, tmp_path)
    conv_path_for(other, tmp_path)
    assert measured == ["dual", "dual"]
    assert set(json.loads(layout.conv_cache_path(tmp_path).read_text())) == {
        conv_paths.choice_key(net), conv_paths.choice_key(other)}


def test_the_stored_choice_is_the_one_used(net, measured: list[str], tmp_path: Path) -> None:
    JsonChoiceStore(layout.conv_cache_path(tmp_path)).put(conv_paths.choice_key(net), "native", {"native": 2.0})
    assert conv_path_for(net, tmp_path) == "native" and measured == []


def test_a_corrupt_cache_file_is_ignored_and_rewritten(net, measured: list[str], tmp_path: Path) -> None:
    path = layout.conv_cache_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"truncated": {"pa')
    chosen = conv_path_for(net, tmp_path)
    assert measured == ["dual"]
    stored = json.loads(path.read_text())
    assert list(stored) == [conv_paths.choice_key(net)] and stored[conv_paths.choice_key(net)]["path"] == chosen


def test_a_path_is_chosen_over_the_default_only_when_clearly_faster() -> None:
    assert conv_paths.fastest_path({"mkldnn": 100.0, "native": 104.0, "channels_last": 90.0}) == "mkldnn"
    assert conv_paths.fastest_path({"mkldnn": 100.0, "native": 140.0, "channels_last": 90.0}) == "native"


def test_every_path_gives_the_same_priors_and_values(net) -> None:
    positions = [Position.initial(5)]
    for move in (12, 6, 18, 8):
        positions.append(positions[-1].play(move))
    evaluators = {path: NetEvaluator(build_net(net.config), conv_path=path) for path in conv_paths.CONV_PATHS}
    for evaluator in evaluators.values():
        evaluator.policy_net.load_state_dict(net.state_dict())
    results = {path: evaluator.evaluate(positions) for path, evaluator in evaluators.items()}
    base_priors, base_values = results[conv_paths.DEFAULT_PATH]
    for path, (priors, values) in results.items():
        np.testing.assert_allclose(priors, base_priors, rtol=0, atol=1e-5, err_msg=path)
        np.testing.assert_allclose(values, base_values, rtol=0, atol=1e-5, err_msg=path)
    assert evaluators["channels_last"].policy_net.stem[0].weight.is_contiguous(memory_format=torch.channels_last)


def test_an_unknown_path_is_refused(net) -> None:
    with pytest.raises(ValueError, match="unknown conv path"):
        NetEvaluator(net, conv_path="winograd")
