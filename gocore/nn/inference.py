"""Network inference for search, matches and GTP: positions -> (priors, values), batched.

An `Evaluator` maps a batch of positions to priors over each position's legal moves
(float32 (B, N*N+1), zero on illegal moves, summing to 1) and values from the side to move's
view (float32 (B,), +1 = the side to move wins). `NetEvaluator` wraps a trained net: no grad,
eval mode, the chosen device, bf16 autocast on CUDA, optionally averaged over the 8 symmetries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import torch

from gocore.nn import features
from gocore.nn.device import autocast_context, choose_device
from gocore.rules import symmetry
from gocore.rules.board import Position


class Evaluator(Protocol):
    """Anything that scores positions for search."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        """(priors (B, N*N+1) float32 over legal moves, values (B,) float32 for the side to move)."""
        ...


def legal_mask(positions: Sequence[Position]) -> np.ndarray:
    """(B, N*N+1) bool: the legal moves of each position."""
    return np.stack([position.legal_moves() for position in positions])


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over the legal entries of each row; illegal entries get 0."""
    logits = np.where(legal, logits, -np.inf)
    logits = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


class UniformEvaluator:
    """Uniform priors over legal moves and value 0: search guided by visits alone (tests, baselines)."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        legal = legal_mask(positions).astype(np.float32)
        return legal / legal.sum(axis=1, keepdims=True), np.zeros(len(positions), np.float32)


class NetEvaluator:
    """Priors and values from a policy net and a value net (the same DualNet, or AlphaGo's two)."""

    def __init__(self, policy_net: torch.nn.Module | None, value_net: torch.nn.Module | None = None,
                 device: str = "auto", average_symmetries: bool = False):
        if policy_net is None and value_net is None:
            raise ValueError("NetEvaluator needs a policy net, a value net, or a dual net")
        self.device = choose_device(device)
        self.policy_net = policy_net.to(self.device).eval() if policy_net is not None else None
        self.value_net = value_net.to(self.device).eval() if value_net is not None else None
        config = (policy_net or value_net).config
        self.encoder, self.size = config.encoder or "agz17", config.board_size
        self.average_symmetries = average_symmetries

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        if any(p.size != self.size for p in positions):
            raise ValueError(f"this net plays {self.size}x{self.size} only")
        planes = features.encode_positions(positions, self.encoder)  # (B, C, N, N)
        ks = range(8) if self.average_symmetries else (0,)
        logits = np.zeros((len(positions), self.size ** 2 + 1), np.float32)
        values = np.zeros(len(positions), np.float32)
        for k in ks:
            k_logits, k_values = self._forward(symmetry.apply(planes, k))
            logits += k_logits[:, symmetry.move_table(self.size)[k]]  # back to the original frame
            values += k_values
        return masked_softmax(logits / len(ks), legal_mask(positions)), values / len(ks)

    @torch.inference_mode()
    def _forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits (B, N*N+1), values (B,)) for planes in one symmetry frame."""
        batch = torch.from_numpy(np.ascontiguousarray(planes)).to(self.device).float()  # (B, C, N, N)
        logits = values = None
        with autocast_context(self.device):
            for net in {id(n): n for n in (self.policy_net, self.value_net) if n is not None}.values():
                out = net(batch)
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
        return logits.float().cpu().numpy(), values.float().cpu().numpy()
