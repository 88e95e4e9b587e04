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
    assert set(stored[conv_paths.choice_key(net)]["rates"]) == set(conv_paths.candidate_paths())
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
    assert conv_paths.fastest_path({"mkldnn": 100.0, "native": 90.0, "channels_last": 110.0, "bf16": 260.0}) == "bf16"


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
        tolerance = 3e-2 if path == "bf16" else 1e-5  # bfloat16 keeps 8 bits of mantissa (runs on any CPU, slowly)
        np.testing.assert_allclose(priors, base_priors, rtol=0, atol=tolerance, err_msg=path)
        np.testing.assert_allclose(values, base_values, rtol=0, atol=tolerance, err_msg=path)
    assert not np.array_equal(results["bf16"][0], base_priors)  # bf16 really ran: not float32 bit for bit
    for path in conv_paths.NHWC_PATHS:
        assert evaluators[path].policy_net.stem[0].weight.is_contiguous(memory_format=torch.channels_last)


def test_bf16_is_a_candidate_only_where_the_cpu_does_it_and_the_user_allows_it(monkeypatch: pytest.MonkeyPatch,
                                                                                net) -> None:
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)
    monkeypatch.delenv("GOZERO_CPU_BF16", raising=False)
    assert conv_paths.candidate_paths() == conv_paths.CONV_PATHS
    with_bf16 = conv_paths.choice_key(net)
    monkeypatch.setenv("GOZERO_CPU_BF16", "0")
    assert "bf16" not in conv_paths.candidate_paths()
    assert conv_paths.choice_key(net) != with_bf16  # a choice made with bf16 on is not read with it off
    monkeypatch.setenv("GOZERO_CPU_BF16", "1")
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: False)
    assert conv_paths.candidate_paths() == ("mkldnn", "native", "channels_last")
    assert set(conv_paths.measure_paths(net, batch=4, rounds=1)) == set(conv_paths.candidate_paths())


def test_a_stored_bf16_choice_is_not_used_once_bf16_is_turned_off(monkeypatch: pytest.MonkeyPatch, net,
                                                                   measured: list[str], tmp_path: Path) -> None:
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)
    JsonChoiceStore(layout.conv_cache_path(tmp_path)).put(conv_paths.choice_key(net), "bf16", {"bf16": 2.0})
    assert conv_path_for(net, tmp_path) == "bf16" and measured == []
    monkeypatch.setenv("GOZERO_CPU_BF16", "0")
    assert conv_path_for(net, tmp_path) != "bf16" and measured == ["dual"]


def test_a_float32_only_choice_leaves_bf16_out_and_keeps_its_own_key(monkeypatch: pytest.MonkeyPatch, net,
                                                                      tmp_path: Path) -> None:
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)
    monkeypatch.delenv("GOZERO_CPU_BF16", raising=False)
    timed: list[tuple[str, ...]] = []

    def rigged(net: torch.nn.Module, *args, paths: tuple[str, ...] | None = None, **kwargs) -> dict[str, float]:
        timed.append(paths or conv_paths.candidate_paths())  # bf16 fastest, then channels_last
        return {path: {"bf16": 9.0, "channels_last": 5.0}.get(path, 1.0) for path in timed[-1]}

    monkeypatch.setattr(conv_paths, "measure_paths", rigged)
    assert "bf16" not in conv_paths.candidate_paths(bf16=False)
    assert conv_paths.choice_key(net, bf16=False) != conv_paths.choice_key(net)
    assert conv_path_for(net, tmp_path, "cpu", bf16=False) == "channels_last" and "bf16" not in timed[0]
    assert conv_path_for(net, tmp_path, "cpu") == "bf16" and "bf16" in timed[1]  # a choice of its own
    assert conv_path_for(net, tmp_path, "cpu", bf16=False) == "channels_last" and len(timed) == 2  # both kept


def test_an_unknown_path_is_refused(net) -> None:
    with pytest.raises(ValueError, match="unknown conv path"):
        NetEvaluator(net, conv_path="winograd")


def test_bf16_evaluates_one_position_in_float32_and_batches_in_bf16(net) -> None:
    positions = [Position.initial(5)]
    for move in (12, 6, 18, 8):
        positions.append(positions[-1].play(move))
    float32, bf16 = (NetEvaluator(net, conv_path=path) for path in ("channels_last", "bf16"))
    for position in positions:  # one at a time (a match's search): float32's answer bit for bit
        assert np.array_equal(bf16.evaluate([position])[0], float32.evaluate([position])[0])
    assert not np.array_equal(bf16.evaluate(positions)[0], float32.evaluate(positions)[0])  # a batch: bf16
    assert conv_paths.for_batch("bf16", 1) == "channels_last" and conv_paths.for_batch("bf16", 2) == "bf16"
    assert conv_paths.for_batch("native", 1) == "native"
