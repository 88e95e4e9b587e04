"""Baghchal's input planes (the documented 5-plane encoder) and the 8x augmentation of its rows.

    plane 0   tigers (1 where a tiger stands)
    plane 1   goats
    plane 2   player to move: all 1 when Tiger moves, all 0 when Goat does
    plane 3   phase: all 1 in the placement phase (goats still in hand), 0 in the movement phase
    plane 4   goats still to place / 20, the same on every point

Planes are float32 (B, 5, 5, 5): plane 4 is a fraction. Positions travel as states (`States`:
the bit masks of goats and tigers, goats placed, the side to move), which is also how self-play
rows store them (`storage.baghchal`), so the encoder can change without replaying games.

Symmetry k (`gocore.rules.symmetry`'s numbering) moves the pieces by `geometry.point_permutation`
and a policy by `geometry.action_permutation`; `symmetric_states` does it for a batch of states
(`gocore.search.rows.symmetric_policies` for their policies, as for any game), and ``encode_states(symmetric_states(s, k))`` equals ``symmetry.apply(encode_states(s), k)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gocore.rules.baghchal.geometry import POINTS, SIZE, point_permutation
from gocore.rules.baghchal.kernels import GOATS
from gocore.rules.baghchal.position import TIGER, Position

PLANES = ("tigers", "goats", "tiger_to_move", "placement", "goats_in_hand")
NUM_PLANES = len(PLANES)
ENCODER = "baghchal5"
_BITS = np.arange(POINTS, dtype=np.int64)


@dataclass(frozen=True)
class States:
    """A batch of positions as arrays (B,) each: what the planes and self-play rows are made of."""

    goats: np.ndarray  # (B,) int64 bit p = a goat on point p
    tigers: np.ndarray  # (B,) int64
    placed: np.ndarray  # (B,) int8 goats placed so far
    to_play: np.ndarray  # (B,) int8 +1 Goat, -1 Tiger

    @classmethod
    def of(cls, positions: Sequence[Position]) -> States:
        """The states of some positions."""
        return cls(np.array([p.goats for p in positions], np.int64), np.array([p.tigers for p in positions], np.int64),
                   np.array([p.placed for p in positions], np.int8), np.array([p.to_play for p in positions], np.int8))


def bits_of(masks: np.ndarray) -> np.ndarray:
    """(B, 25) uint8: the bits of (B,) int64 point masks."""
    return ((masks[:, None] >> _BITS) & 1).astype(np.uint8)


def masks_of(bits: np.ndarray) -> np.ndarray:
    """(B,) int64: the point masks of (B, 25) 0/1 bits."""
    return (bits.astype(np.int64) << _BITS).sum(axis=1)


def encode_states(states: States) -> np.ndarray:
    """(B, 5, 5, 5) float32: the documented planes of each state."""
    count = len(states.goats)
    planes = np.zeros((count, NUM_PLANES, POINTS), np.float32)  # (B, C, 25)
    planes[:, 0] = bits_of(states.tigers)
    planes[:, 1] = bits_of(states.goats)
    planes[:, 2] = (states.to_play == TIGER)[:, None]
    planes[:, 3] = (states.placed < GOATS)[:, None]
    planes[:, 4] = ((GOATS - states.placed) / GOATS)[:, None]
    return planes.reshape(count, NUM_PLANES, SIZE, SIZE)


def encode(positions: Sequence[Position]) -> np.ndarray:
    """(B, 5, 5, 5) float32: the planes of some positions."""
    return encode_states(States.of(positions))


def symmetric_states(states: States, k: int) -> States:
    """Every state with its pieces moved by symmetry k."""
    destination = point_permutation(k)  # point p goes to destination[p]
    moved = []
    for masks in (states.goats, states.tigers):
        bits = bits_of(masks)
        out = np.empty_like(bits)
        out[:, destination] = bits
        moved.append(masks_of(out))
    return States(moved[0], moved[1], states.placed, states.to_play)
