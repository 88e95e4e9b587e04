"""Inference wrapper: legal-only priors that sum to 1, values in [-1, 1], symmetry averaging."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gocore.nn.inference import CPU_MAX_BATCH, NetEvaluator, UniformEvaluator
from gocore.nn.nets import build_net, preset
from gocore.rules import symmetry
from gocore.rules.board import Position
from tests.helpers import position_from_ascii

BOARD = """
. . . . .
. X O . .
X O . O .
. X O . .
. . . . X
"""


def tiny_dual(size: int, encoder: str = "agz17") -> torch.nn.Module:
    torch.manual_seed(0)
    planes = 17 if encoder == "agz17" else 2
    return build_net(preset("tiny", size, planes, family="dual", encoder=encoder))


def test_uniform_priors_cover_exactly_the_legal_moves():
    position = position_from_ascii(BOARD, to_play=-1)
    priors, values = UniformEvaluator().evaluate([position])
    legal = position.legal_moves()
    assert np.allclose(priors[0][legal], 1 / legal.sum()) and np.all(priors[0][~legal] == 0)
    assert values.tolist() == [0.0]


@pytest.mark.parametrize("encoder", ["agz17", "oneplane"])
def test_net_priors_are_zero_on_illegal_moves_and_sum_to_one(encoder):
    positions = [position_from_ascii(BOARD, to_play=c) for c in (1, -1)] + [Position.initial(5)]
    priors, values = NetEvaluator(tiny_dual(5, encoder)).evaluate(positions)
    for position, row in zip(positions, priors):
        assert row[~position.legal_moves()].sum() == 0
        assert row.sum() == pytest.approx(1.0, abs=1e-5)
    assert priors.shape == (3, 26) and np.all(np.abs(values) <= 1)


def test_symmetry_averaged_priors_are_equivariant():
    position = position_from_ascii(BOARD, to_play=-1)
    evaluator = NetEvaluator(tiny_dual(5), average_symmetries=True)
    base_priors, base_value = evaluator.evaluate([position])
    for k in range(1, 8):
        perm = symmetry.move_table(5)[k]
        stones = position.stones.ravel()
        black = [int(perm[m]) for m in np.flatnonzero(stones == 1)]
        white = [int(perm[m]) for m in np.flatnonzero(stones == -1)]
        turned = Position.from_setup(5, black, white, to_play=-1)
        priors, value = evaluator.evaluate([turned])
        assert np.allclose(priors[0][perm], base_priors[0], atol=1e-5)
        assert value[0] == pytest.approx(base_value[0], abs=1e-5)


def test_a_net_for_another_board_size_is_refused():
    with pytest.raises(ValueError, match="9x9"):
        NetEvaluator(tiny_dual(9)).evaluate([Position.initial(5)])


def _varied_positions(count: int) -> list[Position]:
    rng = np.random.default_rng(3)
    positions, position = [], Position.initial(5)
    while len(positions) < count:
        legal = np.flatnonzero(position.legal_moves()[:-1])
        if len(legal) == 0 or position.is_game_over():
            position = Position.initial(5)
            continue
        position = position.play(int(rng.choice(legal)))
        positions.append(position)
    return positions


@pytest.mark.parametrize("aux", [False, True])
def test_big_batches_run_in_slices_with_the_outputs_of_one_pass(aux):
    torch.manual_seed(0)
    net = build_net(preset("tiny", 5, 17, family="dual", encoder="agz17", aux_heads=aux)).eval()
    positions = _varied_positions(23)
    whole = NetEvaluator(net, device="cpu", max_batch=1000)
    sliced = NetEvaluator(net, device="cpu", max_batch=5)  # 5 slices, the last one 3 positions
    calls = []
    forward = sliced._forward
    sliced._forward = lambda planes, with_aux: calls.append(len(planes)) or forward(planes, with_aux)
    one = whole.evaluate_aux(positions) if aux else whole.evaluate(positions)
    parts = sliced.evaluate_aux(positions) if aux else sliced.evaluate(positions)
    assert calls == [5, 5, 5, 5, 3]
    for a, b in zip(one if not aux else (one.priors, one.values, one.ownership, one.score),
                    parts if not aux else (parts.priors, parts.values, parts.ownership, parts.score)):
        assert a.shape == b.shape and np.allclose(a, b, atol=1e-5)
    assert NetEvaluator(net, device="cpu").max_batch == CPU_MAX_BATCH
    with pytest.raises(ValueError, match="max_batch"):
        NetEvaluator(net, device="cpu", max_batch=0)


def test_alphago_policy_and_value_nets_read_their_own_planes_from_one_encoding():
    """The 2016 pair: a policy net on alphago48 and a value net on alphago49 (the same planes and the
    colour to play). The evaluator encodes alphago49 once; each net gets its own planes, so the
    pair answers what each net answers alone, and the value depends on who is to move."""
    from gocore.nn import position_planes
    from gocore.nn.features import value_encoder

    torch.manual_seed(1)
    policy = build_net(preset("tiny", 5, 48, family="policy", encoder="alphago48"))
    value = build_net(preset("tiny", 5, 49, family="value", encoder=value_encoder("alphago48")))
    positions = [position_from_ascii(BOARD, to_play=c) for c in (1, -1)]
    pair = NetEvaluator(policy, value, device="cpu")
    assert pair.encoder == "alphago49"
    priors, values = pair.evaluate(positions)
    alone_priors, _ = NetEvaluator(policy, device="cpu").evaluate(positions)
    _, alone_values = NetEvaluator(None, value, device="cpu").evaluate(positions)
    assert np.allclose(priors, alone_priors, atol=1e-6) and np.allclose(values, alone_values, atol=1e-6)
    planes = position_planes.encode_batch(positions, "alphago49")
    assert planes[0, 48].all() and not planes[1, 48].any()  # black, then white to move
    with torch.no_grad():
        direct = value(torch.from_numpy(planes).float()).numpy()
    assert np.allclose(values, direct, atol=1e-6)


def test_nets_whose_inputs_share_no_planes_are_refused():
    policy = build_net(preset("tiny", 5, 48, family="policy", encoder="alphago48"))
    with pytest.raises(ValueError, match="different inputs"):
        NetEvaluator(policy, tiny_dual(5, "agz17"), device="cpu")


def test_value_encoder_adds_the_colour_only_to_alphagos_planes():
    from gocore.nn.features import get_encoder, value_encoder

    assert value_encoder("alphago48") == "alphago49" and value_encoder("agz17") == "agz17"
    assert get_encoder("alphago49").planes[:48] == get_encoder("alphago48").planes
