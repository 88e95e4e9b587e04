"""Symmetry on the device: torch's gathers move planes, moves, pi and ownership as numpy does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gocore.nn.batch_device import finish_raw, transform_planes, transform_points
from gocore.rules import symmetry
from tasks.app.rows import ROW_DECODER


@pytest.mark.parametrize("size", [5, 9])
def test_device_symmetry_equals_the_numpy_symmetry(size: int) -> None:
    rng = np.random.default_rng(size)
    rows = 64
    symmetries = np.arange(rows) % 8  # every symmetry, eight rows each
    planes = rng.integers(0, 2, (rows, 3, size, size)).astype(np.uint8)  # (B, C, N, N)
    move = rng.integers(0, size * size + 1, rows)  # (B,) pass included
    pi = rng.random((rows, size * size + 1)).astype(np.float32)  # (B, N*N+1)
    ownership = rng.integers(-1, 2, (rows, size * size)).astype(np.int8)  # (B, N*N)
    want_planes, want_move, want_pi = ROW_DECODER.transform(planes, move, pi, symmetries, size)
    want_ownership = ROW_DECODER.transform_points(ownership, symmetries, size)
    got = finish_raw({"planes": torch.from_numpy(planes), "move": torch.from_numpy(move), "pi": torch.from_numpy(pi),
                      "ownership": torch.from_numpy(ownership), "value": torch.ones(rows, dtype=torch.int8),
                      "symmetry": torch.from_numpy(symmetries.astype(np.int8))})
    assert np.array_equal(got["planes"].numpy(), want_planes.astype(np.float32))
    assert np.array_equal(got["move"].numpy(), want_move) and got["move"].dtype == torch.int64
    assert np.array_equal(got["pi"].numpy(), want_pi)
    assert np.array_equal(got["ownership"].numpy(), want_ownership.astype(np.float32))
    assert all(got[name].dtype == torch.float32 for name in ("planes", "pi", "ownership", "value"))


def test_each_row_gets_its_own_symmetry() -> None:
    board = torch.arange(9, dtype=torch.uint8).reshape(1, 1, 3, 3).repeat(8, 1, 1, 1)  # (8, 1, 3, 3)
    moved = transform_planes(board, torch.arange(8))
    for k in range(8):
        assert np.array_equal(moved[k, 0].numpy(), symmetry.apply(board[0, 0].numpy(), k))


def test_pass_stays_where_it_is() -> None:
    pi = torch.zeros(8, 10)
    pi[:, 9] = 1.0  # all on pass, 3x3 board
    assert torch.equal(transform_points(pi, torch.arange(8)), pi)
