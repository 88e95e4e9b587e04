"""Networks: output shapes for every family and preset, training signal, configs."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from gocore.nn.net_sizes import PRESETS
from gocore.nn.nets import (
    FAMILIES,
    DualNet,
    NetConfig,
    NetConfigError,
    PolicyNet,
    RolloutPolicy,
    ValueNet,
    build_net,
    net_size,
    parameter_count,
    preset,
)
from gocore.nn.patterns import DISTANCE0, LINE0, NUM_FEATURES, TACTICS0

SIZES = (5, 9, 13, 19)
PLANE_FAMILIES = tuple(f for f in FAMILIES if f != "rollout")  # the rollout policy reads feature ids
CASES = [(family, name, size) for family in PLANE_FAMILIES for name in PRESETS for size in SIZES
         if not (size == 19 and name in ("full", "alphago"))]  # 19x19 only with the small presets, for speed


def _outputs(net: torch.nn.Module, planes: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(policy logits or None, value or None) whatever the family."""
    out = net(planes)
    if net.config.family == "dual":
        return out
    return (None, out) if net.config.family == "value" else (out, None)


@pytest.mark.parametrize(("family", "name", "size"), CASES)
def test_output_shapes_for_every_family_preset_and_size(family: str, name: str, size: int) -> None:
    torch.manual_seed(0)
    in_planes = 17 if size % 2 else 2
    net = build_net(preset(name, size, in_planes, family)).eval()
    planes = torch.randn(2, in_planes, size, size)  # (B, C, N, N)
    with torch.no_grad():
        policy, value = _outputs(net, planes)
    if family in ("dual", "policy"):
        assert policy.shape == (2, size * size + 1)
        assert torch.isfinite(policy).all()
    if family in ("dual", "value"):
        assert value.shape == (2,)
        assert ((value >= -1) & (value <= 1)).all()


def test_build_net_picks_the_class_of_the_family() -> None:
    classes = {"dual": DualNet, "policy": PolicyNet, "value": ValueNet, "rollout": RolloutPolicy}
    for family, cls in classes.items():
        net = build_net(preset("tiny", 9, 17, family))
        assert type(net) is cls and net.config.family == family


def test_build_net_accepts_a_config_dict() -> None:
    config = preset("tiny", 9, 2, "policy", encoder="oneplane")
    net = build_net(config.to_dict())
    assert net.config == config


def test_value_stays_in_range_for_extreme_inputs() -> None:
    torch.manual_seed(1)
    net = build_net(preset("tiny", 9, 17)).eval()
    with torch.no_grad():
        _, value = net(1e4 * torch.randn(4, 17, 9, 9))
        value_only = build_net(preset("tiny", 9, 17, "value")).eval()(-1e4 * torch.randn(4, 17, 9, 9))
    assert value.abs().max() <= 1 and value_only.abs().max() <= 1


@pytest.mark.parametrize("name", list(PRESETS))
def test_fresh_net_starts_with_small_values_and_flat_policy(name: str) -> None:
    torch.manual_seed(2)
    net = build_net(preset(name, 9, 17))  # train mode: BN running stats mean nothing yet
    planes = (torch.rand(8, 17, 9, 9) < 0.3).float()  # (B, C, N, N) bit planes like an encoder's
    with torch.no_grad():
        logits, value = net(planes)
        value_only = build_net(preset(name, 9, 17, "value"))(planes)
        policy_only = build_net(preset(name, 9, 17, "policy"))(planes)
    assert value.abs().max() < 0.05 and value_only.abs().max() < 0.05
    for policy in (logits, policy_only):
        assert policy.softmax(dim=1).max() < 2 / 82  # no move starts far above uniform


def test_eval_output_of_a_position_does_not_depend_on_its_batch() -> None:
    torch.manual_seed(3)
    net = build_net(preset("tiny", 9, 17)).eval()
    planes = torch.randn(4, 17, 9, 9)
    with torch.no_grad():
        batch_logits, batch_value = net(planes)
        one_logits, one_value = net(planes[2:3])
    torch.testing.assert_close(one_logits[0], batch_logits[2])
    torch.testing.assert_close(one_value[0], batch_value[2])


def test_wrong_plane_shape_is_a_clear_error() -> None:
    net = build_net(preset("tiny", 9, 17))
    with pytest.raises(ValueError, match=r"expects planes \(B, 17, 9, 9\), got \(2, 2, 9, 9\)"):
        net(torch.zeros(2, 2, 9, 9))


def test_integer_planes_are_a_clear_error() -> None:
    net = build_net(preset("tiny", 9, 17))
    with pytest.raises(ValueError, match=r"expects float planes, got torch.uint8 \(convert with planes.float\(\)\)"):
        net(torch.zeros(2, 17, 9, 9, dtype=torch.uint8))


def test_dual_net_overfits_a_tiny_batch() -> None:
    torch.manual_seed(4)
    net = build_net(preset("tiny", 5, 17))
    planes = (torch.rand(8, 17, 5, 5) < 0.3).float()  # (B, C, N, N)
    moves = torch.randint(0, 26, (8,))  # (B,) target move per position
    outcomes = torch.tensor([1.0, -1.0] * 4)  # (B,) z
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

    def loss_now() -> torch.Tensor:
        logits, value = net(planes)
        return F.cross_entropy(logits, moves) + F.mse_loss(value, outcomes)

    first = loss_now().item()
    for _ in range(40):
        optimizer.zero_grad()
        loss = loss_now()
        loss.backward()
        optimizer.step()
    assert loss_now().item() < 0.3 * first


