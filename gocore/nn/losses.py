"""Loss terms per batch: policy cross-entropy and top-1, value MSE, and the auxiliary heads'
ownership and score terms. `gocore.nn.training` weighs them into an objective.

Batches are dicts of tensors (`training.batch_tensors`): planes, move, value, optional pi, and
the optional auxiliary targets `aux_heads.AUX_KEYS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
import torch.nn.functional as F

from gocore.nn.aux_heads import DualOutput
from gocore.nn.nets import GoNet


def has_aux_heads(net: GoNet) -> bool:
    """True for a dual net with the ownership and score heads."""
    return bool(getattr(net.config, "aux_heads", False))


def _heads(net: torch.nn.Module, family: str, planes: torch.Tensor
           ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(policy logits (B, N*N+1) or None, value (B,) or None) for any net family."""
    out = net(planes)
    if family == "dual":
        return out
    return (None, out) if family == "value" else (out, None)


def loss_terms(net: torch.nn.Module, family: str, batch: Mapping[str, torch.Tensor],
               aux: bool = False) -> dict[str, torch.Tensor]:
    """Per-batch means: policy_loss, policy_top1 (policy heads), value_mse (value heads); with
    `aux` (a net with auxiliary heads) and their targets in the batch, `aux_loss_terms` too."""
    terms, aux = {}, aux and "ownership" in batch
    if aux:
        out = net(batch["planes"], aux=True)
        policy, value = out.policy, out.value
        terms.update(aux_loss_terms(out, batch))
    else:
        policy, value = _heads(net, family, batch["planes"])
    if policy is not None:
        log_p = F.log_softmax(policy.float(), dim=1)  # (B, N*N+1)
        pi = batch.get("pi")
        terms["policy_loss"] = F.nll_loss(log_p, batch["move"]) if pi is None else -(pi * log_p).sum(1).mean()
        terms["policy_top1"] = (policy.argmax(dim=1) == batch["move"]).float().mean()
    if value is not None:
        terms["value_mse"] = (value.float() - batch["value"]).square().mean()
    return terms


def aux_loss_terms(out: DualOutput, batch: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Means over the rows with targets: ownership_loss (cross-entropy per point), score_loss
    (Huber on lead / N) and score_error (absolute error in points), plus aux_rows (their share)."""
    if out.ownership is None or out.score is None:
        raise ValueError("this net has no auxiliary heads")
    mask = batch["aux_mask"].float()  # (B,)
    rows = mask.sum().clamp(min=1.0)
    size = math.isqrt(batch["ownership"].shape[1])
    target_own = (batch["ownership"].float() + 1) / 2  # (B, N*N) in {0, 0.5, 1}
    own = F.binary_cross_entropy_with_logits(2 * out.ownership.float(), target_own, reduction="none")  # (B, N*N)
    score, target_score = out.score.float(), batch["score"].float() / size  # (B,), (B,)
    huber = F.smooth_l1_loss(score, target_score, reduction="none")  # (B,)
    return {"ownership_loss": (own.mean(1) * mask).sum() / rows,
            "score_loss": (huber * mask).sum() / rows,
            "score_error": ((score - target_score).abs() * size * mask).sum() / rows,
            "aux_rows": mask.mean()}
