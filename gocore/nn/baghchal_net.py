"""Baghchal's net and its evaluators: the documented ResNet as presets, and positions -> (priors, values).

The net is `nets.DualNet` with ``game="baghchal"``: a trunk Conv 3x3 -> BN -> ReLU, N residual
blocks, a policy head Conv 1x1 (2) -> BN -> ReLU -> Dense(217) and a value head Conv 1x1 (1) ->
BN -> ReLU -> Dense(128) -> ReLU -> Dense(1) -> tanh, on the 5 planes of `baghchal_planes`.
Presets (`PRESETS`): ``full`` is the documented 256 filters (10 residual blocks, the low end of
the 10-20 given for small boards), ``cpu`` a size that trains and plays on two CPU cores
(4 blocks of 64); any other size by name as ``b<blocks>c<filters>`` (value hidden 128 unless
``v<n>`` says otherwise).

Evaluators follow `gocore.nn.inference.Evaluator`: priors (B, 217) over the legal actions,
values (B,) from the side to move's view. `BaghchalNetEvaluator` runs a net (optionally averaged
over the 8 symmetries) on a CPU convolution path as Go's `NetEvaluator` does (`gocore.nn.conv_paths`:
on a CPU with native bf16 the `cpu` net's lockstep batches of 64 ran 13,500 positions/s in bf16 against
3,600 in float32); `UniformBaghchalEvaluator` is search by visits alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gocore.nn import conv_paths
from gocore.nn.baghchal_planes import ENCODER, NUM_PLANES, States, encode_states, symmetric_states
from gocore.nn.device import choose_device
from gocore.nn.inference import masked_softmax
from gocore.nn.net_sizes import PRESETS as GO_PRESETS
from gocore.nn.net_sizes import NetConfigError, NetSize, net_size
from gocore.nn.nets import DualNet, NetConfig
from gocore.rules import symmetry
from gocore.rules.baghchal.geometry import NUM_ACTIONS, SIZE, action_permutation
from gocore.rules.baghchal.position import Position

VALUE_HIDDEN = 128  # the documented value head: Dense(128)
CPU = NetSize(blocks=4, filters=64, value_hidden=VALUE_HIDDEN)
FULL = NetSize(blocks=10, filters=256, value_hidden=VALUE_HIDDEN)
TINY = NetSize(blocks=1, filters=16, value_hidden=32)  # tests
PRESETS: dict[str, NetSize] = {"cpu": CPU, "full": FULL, "tiny": TINY}


def net_config(preset: str = "cpu", blocks: int | None = None, filters: int | None = None) -> NetConfig:
    """The NetConfig of a Baghchal preset (or a ``b<blocks>c<filters>`` size), with `blocks` and
    `filters` overriding the preset's when given."""
    if preset in PRESETS:
        size = PRESETS[preset]
    elif preset in GO_PRESETS:
        raise NetConfigError(f"{preset!r} is a Go preset; Baghchal's: {', '.join(PRESETS)}, or b<blocks>c<filters>")
    else:
        size = net_size(preset)
        if "v" not in preset:
            size = NetSize(size.blocks, size.filters, VALUE_HIDDEN)
    return NetConfig(board_size=SIZE, in_planes=NUM_PLANES, encoder=ENCODER, family="dual", game="baghchal",
                     blocks=size.blocks if blocks is None else blocks, filters=size.filters if filters is None else filters,
                     value_hidden=size.value_hidden)


def build(config: NetConfig) -> DualNet:
    """A freshly initialised Baghchal net of `config`."""
    if config.game != "baghchal":
        raise NetConfigError(f"{config.game} net config given for a Baghchal net")
    return DualNet(config)


class UniformBaghchalEvaluator:
    """Uniform priors over the legal actions and value 0: search guided by visits alone."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        legal = np.stack([p.legal_moves() for p in positions]).astype(np.float32)  # (B, A)
        return legal / np.maximum(legal.sum(axis=1, keepdims=True), 1.0), np.zeros(len(positions), np.float32)


class BaghchalNetEvaluator:
    """Priors and values from a Baghchal dual net, on `device`, optionally averaged over the 8
    symmetries (the planes moved by k, the logits moved back by k's inverse). conv_path: the CPU
    convolution path (`conv_paths.CONV_PATHS`; `tasks.app.models.conv_path_for` keeps this machine's
    fastest in the data dir); ignored off the CPU."""

    def __init__(self, net: DualNet, device: str = "cpu", average_symmetries: bool = False,
                 conv_path: str = conv_paths.DEFAULT_PATH):
        if net.config.game != "baghchal":
            raise ValueError(f"this is a {net.config.game} net, not a Baghchal one")
        self.device = choose_device(device)
        self.conv_path = conv_path if self.device.type == "cpu" else conv_paths.DEFAULT_PATH
        self.net = conv_paths.prepare_net(net.to(self.device).eval(), self.conv_path)
        self.average_symmetries = average_symmetries

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        states = States.of(positions)
        legal = np.stack([p.legal_moves() for p in positions])  # (B, A) bool
        ks = symmetry.SYMMETRIES if self.average_symmetries else (symmetry.IDENTITY,)
        logits = np.zeros((len(positions), NUM_ACTIONS), np.float32)
        values = np.zeros(len(positions), np.float32)
        for k in ks:
            k_logits, k_values = self.forward(encode_states(symmetric_states(states, k)))
            logits += k_logits[:, action_permutation(k)]  # action a's logit sits at its image under k
            values += k_values
        return masked_softmax(logits / len(ks), legal), values / len(ks)

    @torch.inference_mode()
    def forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits (B, A), values (B,)) of (B, 5, 5, 5) float32 planes."""
        path = conv_paths.for_batch(self.conv_path, len(planes))
        batch = conv_paths.prepare_input(torch.from_numpy(planes).to(self.device), path)
        with conv_paths.conv_context(path):
            logits, values = self.net(batch)
        return logits.float().cpu().numpy(), values.float().cpu().numpy()