@pytest.mark.parametrize("family", ["policy", "value"])
def test_alphago_nets_learn_from_a_tiny_batch(family: str) -> None:
    torch.manual_seed(5)
    net = build_net(preset("tiny", 5, 17, family))
    planes = (torch.rand(8, 17, 5, 5) < 0.3).float()  # (B, C, N, N)
    moves, outcomes = torch.randint(0, 26, (8,)), torch.tensor([1.0, -1.0] * 4)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)

    def loss_now() -> torch.Tensor:
        out = net(planes)
        return F.mse_loss(out, outcomes) if family == "value" else F.cross_entropy(out, moves)

    first = loss_now().item()
    for _ in range(30):
        optimizer.zero_grad()
        loss_now().backward()
        optimizer.step()
    assert loss_now().item() < 0.7 * first


def test_pass_logit_depends_on_the_position() -> None:
    torch.manual_seed(6)
    for family in ("policy", "dual"):
        net = build_net(preset("tiny", 9, 17, family)).eval()
        planes = torch.randn(2, 17, 9, 9)
        logits = net(planes)[0] if family == "dual" else net(planes)
        assert logits[0, 81] != logits[1, 81]


def test_config_round_trips_through_json() -> None:
    config = preset("small", 13, 2, "value", encoder="oneplane")
    assert NetConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_unknown_config_key_is_refused_by_name() -> None:
    data = {**preset("tiny", 9, 17).to_dict(), "heads": 3}
    with pytest.raises(NetConfigError, match=r"unknown NetConfig keys \['heads'\]"):
        NetConfig.from_dict(data)


def test_missing_required_config_key_is_refused() -> None:
    with pytest.raises(NetConfigError, match="in_planes"):
        NetConfig.from_dict({"board_size": 9})


@pytest.mark.parametrize(("field", "value"), [("family", "transformer"), ("filters", 0), ("blocks", -1),
                                              ("board_size", 9.0), ("in_planes", True)])
def test_impossible_config_values_are_refused(field: str, value: object) -> None:
    with pytest.raises(NetConfigError, match=field):
        NetConfig(**{**preset("tiny", 9, 17).to_dict(), field: value})


def test_unknown_preset_is_refused() -> None:
    with pytest.raises(NetConfigError, match="presets: tiny, small, full"):
        preset("huge", 9, 17)


@pytest.mark.parametrize("family", ["dual", "policy", "value"])
def test_larger_presets_have_more_parameters(family: str) -> None:
    counts = [parameter_count(build_net(preset(name, 9, 17, family))) for name in ("tiny", "small", "full")]
    assert counts[0] < counts[1] < counts[2]


def test_rollout_policy_logits_are_sums_of_feature_weights_over_candidates() -> None:
    net = build_net(preset("tiny", 9, 17, "rollout"))
    assert type(net) is RolloutPolicy and net.parameter_count() == NUM_FEATURES
    with torch.no_grad():
        net.weight.copy_(torch.arange(NUM_FEATURES, dtype=torch.float32) / NUM_FEATURES)
    ids = torch.tensor([[[5, TACTICS0, LINE0 + 1, DISTANCE0], [-1, -1, -1, -1]]])  # (B=1, M=2, K=4)
    logits = net(ids)
    assert logits[0, 0].item() == pytest.approx((5 + TACTICS0 + LINE0 + 1 + DISTANCE0) / NUM_FEATURES)
    assert logits[0, 1].item() == float("-inf")
    with pytest.raises(ValueError, match="feature ids"):
        net(torch.zeros(2, 17, 9, 9))


# ---------------------------------------------------------------- the AlphaGo paper's shapes, custom sizes
def _convs(net: torch.nn.Module) -> list[torch.nn.Conv2d]:
    return [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]


def test_alphago_policy_net_is_the_papers_13_layers_of_192_filters() -> None:
    net = build_net(preset("alphago", 19, 48, "policy", encoder="alphago48"))
    convs = _convs(net)
    assert [c.kernel_size for c in convs] == [(5, 5)] + [(3, 3)] * 11 + [(1, 1)]  # 13 layers
    assert [c.out_channels for c in convs] == [192] * 12 + [1] and convs[0].in_channels == 48
    assert net.points.point_bias.shape == (361,)  # a different bias for each position
    weights = 48 * 192 * 25 + 11 * 192 * 192 * 9 + 192  # convs, then the 1x1 output (no conv bias)
    biases = 12 * 192 + 361
    assert parameter_count(net) == weights + biases + 192 + 1  # + the pass logit (ours: pass is a move)


def test_alphago_value_net_adds_a_1x1_conv_fc_256_and_tanh_to_the_same_stack() -> None:
    net = build_net(preset("alphago", 19, 49, "value", encoder="alphago49")).eval()
    convs = _convs(net)
    assert [c.kernel_size for c in convs] == [(5, 5)] + [(3, 3)] * 11 + [(1, 1)]
    assert convs[0].in_channels == 49 and net.fc1.out_features == 256 and net.fc2.out_features == 1
    with torch.no_grad():
        value = net(torch.randn(3, 49, 19, 19))
    assert value.shape == (3,) and value.abs().max() <= 1


@pytest.mark.parametrize(("name", "blocks", "filters", "hidden"),
                         [("b6c96", 6, 96, 256), ("b11c128v64", 11, 128, 64), ("b0c8", 0, 8, 256)])
def test_custom_sizes_are_named_blocks_then_filters(name: str, blocks: int, filters: int, hidden: int) -> None:
    config = preset(name, 9, 17, "dual")
    assert (config.blocks, config.filters, config.value_hidden) == (blocks, filters, hidden)
    assert net_size(name).schedule == "small"


@pytest.mark.parametrize("name", ["huge", "b6", "c96", "b6c96x", "b6c0"])
def test_unknown_or_impossible_sizes_are_refused_in_one_line(name: str) -> None:
    with pytest.raises(NetConfigError, match="preset|filters"):
        preset(name, 9, 17)
