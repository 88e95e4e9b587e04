"""Network inference for search, matches and GTP: positions -> (priors, values), batched.

An `Evaluator` maps a batch of positions to priors over each position's legal moves
(float32 (B, N*N+1), zero on illegal moves, summing to 1) and values from the side to move's
view (float32 (B,), +1 = the side to move wins). `NetEvaluator` wraps a trained net: no grad,
eval mode, the chosen device, bf16 autocast on CUDA, optionally averaged over the 8 symmetries.
On the CPU it runs big batches in slices of `CPU_MAX_BATCH` positions: the activations of a
self-play worker's whole lockstep batch (400 leaves for 50 games) would otherwise be its largest
allocation, and slices that stay in cache are faster too (400 positions, one thread: tiny net
105 -> 65 ms, small net 444 -> 285 ms against one pass; 256 a slice: 84 and 352). The slicing is fixed by the
batch size, so a seed still replays the same games; outputs may differ from one unsliced call in
the last bits, as they do between any two batch sizes.

Ownership and score (territory display, score lead): an evaluator may also offer
`evaluate_aux(positions) -> AuxEvaluation`; ask `has_ownership(evaluator)` / `has_score(evaluator)`
(or the `has_ownership` / `has_score` attributes) first. A `NetEvaluator` has both when its dual
net was built with `aux_heads`; `evaluate` returns the same as for any other net.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from gocore.nn import conv_paths, features, position_planes
from gocore.nn.aux_heads import ownership_from_logits, score_in_points
from gocore.nn.device import autocast_context, choose_device
from gocore.rules import symmetry
from gocore.rules.board import Position, legal_masks


class Evaluator(Protocol):
    """Anything that scores positions for search."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        """(priors (B, N*N+1) float32 over legal moves, values (B,) float32 for the side to move)."""
        ...


@dataclass(frozen=True)
class AuxEvaluation:
    """`evaluate` plus the auxiliary heads, all from the side to move's view (multiply by
    `position.to_play` for black's view)."""

    priors: np.ndarray  # (B, N*N+1) float32 over legal moves
    values: np.ndarray  # (B,) float32, +1 = the side to move wins
    ownership: np.ndarray  # (B, N*N) float32 in [-1, 1]: +1 = the side to move owns the point at the end
    score: np.ndarray  # (B,) float32 expected final lead of the side to move in points (komi counted)


def has_ownership(evaluator: object) -> bool:
    """True if `evaluator.evaluate_aux` gives ownership (False for evaluators without the heads)."""
    return bool(getattr(evaluator, "has_ownership", False))


def has_score(evaluator: object) -> bool:
    """True if `evaluator.evaluate_aux` gives a score lead."""
    return bool(getattr(evaluator, "has_score", False))


def inputs_encoder(*nets: torch.nn.Module | None) -> str:
    """The encoder the evaluator encodes with: the nets' own when they share it, else the one whose
    planes begin with every other's (AlphaGo 2016: the policy net reads `alphago48`, the value net
    `alphago49`, the same planes and the colour to play), so one encoding feeds both; ValueError
    when neither begins the other."""
    names = sorted({net.config.encoder or "agz17" for net in nets if net is not None},
                   key=lambda name: features.get_encoder(name).num_planes)
    widest = features.get_encoder(names[-1]).planes
    for name in names[:-1]:
        planes = features.get_encoder(name).planes
        if widest[:len(planes)] != planes:
            raise ValueError(f"the policy and value nets read different inputs ({', '.join(names)}): "
                             "pair nets whose encoders share their planes")
    return names[-1]


def legal_mask(positions: Sequence[Position]) -> np.ndarray:
    """(B, N*N+1) bool: the legal moves of each position (one kernel call for the batch, kept on the
    positions for the search's `candidate_masks`)."""
    return legal_masks(positions)


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over the legal entries of each row; illegal entries get 0."""
    weights = np.where(legal, logits, -np.inf)  # the one new array: the rest happens in place in it
    weights -= weights.max(axis=1, keepdims=True)  # (a batch's (B, N*N+1) is above malloc's mmap
    np.exp(weights, out=weights)  # threshold: each new one faults its pages in)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights.astype(np.float32, copy=False)


class UniformEvaluator:
    """Uniform priors over legal moves and value 0: search guided by visits alone (tests, baselines)."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        legal = legal_mask(positions).astype(np.float32)
        return legal / legal.sum(axis=1, keepdims=True), np.zeros(len(positions), np.float32)


CPU_MAX_BATCH = 64  # positions per forward pass on the CPU (see the module doc)


