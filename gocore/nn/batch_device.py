"""Batches onto the device: numpy arrays to tensors, and (for raw batches) the symmetry and the
float conversion done there with torch ops.

Start at `batch_tensors`. A batch from the data path's worker processes arrives *raw*
(`symmetry_pending`): planes (B, C, N, N) uint8 0/1 and its targets still in the stored frame,
`symmetry` (B,) the per-row symmetry still to apply. Shipping uint8 moves a quarter of the bytes
of float32 (and pins a quarter on CUDA); the gathers below run wherever the batch is, so on a GPU
the host does no per-element work. The result equals, bit for bit, what the in-process path gets
from numpy (`tasks.app.rows.GoRowDecoder.transform`): a symmetry only moves values, and 0/1, int8 and
float16-born values convert to float32 exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gocore.nn.aux_heads import AUX_KEYS
from gocore.nn.device import pin_if_cuda, to_device
from gocore.rules.symmetry import gather_table, move_table

FLOAT_KEYS = ("planes", "value", "pi", *AUX_KEYS)  # float32 in every batch the loss terms read


def batch_tensors(batch: Any, device: torch.device) -> dict[str, torch.Tensor]:
    """The batch's arrays as tensors on `device` (pinned first on CUDA, copied asynchronously);
    a raw batch (`symmetry_pending`) gets its symmetries and float32 there."""
    arrays = {"planes": batch.planes, "move": batch.move, "value": batch.value, "pi": batch.pi,
              **{key: getattr(batch, key, None) for key in AUX_KEYS}}
    if getattr(batch, "symmetry_pending", False):
        arrays["symmetry"] = batch.symmetry
    arrays = {name: array for name, array in arrays.items() if array is not None}
    tensors = {name: pin_if_cuda(torch.from_numpy(np.asarray(a)), device) for name, a in arrays.items()}
    tensors = to_device(tensors, device)
    if "symmetry" not in tensors:
        return tensors
    return finish_raw(tensors)


def finish_raw(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A raw batch's tensors (planes uint8, targets in the stored frame, `symmetry` (B,)) moved by
    their row's symmetry and converted to the dtypes the loss terms read (float32, move int64)."""
    tensors = dict(tensors)
    symmetries = tensors.pop("symmetry").long()  # (B,)
    planes = tensors["planes"]  # (B, C, N, N) uint8
    size = planes.shape[-1]
    tensors["planes"] = transform_planes(planes, symmetries).float()
    moves = _table(move_table(size), planes.device)  # (8, N*N+1)
    tensors["move"] = moves[symmetries, tensors["move"].long()]  # (B,)
    if "pi" in tensors:
        tensors["pi"] = transform_points(tensors["pi"], symmetries)
    if "ownership" in tensors:
        tensors["ownership"] = transform_points(tensors["ownership"], symmetries)
    return {name: t.float() if name in FLOAT_KEYS else t for name, t in tensors.items()}


def transform_planes(planes: torch.Tensor, symmetries: torch.Tensor) -> torch.Tensor:
    """(B, C, N, N): row r's planes under symmetry symmetries[r] (as `gocore.rules.symmetry.apply`)."""
    batch, channels, size, _ = planes.shape
    gather = _table(gather_table(size), planes.device)[symmetries]  # (B, N*N): output i reads input gather[i]
    flat = planes.reshape(batch, channels, size * size)  # (B, C, N*N)
    return flat.gather(2, gather[:, None, :].expand(batch, channels, size * size)).reshape(planes.shape)


def transform_points(values: torch.Tensor, symmetries: torch.Tensor) -> torch.Tensor:
    """(B, M): row r's per-move values (pi, M = N*N+1) or per-point values (ownership, M = N*N)
    moved by symmetry symmetries[r]; the value at move m lands on its symmetric move (pass stays)."""
    points = values.shape[1]
    size = _board_size(points)
    destination = _table(move_table(size), values.device)[symmetries, :points]  # (B, M)
    return torch.empty_like(values).scatter_(1, destination, values)


def _board_size(points: int) -> int:
    """N from N*N (points) or N*N+1 (moves)."""
    for count in (points, points - 1):
        size = int(round(count ** 0.5))
        if size * size == count:
            return size
    raise ValueError(f"{points} values are neither N*N points nor N*N+1 moves")


_TABLES: dict[tuple[int, str], torch.Tensor] = {}


def _table(table: np.ndarray, device: torch.device) -> torch.Tensor:
    """A symmetry table as an int64 tensor on `device`, copied there once."""
    key = (id(table), str(device))
    if key not in _TABLES:
        _TABLES[key] = torch.from_numpy(np.array(table)).to(device)
    return _TABLES[key]
