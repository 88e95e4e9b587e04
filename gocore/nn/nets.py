"""Networks: the torch modules of AlphaGo Zero (`DualNet`) and AlphaGo 2016 (`PolicyNet`,
`ValueNet`, `RolloutPolicy`), their `NetConfig`, the size presets and the `build_net` factory.

Every net but the rollout policy (sparse feature ids of `gocore.nn.patterns`) reads float planes
``(B, in_planes, N, N)`` from an encoder in `gocore.nn.features` (it knows only the plane count)
and scores moves over ``N*N + 1`` policy indices, row-major from the top-left, pass last (see
`gocore.rules.coords`). Policies are raw logits; values are tanh scalars from the perspective of
the side to move (+1 = side to move wins). Sizes: `gocore.nn.net_sizes`.

Start reading at `DualNet`. Nets are tied to one board size: their fully connected heads have
N*N inputs, as in both papers.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from gocore.nn import patterns
from gocore.nn.aux_heads import DualOutput, OwnershipHead
from gocore.nn.net_sizes import NetConfigError, net_size
from gocore.rules.baghchal.geometry import NUM_ACTIONS as BAGHCHAL_ACTIONS

FAMILIES = ("dual", "policy", "value", "rollout", "rl")
GAMES = ("go", "baghchal")


@dataclass(frozen=True)
class NetConfig:
    """Everything needed to rebuild a network; stored as JSON beside its weights."""

    board_size: int
    """N: the board is N x N and the policy has N*N + 1 outputs (pass last)."""
    in_planes: int
    """Input feature planes C, as produced by the encoder (agz17: 17, tactical: 32, alphago48: 48)."""
    encoder: str = ""
    """Name of the `gocore.nn.features` encoder that makes the planes ('' = not recorded)."""
    family: str = "dual"
    """Which net: dual (AlphaGo Zero), policy / value (AlphaGo 2016), rollout (fast policy), rl (a
    PolicyNet trained by REINFORCE: its own family, so it registers as its own model)."""
    blocks: int = 4
    """Residual blocks (dual) or hidden 3x3 conv layers after the 5x5 one (policy, value)."""
    filters: int = 32
    """Channels of every trunk conv (the papers' k: 192 for AlphaGo, 256 for AlphaGo Zero)."""
    value_hidden: int = 256
    """Width of the value head's hidden fully connected layer (256 in both papers)."""
    aux_heads: bool = False
    """Dual nets only: add the ownership and score heads (see `DualNet`); off in both papers."""
    game: str = "go"
    """The game it plays: go (N*N + 1 policy outputs) or baghchal (a dual net over its 217 actions,
    `gocore.rules.baghchal.geometry`; registered as its own model)."""

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise NetConfigError(f"game {self.game!r} is not one of {', '.join(GAMES)}")
        if self.game != "go" and (self.family != "dual" or self.aux_heads):
            raise NetConfigError(f"a {self.game} net is a dual net without aux heads, not {self.family!r}")
        if not isinstance(self.aux_heads, bool):
            raise NetConfigError(f"aux_heads must be true or false, not {self.aux_heads!r}")
        if self.aux_heads and self.family != "dual":
            raise NetConfigError(f"aux_heads needs the dual family, not {self.family!r}")
        if not isinstance(self.encoder, str):
            raise NetConfigError(f"encoder must be an encoder name (str), not {self.encoder!r}")
        if self.family not in FAMILIES:
            raise NetConfigError(f"family {self.family!r} is not one of {', '.join(FAMILIES)}")
        for name in ("board_size", "in_planes", "filters", "value_hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise NetConfigError(f"{name} must be a positive int, not {value!r}")
        if not isinstance(self.blocks, int) or isinstance(self.blocks, bool) or self.blocks < 0:
            raise NetConfigError(f"blocks must be an int >= 0, not {self.blocks!r}")

    @property
    def num_moves(self) -> int:
        """Policy outputs: N*N points plus pass (Go), or the game's actions."""
        return BAGHCHAL_ACTIONS if self.game == "baghchal" else self.board_size * self.board_size + 1

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every field; aux_heads only when set and game only when not go,
        so a Go net has the same JSON (run keys, stored identities) as before the fields existed."""
        data = dataclasses.asdict(self)
        if not self.aux_heads:
            del data["aux_heads"]
        if self.game == "go":
            del data["game"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NetConfig:
        """The config from `to_dict` output; unknown or missing keys raise NetConfigError (keys
        with defaults may be missing: configs saved before `aux_heads` existed load unchanged)."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise NetConfigError(f"unknown NetConfig keys {unknown}; known keys: {sorted(fields)}")
        required = [n for n, f in fields.items() if f.default is dataclasses.MISSING]
        missing = [n for n in required if n not in data]
        if missing:
            raise NetConfigError(f"NetConfig needs keys {missing}")
        return cls(**data)


def preset(name: str, board_size: int, in_planes: int, family: str = "dual",
           encoder: str = "", aux_heads: bool = False) -> NetConfig:
    """The NetConfig of preset `name` (see `net_size`) for this board, encoder and family."""
    size = net_size(name)
    return NetConfig(board_size=board_size, in_planes=in_planes, encoder=encoder, family=family,
                     aux_heads=aux_heads, blocks=size.blocks, filters=size.filters, value_hidden=size.value_hidden)


def parameter_count(module: nn.Module) -> int:
    """Number of scalar parameters (weights and biases, not BN running statistics)."""
    return sum(p.numel() for p in module.parameters())


class GoNet(nn.Module):
    """Base of every net: holds the config and checks the input planes' shape."""

    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config

    def check_planes(self, planes: torch.Tensor) -> None:
        """Raise ValueError unless `planes` is a float tensor (B, in_planes, N, N)."""
        c, n = self.config.in_planes, self.config.board_size
        if planes.dim() != 4 or tuple(planes.shape[1:]) != (c, n, n):
            raise ValueError(f"{type(self).__name__} expects planes (B, {c}, {n}, {n}), "
                             f"got {tuple(planes.shape)}")
        if not planes.is_floating_point():  # encoders emit uint8; conv would fail obscurely
            raise ValueError(f"{type(self).__name__} expects float planes, got {planes.dtype} "
                             "(convert with planes.float())")

    def parameter_count(self) -> int:
        """Number of scalar parameters."""
        return parameter_count(self)


def _conv(in_channels: int, out_channels: int, kernel: int, bias: bool = True) -> nn.Conv2d:
    """A 'same'-padded conv, so every layer keeps the N x N board."""
    return nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=bias)


def _init_weights(net: nn.Module) -> None:
    """Kaiming (fan-in) for convs and hidden FCs: keeps activation scale steady through ReLUs."""
    for module in net.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(module.weight, mode="fan_in", nonlinearity="relu")
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)


