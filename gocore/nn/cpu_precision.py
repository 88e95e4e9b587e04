"""Training in bf16 on a CPU that does bf16 natively (AMX, AVX512-BF16): `TrainConfig.cpu_bf16`.

The forward pass runs under CPU bf16 autocast with NHWC (channels_last) weights and inputs, where
oneDNN's bf16 convolutions are fastest; the heads stay float32 (`nets._heads_in_float32`), the
master weights and the optimizer too. On this project's Xeon it took 2.6x fewer CPU seconds for the
same 1,500 steps with the same losses (docs/benchmarks.md, CPU bf16). Elsewhere (a CPU without
native bf16, ``GOZERO_CPU_BF16=0``, a GPU, which trains in bf16 anyway) the same config trains as
before. Inference takes bf16 as a conv path instead (`conv_paths`' ``bf16``).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from gocore.nn import conv_paths
from gocore.nn.device import autocast_context


def wanted(asked: bool, device: torch.device) -> bool:
    """Train in CPU bf16: `asked` (the config's `cpu_bf16`), on the CPU, and the CPU does bf16
    natively (`conv_paths.bf16_native`)."""
    return asked and device.type == "cpu" and conv_paths.bf16_native()


def autocast(device: torch.device, on: bool) -> contextlib.AbstractContextManager[Any]:
    """The forward pass's autocast: CPU bf16 when `on`, else bf16 on a bf16 GPU (`autocast_context`)."""
    return torch.autocast("cpu", dtype=torch.bfloat16) if on else autocast_context(device)


def layout(net: torch.nn.Module, on: bool) -> None:
    """`net`'s weights in NHWC while training in CPU bf16 (`on`), back in NCHW after (the saved
    weights then load anywhere)."""
    net.to(memory_format=torch.channels_last if on else torch.contiguous_format)


def planes(batch: torch.Tensor, on: bool) -> torch.Tensor:
    """A batch's (B, C, N, N) planes in the layout of the weights (NHWC when `on`)."""
    return batch.contiguous(memory_format=torch.channels_last) if on else batch