class NetEvaluator:
    """Priors and values from a policy net and a value net (the same DualNet, or AlphaGo's two).
    max_batch: positions per forward pass (default: `CPU_MAX_BATCH` on the CPU, all at once on a GPU);
    conv_path: the CPU convolution path, one of `conv_paths.CONV_PATHS` (`conv_paths.choose_conv_path`
    finds this machine's fastest; tasks.app.models.conv_path_for keeps it in the data dir); ignored off the CPU."""

    def __init__(self, policy_net: torch.nn.Module | None, value_net: torch.nn.Module | None = None,
                 device: str = "auto", average_symmetries: bool = False, max_batch: int | None = None,
                 conv_path: str = conv_paths.DEFAULT_PATH):
        if policy_net is None and value_net is None:
            raise ValueError("NetEvaluator needs a policy net, a value net, or a dual net")
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, not {max_batch}")
        self.device = choose_device(device)
        self.max_batch = max_batch or (CPU_MAX_BATCH if self.device.type == "cpu" else None)
        self.policy_net = policy_net.to(self.device).eval() if policy_net is not None else None
        self.value_net = value_net.to(self.device).eval() if value_net is not None else None
        config = (policy_net or value_net).config
        self.conv_path = conv_path if self.device.type == "cpu" else conv_paths.DEFAULT_PATH
        for net in (self.policy_net, self.value_net):
            if net is not None:
                conv_paths.prepare_net(net, self.conv_path)
        self.encoder, self.size = inputs_encoder(self.policy_net, self.value_net), config.board_size
        self.average_symmetries = average_symmetries
        is_aux_dual = policy_net is not None and bool(getattr(policy_net.config, "aux_heads", False))
        self.has_ownership = self.has_score = is_aux_dual and value_net in (None, policy_net)

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        outputs = self._evaluate(positions, aux=False)
        return outputs.priors, outputs.values

    def evaluate_aux(self, positions: Sequence[Position]) -> AuxEvaluation:
        """Priors, values, ownership and score lead; ValueError unless `has_ownership`."""
        if not self.has_ownership:
            raise ValueError("this net has no ownership and score heads (train one with aux_heads)")
        return self._evaluate(positions, aux=True)

    def _evaluate(self, positions: Sequence[Position], aux: bool) -> AuxEvaluation:
        """Every output, averaged over the symmetries asked for (ownership and score zero unless `aux`)."""
        if any(p.size != self.size for p in positions):
            raise ValueError(f"this net plays {self.size}x{self.size} only")
        planes, legal = self._inputs(positions)  # (B, C, N, N) uint8, (B, N*N+1) bool
        ks, points = range(8) if self.average_symmetries else (0,), self.size ** 2
        logits = np.zeros((len(positions), points + 1), np.float32)
        values, score = np.zeros(len(positions), np.float32), np.zeros(len(positions), np.float32)
        ownership = np.zeros((len(positions), points), np.float32)
        for k in ks:
            k_logits, k_values, k_ownership, k_score = self._sliced(symmetry.apply(planes, k), aux)
            back = symmetry.move_table(self.size)[k]  # (N*N+1,): back to the original frame
            logits += k_logits[:, back]
            values += k_values
            if aux:
                ownership, score = ownership + k_ownership[:, back[:points]], score + k_score
        return AuxEvaluation(masked_softmax(logits / len(ks), legal), values / len(ks),
                             ownership / len(ks), score / len(ks))

    def _inputs(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        """(planes (B, C, N, N) uint8, legal moves (B, N*N+1) bool), each one kernel call for the batch."""
        return position_planes.encode_batch(positions, self.encoder), legal_mask(positions)

    def _sliced(self, planes: np.ndarray, aux: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """`_forward` in slices of at most `max_batch` positions, joined."""
        step = self.max_batch or len(planes)
        if len(planes) <= step:
            return self._forward(planes, aux)
        parts = [self._forward(planes[start:start + step], aux) for start in range(0, len(planes), step)]
        return tuple(None if part[0] is None else np.concatenate(part) for part in zip(*parts))  # type: ignore[return-value]

    @torch.inference_mode()
    def _forward(self, planes: np.ndarray, aux: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """(logits (B, N*N+1), values (B,), ownership (B, N*N) or None, score (B,) points or None)
        for planes in one symmetry frame; ownership and score only with `aux`."""
        batch = torch.from_numpy(np.ascontiguousarray(planes)).to(self.device).float()  # (B, C, N, N)
        path = conv_paths.for_batch(self.conv_path, len(planes))
        batch = conv_paths.prepare_input(batch, path)
        logits = values = None
        with autocast_context(self.device), conv_paths.conv_context(path):
            if aux:  # a DualNet with aux heads, alone (has_ownership)
                out = self.policy_net(batch, aux=True)
                ownership = ownership_from_logits(out.ownership.float()).cpu().numpy()
                score = score_in_points(out.score.float(), self.size).cpu().numpy()
                return out.policy.float().cpu().numpy(), out.value.float().cpu().numpy(), ownership, score
            for net in {id(n): n for n in (self.policy_net, self.value_net) if n is not None}.values():
                out = net(batch[:, :net.config.in_planes])  # AlphaGo's value net reads one plane more
                if isinstance(out, tuple):  # DualNet: (logits, value)
                    logits, values = out
                elif out.dim() == 2:
                    logits = out
                else:
                    values = out
        if logits is None:  # a value net alone: flat priors
            logits = torch.zeros(len(planes), self.size ** 2 + 1)
        if values is None:  # a policy net alone: no opinion on who wins
            values = torch.zeros(len(planes))
        return logits.float().cpu().numpy(), values.float().cpu().numpy(), None, None