def _init_output(layer: nn.Conv2d | nn.Linear, std: float = 1e-3) -> None:
    """Small output layer: starting values near 0 and policies near uniform, so early search
    and early training are not steered by random weights."""
    nn.init.normal_(layer.weight, std=std)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)


# ---------------------------------------------------------------- AlphaGo Zero

class ResidualBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN, plus the skip, then ReLU."""

    def __init__(self, filters: int):
        super().__init__()
        self.conv1, self.bn1 = _conv(filters, filters, 3, bias=False), nn.BatchNorm2d(filters)
        self.conv2, self.bn2 = _conv(filters, filters, 3, bias=False), nn.BatchNorm2d(filters)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))  # (B, F, N, N)
        y = self.bn2(self.conv2(y))  # (B, F, N, N)
        return F.relu(x + y)  # (B, F, N, N)


class PolicyHead(nn.Module):
    """conv1x1(2)-BN-ReLU-FC(A): move logits, A = N*N+1 (Go) unless `moves` says otherwise."""

    def __init__(self, filters: int, board_size: int, moves: int | None = None):
        super().__init__()
        points = board_size * board_size
        self.conv, self.bn = _conv(filters, 2, 1, bias=False), nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * points, points + 1 if moves is None else moves)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn(self.conv(x)))  # (B, 2, N, N)
        return self.fc(y.flatten(1))  # (B, A)


class ValueHead(nn.Module):
    """conv1x1(1)-BN-ReLU-FC(hidden)-ReLU-FC(1)-tanh: value for the side to move (no tanh if
    not `bounded`: the score head has the same shape)."""

    def __init__(self, filters: int, board_size: int, hidden: int, bounded: bool = True):
        super().__init__()
        self.conv, self.bn = _conv(filters, 1, 1, bias=False), nn.BatchNorm2d(1)
        self.fc1 = nn.Linear(board_size * board_size, hidden)
        self.fc2 = nn.Linear(hidden, 1)
        self.bounded = bounded

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn(self.conv(x)))  # (B, 1, N, N)
        y = F.relu(self.fc1(y.flatten(1)))  # (B, hidden)
        y = self.fc2(y).squeeze(-1)  # (B,)
        return torch.tanh(y) if self.bounded else y


@contextlib.contextmanager
def _heads_in_float32(trunk: torch.Tensor) -> Iterator[torch.Tensor]:
    """The trunk's output for the heads: under CPU bf16 autocast (`conv_paths`' bf16 path, training's
    `cpu_bf16`) the heads run in float32 on it, autocast off. Their small value head (one filter,
    then two dense layers) learned nothing in bf16 (docs/benchmarks.md, CPU bf16) and costs little."""
    if not torch.is_autocast_enabled("cpu"):
        yield trunk
        return
    with torch.autocast("cpu", enabled=False):
        yield trunk.float()


class DualNet(GoNet):
    """AlphaGo Zero: a residual trunk shared by a policy head and a value head.

    With `config.aux_heads` (KataGo's auxiliary targets) the trunk also feeds an ownership head
    (final Tromp-Taylor owner of every point) and a score head (final score lead divided by N,
    unbounded, so a 9x9 lead of 18 points is 2.0 and a 19x19 one of 19 points is 1.0); both
    from the side to move's view. They shape the trunk during training and serve GUIs
    (territory, score lead); `forward` still returns (policy, value), `forward(planes, aux=True)`
    a `DualOutput` with every head.
    """

    def __init__(self, config: NetConfig):
        super().__init__(config)
        c, f, n = config.in_planes, config.filters, config.board_size
        self.stem = nn.Sequential(_conv(c, f, 3, bias=False), nn.BatchNorm2d(f), nn.ReLU())
        self.blocks = nn.Sequential(*(ResidualBlock(f) for _ in range(config.blocks)))
        self.policy_head = PolicyHead(f, n, config.num_moves)
        self.value_head = ValueHead(f, n, config.value_hidden)
        # Only built when asked: a net without them keeps the state_dict of older checkpoints.
        self.ownership_head = OwnershipHead(f) if config.aux_heads else None
        self.score_head = ValueHead(f, n, config.value_hidden, bounded=False) if config.aux_heads else None
        _init_weights(self)
        _init_output(self.policy_head.fc)
        _init_output(self.value_head.fc2)
        if self.ownership_head is not None and self.score_head is not None:
            _init_output(self.ownership_head.out)
            _init_output(self.score_head.fc2)

    def forward(self, planes: torch.Tensor, aux: bool = False) -> tuple[torch.Tensor, torch.Tensor] | DualOutput:
        """(policy logits (B, N*N+1), value (B,) in [-1, 1]) for planes (B, C, N, N); with
        `aux`, a `DualOutput` (its ownership and score None if the net has no such heads)."""
        self.check_planes(planes)
        x = self.blocks(self.stem(planes))  # (B, F, N, N)
        with _heads_in_float32(x) as x:
            policy, value = self.policy_head(x), self.value_head(x)  # (B, N*N+1), (B,)
            if not aux:
                return policy, value
            if self.ownership_head is None or self.score_head is None:
                return DualOutput(policy, value, None, None)
            return DualOutput(policy, value, self.ownership_head(x), self.score_head(x))  # + (B, N*N), (B,)


# ---------------------------------------------------------------- AlphaGo (2016)

class ConvStack(nn.Module):
    """The 2016 trunk: conv5x5 then `blocks` conv3x3 layers, each followed by ReLU (no BN)."""

    def __init__(self, in_planes: int, filters: int, blocks: int):
        super().__init__()
        layers: list[nn.Module] = [_conv(in_planes, filters, 5), nn.ReLU()]
        for _ in range(blocks):
            layers += [_conv(filters, filters, 3), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        return self.layers(planes)  # (B, F, N, N)


class PointLogits(nn.Module):
    """A conv to one plane plus a separate bias per point (the papers' last policy layer)."""

    def __init__(self, in_channels: int, board_size: int, kernel: int = 1):
        super().__init__()
        self.conv = _conv(in_channels, 1, kernel, bias=False)
        self.point_bias = nn.Parameter(torch.zeros(board_size * board_size))  # (N*N,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).flatten(1) + self.point_bias  # (B, N*N)


class PolicyNet(GoNet):
    """AlphaGo's SL/RL policy network, with a pass logit added.

    The paper's net scores only the 361 points (passing was left to the engine). Our datasets
    and search treat pass as move N*N, so a linear layer over the trunk's channels averaged over
    the board adds one pass logit: cheap, size independent, and it can learn that passing is
    right when the board is settled.
    """

    def __init__(self, config: NetConfig):
        super().__init__(config)
        self.trunk = ConvStack(config.in_planes, config.filters, config.blocks)
        self.points = PointLogits(config.filters, config.board_size)
        self.pass_logit = nn.Linear(config.filters, 1)
        _init_weights(self)
        _init_output(self.points.conv)
        _init_output(self.pass_logit)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        """Move logits (B, N*N+1) for planes (B, C, N, N)."""
        self.check_planes(planes)
        x = self.trunk(planes)  # (B, F, N, N)
        pooled = x.mean(dim=(2, 3))  # (B, F)
        return torch.cat([self.points(x), self.pass_logit(pooled)], dim=1)  # (B, N*N+1)


class ValueNet(GoNet):
    """AlphaGo's value network: the policy trunk, conv1x1 to one plane, FC-ReLU-FC-tanh.

    The one-plane conv stays linear: with no BN in this trunk, a ReLU there can start (or end
    up) dead on every point at once, and then the net never learns.
    """

    def __init__(self, config: NetConfig):
        super().__init__(config)
        points = config.board_size * config.board_size
        self.trunk = ConvStack(config.in_planes, config.filters, config.blocks)
        self.to_plane = _conv(config.filters, 1, 1)
        self.fc1 = nn.Linear(points, config.value_hidden)
        self.fc2 = nn.Linear(config.value_hidden, 1)
        _init_weights(self)
        _init_output(self.fc2)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        """Value (B,) in [-1, 1] for the side to move, for planes (B, C, N, N)."""
        self.check_planes(planes)
        x = self.to_plane(self.trunk(planes))  # (B, 1, N, N)
        x = F.relu(self.fc1(x.flatten(1)))  # (B, value_hidden)
        return torch.tanh(self.fc2(x)).squeeze(-1)  # (B,)


class RolloutPolicy(GoNet):
    """AlphaGo's fast rollout policy: a linear softmax over sparse local features of each move.

    A candidate's logit is the sum of the weights of its `patterns.FEATURES_PER_MOVE` feature ids
    (`gocore.nn.patterns`: 3x3 pattern, tactics, line, distance to the previous move), one weight
    per feature as in the paper. `gocore.search.rollout` plays whole games with these weights in
    numba; this module is what trains and stores them. It reads feature ids, not planes
    (`patterns.candidate_features` makes them from planes): `in_planes` and `encoder` record the
    planes it was trained from. Ignores blocks, filters and value_hidden.
    """

    def __init__(self, config: NetConfig):
        super().__init__(config)
        self.weight = nn.Parameter(torch.zeros(patterns.NUM_FEATURES))  # (F,) one per feature id

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (B, M) for feature ids (B, M, FEATURES_PER_MOVE) int; -inf where ids are -1."""
        if ids.dim() != 3 or ids.shape[-1] != patterns.FEATURES_PER_MOVE or ids.is_floating_point():
            raise ValueError(f"RolloutPolicy expects int feature ids (B, M, {patterns.FEATURES_PER_MOVE}), "
                             f"got {ids.dtype} {tuple(ids.shape)}")
        logits = self.weight[ids.clamp(min=0).long()].sum(dim=-1)  # (B, M)
        return logits.masked_fill(ids[..., 0] < 0, float("-inf"))

    def weights_array(self) -> np.ndarray:
        """The weights as float64 (F,), for `gocore.search.rollout.PatternRollouts`."""
        return self.weight.detach().cpu().double().numpy().copy()


NET_CLASSES: dict[str, type[GoNet]] = {
    "dual": DualNet, "policy": PolicyNet, "value": ValueNet, "rollout": RolloutPolicy, "rl": PolicyNet,
}


def build_net(config: NetConfig | Mapping[str, Any]) -> GoNet:
    """A freshly initialised net of `config.family`; a dict (from JSON) is read as a NetConfig."""
    if not isinstance(config, NetConfig):
        config = NetConfig.from_dict(config)
    return NET_CLASSES[config.family](config)
