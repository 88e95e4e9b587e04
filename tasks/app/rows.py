"""The Go side of stored rows, handed to storage: `ROW_DECODER` for `storage.stream.BatchStream`.

storage reads packed bits and never imports gocore; what the bits mean (planes of a feature
encoder) and how a dihedral symmetry moves planes, moves, visit distributions and ownership is gocore's.
This adapter joins the two, one call per batch, never per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gocore.nn.features import get_encoder, packed_nbytes, transform_rows, unpack_planes
from gocore.rules.symmetry import move_table


def transform_pi(pi: np.ndarray, row_symmetries: np.ndarray, size: int) -> np.ndarray:
    """(R, N*N+1): row r's distribution moved by symmetry row_symmetries[r] (pass stays)."""
    out = np.empty_like(pi)
    # move_table[k][m] is where move m goes, so probability at m lands there.
    np.put_along_axis(out, move_table(size)[np.asarray(row_symmetries, np.int64)], pi, axis=1)
    return out


def transform_points(values: np.ndarray, row_symmetries: np.ndarray, size: int) -> np.ndarray:
    """(R, N*N): row r's per-point values (ownership) moved by symmetry row_symmetries[r], like
    its planes."""
    out = np.empty_like(values)
    np.put_along_axis(out, move_table(size)[np.asarray(row_symmetries, np.int64), :size * size], values, axis=1)
    return out


@dataclass(frozen=True)
class GoRowDecoder:
    """`storage.stream.RowDecoder` over gocore's feature encoders and board symmetries."""

    def row_bytes(self, encoder: str, size: int) -> int:
        """Bytes of one row's packed planes for this encoder and board size N."""
        return packed_nbytes(get_encoder(encoder).num_planes, size)

    def unpack(self, packed: np.ndarray, encoder: str, size: int) -> np.ndarray:
        """(B, nbytes) uint8 packed planes → (B, C, N, N) uint8 planes."""
        return unpack_planes(packed, get_encoder(encoder).num_planes, size)

    def transform(self, planes: np.ndarray, move: np.ndarray, pi: np.ndarray | None, symmetries: np.ndarray,
                  size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Row r's planes (B, C, N, N), move (B,) and pi (B, N*N+1) moved by symmetry symmetries[r]."""
        planes, move = transform_rows(planes, move, symmetries, size)
        return planes, move, None if pi is None else transform_pi(pi, symmetries, size)

    def transform_points(self, values: np.ndarray, symmetries: np.ndarray, size: int) -> np.ndarray:
        """Row r's per-point values (B, N*N) moved like its planes by symmetry symmetries[r]."""
        return transform_points(values, symmetries, size)


ROW_DECODER = GoRowDecoder()
