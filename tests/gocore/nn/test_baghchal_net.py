"""Baghchal's 5 input planes, the documented ResNet presets, and its evaluators' symmetry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gocore.nn import conv_paths
from gocore.nn.baghchal_net import (
    BaghchalNetEvaluator,
    UniformBaghchalEvaluator,
    build,
    net_config,
)
from gocore.nn.baghchal_planes import States, encode, encode_states, symmetric_states
from gocore.nn.net_sizes import NetConfigError
from gocore.nn.nets import NetConfig, build_net
from gocore.rules import symmetry
from gocore.rules.baghchal.game import BAGHCHAL
from gocore.rules.baghchal.geometry import NUM_ACTIONS
from gocore.rules.baghchal.notation import position_from_text, read_record
from gocore.rules.baghchal.position import GOAT, TIGER, Position
from gocore.search.rows import symmetric_policies
from storage import layout
from storage.checkpoints import save_model
from storage.conv_cache import JsonChoiceStore
from tasks.app.baghchal_players import load_evaluator


def test_the_five_planes_say_tigers_goats_side_phase_and_goats_in_hand() -> None:
    position = position_from_text("""
        B . . . B
        . . . . .
        . . G . .
        . G . . .
        B . . . B
    """, to_play=TIGER, placed=5)  # three goats captured
    planes = encode([position])[0]  # (5, 5, 5)
    assert planes.dtype == np.float32 and planes.shape == (5, 5, 5)
    assert np.array_equal(planes[0], (position.board() == -1).astype(np.float32))
    assert np.array_equal(planes[1], (position.board() == 1).astype(np.float32))
    assert (planes[2] == 1).all() and (planes[3] == 1).all() and np.allclose(planes[4], 15 / 20)
    goat_moving = position_from_text("""
        B G G G B
        G G G G G
        G G . G G
        G G G G G
        B G G G B
    """, to_play=GOAT, placed=20)
    planes = encode([goat_moving])[0]
    assert (planes[2] == 0).all() and (planes[3] == 0).all() and (planes[4] == 0).all()


def _positions(count: int, seed: int) -> list[Position]:
    rng = np.random.default_rng(seed)
    positions, position = [], Position.initial()
    while len(positions) < count:
        if position.is_game_over():
            position = Position.initial()
        positions.append(position)
        position = position.play(int(rng.choice(np.flatnonzero(position.legal_moves()))))
    return positions


@pytest.mark.parametrize("k", symmetry.SYMMETRIES)
def test_symmetric_states_encode_to_the_symmetric_planes_and_keep_legal_moves_aligned(k: int) -> None:
    positions = _positions(60, seed=k)
    states = States.of(positions)
    moved = symmetric_states(states, k)
    assert np.array_equal(encode_states(moved), symmetry.apply(encode_states(states), k))
    legal = np.stack([p.legal_moves() for p in positions]).astype(np.float32)
    mirrored = [Position(int(g), int(t), p.placed, p.captured, p.to_play, p.ply, (), p.rules)
                for g, t, p in zip(moved.goats, moved.tigers, positions)]
    assert np.array_equal(np.stack([p.legal_moves() for p in mirrored]).astype(np.float32),
                          symmetric_policies(BAGHCHAL, legal, k))


def test_the_full_preset_is_the_documented_256_filter_resnet() -> None:
    config = net_config("full")
    assert (config.filters, config.blocks, config.value_hidden, config.in_planes) == (256, 10, 128, 5)
    assert config.num_moves == NUM_ACTIONS and config.game == "baghchal"
    net = build(config)
    head = net.policy_head
    assert head.conv.out_channels == 2 and head.conv.kernel_size == (1, 1) and head.fc.out_features == 217
    value = net.value_head
    assert value.conv.out_channels == 1 and value.fc1.out_features == 128 and value.fc2.out_features == 1
    assert net.stem[0].kernel_size == (3, 3) and isinstance(net.stem[1], torch.nn.BatchNorm2d)


def test_presets_and_sizes_are_settings() -> None:
    assert (net_config("cpu").filters, net_config("cpu").blocks) == (64, 4)
    assert (net_config("cpu", blocks=2, filters=32).blocks, net_config("cpu", blocks=2, filters=32).filters) == (2, 32)
    assert net_config("b3c48").blocks == 3 and net_config("b3c48").value_hidden == 128
    with pytest.raises(NetConfigError, match="Go preset"):
        net_config("small")


def test_a_baghchal_config_round_trips_and_a_go_config_keeps_its_json() -> None:
    config = net_config("tiny")
    assert NetConfig.from_dict(config.to_dict()) == config
    assert isinstance(build_net(config.to_dict()), type(build(config)))
    go = NetConfig(board_size=9, in_planes=17, encoder="agz17")
    assert "game" not in go.to_dict() and go.num_moves == 82
    with pytest.raises(NetConfigError, match="dual net"):
        NetConfig(board_size=5, in_planes=5, family="policy", game="baghchal")


def test_a_net_scores_the_217_actions_and_a_value_in_minus_one_to_one() -> None:
    torch.manual_seed(0)
    net = build(net_config("tiny")).eval()
    logits, values = net(torch.from_numpy(encode(_positions(6, 1))))
    assert logits.shape == (6, 217) and values.shape == (6,) and (values.abs() <= 1).all()


def test_symmetry_averaged_priors_move_with_the_position() -> None:
    torch.manual_seed(1)
    evaluator = BaghchalNetEvaluator(build(net_config("tiny")), average_symmetries=True)
    position = read_record("1. G33 B1112 2. G44 B5545 3. G21")[1]
    priors, values = evaluator.evaluate([position])
    for k in symmetry.SYMMETRIES:
        moved = symmetric_states(States.of([position]), k)
        mirrored = Position(int(moved.goats[0]), int(moved.tigers[0]), position.placed, position.captured,
                            position.to_play, position.ply, (), position.rules)
        k_priors, k_values = evaluator.evaluate([mirrored])
        assert np.allclose(k_priors, symmetric_policies(BAGHCHAL, priors, k), atol=1e-6)
        assert np.allclose(k_values, values, atol=1e-6)


def test_priors_are_zero_off_the_legal_actions_and_sum_to_one() -> None:
    positions = _positions(8, 2)
    for evaluator in (UniformBaghchalEvaluator(), BaghchalNetEvaluator(build(net_config("tiny")))):
        priors, values = evaluator.evaluate(positions)
        legal = np.stack([p.legal_moves() for p in positions])
        assert np.allclose(priors.sum(axis=1), 1) and (priors[~legal] == 0).all() and values.shape == (8,)


def test_every_conv_path_gives_the_float32_priors_and_values_bf16_to_its_rounding() -> None:
    torch.manual_seed(2)
    weights = build(net_config("tiny")).state_dict()
    positions = _positions(8, 3)
    evaluators = {}
    for path in conv_paths.CONV_PATHS:
        net = build(net_config("tiny"))
        net.load_state_dict(weights)
        evaluators[path] = BaghchalNetEvaluator(net, conv_path=path)
    results = {path: evaluator.evaluate(positions) for path, evaluator in evaluators.items()}
    base_priors, base_values = results[conv_paths.DEFAULT_PATH]
    for path, (priors, values) in results.items():
        tolerance = 3e-2 if path == "bf16" else 1e-5  # bfloat16 keeps 8 bits of mantissa (runs on any CPU, slowly)
        np.testing.assert_allclose(priors, base_priors, rtol=0, atol=tolerance, err_msg=path)
        np.testing.assert_allclose(values, base_values, rtol=0, atol=tolerance, err_msg=path)
    assert not np.array_equal(results["bf16"][0], base_priors)  # a batch of 8 really ran in bf16
    bf16_one, float32_one = (evaluators[path].evaluate(positions[:1]) for path in ("bf16", "channels_last"))
    assert np.array_equal(bf16_one[0], float32_one[0])  # one position: bf16's float32 twin, bit for bit
    for path in conv_paths.NHWC_PATHS:
        assert evaluators[path].net.stem[0].weight.is_contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError, match="unknown conv path"):
        BaghchalNetEvaluator(build(net_config("tiny")), conv_path="winograd")


def test_an_evaluator_runs_its_own_paths_layout_on_a_net_another_one_left_nhwc() -> None:
    torch.manual_seed(3)
    shared, fresh = build(net_config("tiny")), build(net_config("tiny"))
    fresh.load_state_dict(shared.state_dict())
    positions = _positions(8, 5)
    BaghchalNetEvaluator(shared, conv_path="bf16")  # a cpu_bf16 loop's self-play, then its gate on mkldnn
    gate = BaghchalNetEvaluator(shared, conv_path="mkldnn")
    assert gate.net.stem[0].weight.is_contiguous() and not gate.net.stem[0].weight.is_contiguous(
        memory_format=torch.channels_last)
    for ours, theirs in zip(gate.evaluate(positions), BaghchalNetEvaluator(fresh, conv_path="mkldnn").evaluate(positions)):
        assert np.array_equal(ours, theirs)  # bit for bit what the path gives on a net never made NHWC


def test_a_baghchal_net_keeps_its_own_conv_path_choice_in_the_data_dir(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    net = build(net_config("tiny"))
    same_shape_go = build_net(NetConfig(board_size=5, in_planes=5, family="dual", blocks=1, filters=16,
                                        value_hidden=32))
    assert "baghchal" in conv_paths.choice_key(net) and "baghchal" not in conv_paths.choice_key(same_shape_go)
    model = save_model(tmp_path / "net", net, net.config.to_dict())
    monkeypatch.setattr(conv_paths, "_cpu_does_bf16", lambda: True)  # as on AMX: Baghchal's choice leaves bf16 out
    monkeypatch.delenv("GOZERO_CPU_BF16", raising=False)
    assert conv_paths.choice_key(net, bf16=False) != conv_paths.choice_key(net)
    JsonChoiceStore(layout.conv_cache_path(tmp_path)).put(conv_paths.choice_key(net, bf16=False), "native",
                                                          {"native": 2.0})
    monkeypatch.setattr(conv_paths, "measure_paths", lambda *args, **kwargs: pytest.fail("measured again"))
    evaluator, _ = load_evaluator(str(model), tmp_path)
    assert evaluator.conv_path == "native"  # the stored choice, not measured again
    monkeypatch.setattr(conv_paths, "measure_paths", lambda net, *args, paths=None, **kwargs: dict.fromkeys(paths, 1.0))
    (tmp_path / "fresh").mkdir()
    evaluator, _ = load_evaluator(str(model), tmp_path / "fresh")  # a new data dir measures and keeps its choice
    assert evaluator.conv_path in conv_paths.candidate_paths(bf16=False)
    stored = JsonChoiceStore(layout.conv_cache_path(tmp_path / "fresh")).get(conv_paths.choice_key(net, bf16=False))
    assert stored == evaluator.conv_path
