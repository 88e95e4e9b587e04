"""Search that cares about the score, not only about winning: KataGo's score utility, static form.

A net whose value head is sure of the game (0.99 and more) gives search nothing to choose by: the
policy's favourite keeps the value near 1, and since an unvisited move counts as 0 (first-play
urgency) no other move is even tried until the search sees the favourite losing. Our 9x9 champions
lost most of their games against GNU Go level 10 from positions they thought won (docs/results,
2026-12-07: in 45 of 63 losses their own win rate had been 0.9 or more). Mixing the net's expected
score lead into the value the search backs up makes points lost visible however sure the value head is:

    u = (1 - w) * v + w * (2 / pi) * atan(score / scale)

with v the value head's output, score its score head's lead (points, komi counted) for the side to
move, and scale the board's side in points (9 on 9x9: a 20-point group is worth 0.73 of w). The mix
stays in [-1, 1], so resign thresholds, first-play urgency and terminal values (+-1 by the rules)
keep their meaning; in a won position the weight must bring a point-losing favourite's value below
what the other moves could give before they are tried. KataGo centres a second, dynamic term on the
root's expected score; one static term keeps a reused tree consistent between moves. Whether it
wins games is measured, not assumed (docs/results).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gocore.nn.inference import has_score
from gocore.rules.board import Position


class ScoreUtilityEvaluator:
    """`evaluator` (which must have a score head) with its values mixed with the score lead."""

    def __init__(self, evaluator: Any, weight: float, scale: float):
        if not 0 < weight <= 1:
            raise ValueError(f"a score utility weight is in (0, 1], not {weight}")
        if scale <= 0:
            raise ValueError(f"the score scale must be positive, not {scale}")
        if not has_score(evaluator):
            raise ValueError("a score utility needs a net with a score head (trained with aux_heads)")
        self.evaluator, self.weight, self.scale = evaluator, float(weight), float(scale)

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        """(priors, the mixed utility) for the side to move of each position."""
        aux = self.evaluator.evaluate_aux(positions)
        return aux.priors, self.utility(aux.values, aux.score)

    def utility(self, values: np.ndarray, score: np.ndarray) -> np.ndarray:
        """(1 - w) v + w (2 / pi) atan(score / scale), float32."""
        lead = (2 / math.pi) * np.arctan(np.asarray(score, np.float64) / self.scale)
        return ((1 - self.weight) * np.asarray(values, np.float64) + self.weight * lead).astype(np.float32)

    def __getattr__(self, name: str) -> Any:  # evaluate_aux, has_ownership, size...: the wrapped net's
        return getattr(self.evaluator, name)
