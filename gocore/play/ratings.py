"""Match statistics: win rate intervals, Elo, SPRT, the gate.

Elo here is the logistic model: a player `d` Elo stronger scores ``1 / (1 + 10**(-d/400))``
(+200 Elo ≈ 76 %, the 55 % gate of AlphaGo Zero ≈ +35 Elo). Scores count a jigo as half a win.

- `wilson_interval`: the 95 % score interval of a win rate (good at 0 % and 100 % and for few games).
- `elo_interval`: that interval mapped through `elo_from_winrate` (monotone, so it stays an interval).
- `sprt`: Wald's sequential probability ratio test of H0 "A is elo0 stronger" against H1 "elo1",
  on a Bernoulli model of won and lost games; it lets a match stop as soon as the games decide.
- `summarize`: the numbers a match reports, with the gate decision.

Ratings of many players from all their games (the Elo ladder) are `gocore.play.ladder`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

Z_95 = 1.959963984540054  # standard normal quantile for a two-sided 95 % interval


def elo_from_winrate(winrate: float) -> float:
    """Elo difference that gives this expected score; ±inf at 0 and 1."""
    if not 0.0 <= winrate <= 1.0:
        raise ValueError(f"a win rate lies in [0, 1], not {winrate}")
    if winrate in (0.0, 1.0):
        return math.copysign(math.inf, winrate - 0.5)
    return 400.0 * math.log10(winrate / (1.0 - winrate))


def winrate_from_elo(elo: float) -> float:
    """Expected score of a player `elo` points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def wilson_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of the win rate `wins / games` (jigo as half a win); (0, 1) for 0 games."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    centre = (p + z * z / (2 * games)) / (1 + z * z / games)
    half = z / (1 + z * z / games) * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    # At 0 % or 100 % the bound is exactly 0 or 1; rounding must not turn an infinite Elo finite.
    return (0.0 if wins <= 0 else low), (1.0 if wins >= games else high)


def elo_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson interval in Elo (may be infinite at a whitewash)."""
    low, high = wilson_interval(wins, games, z)
    return elo_from_winrate(low), elo_from_winrate(high)


@dataclass(frozen=True)
class SprtConfig:
    """A sequential test of A's strength: H0 "A is elo0 stronger" against H1 "A is elo1 stronger"."""

    elo0: float = 0.0
    """Elo advantage of H0 (no progress)."""
    elo1: float = 35.0
    """Elo advantage of H1; 35 ≈ the 55 % gate."""
    alpha: float = 0.05
    """Chance of accepting H1 when H0 holds (a false promotion)."""
    beta: float = 0.05
    """Chance of rejecting H1 when it holds (a missed improvement)."""

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"an SPRT needs elo1 > elo0, not elo0={self.elo0:g}, elo1={self.elo1:g}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError(f"SPRT error rates lie in (0, 1), not alpha={self.alpha:g}, beta={self.beta:g}")


def sprt_llr(wins: float, losses: float, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (elo1) over H0 (elo0) after `wins` and `losses` of player A."""
    p0, p1 = winrate_from_elo(elo0), winrate_from_elo(elo1)
    return wins * math.log(p1 / p0) + losses * math.log((1.0 - p1) / (1.0 - p0))


def sprt(wins: float, losses: float, elo0: float = 0.0, elo1: float = 35.0,
         alpha: float = 0.05, beta: float = 0.05) -> str:
    """Wald's SPRT: ``"accept"`` (H1, A is elo1 stronger), ``"reject"`` (H0) or ``"continue"``.

    Draws carry no information in this Bernoulli model: pass a jigo as half a win and half a loss.
    """
    if not elo1 > elo0:
        raise ValueError(f"SPRT needs elo1 > elo0, not elo0={elo0}, elo1={elo1}")
    llr = sprt_llr(wins, losses, elo0, elo1)
    if llr >= math.log((1.0 - beta) / alpha):
        return "accept"
    if llr <= math.log(beta / (1.0 - alpha)):
        return "reject"
    return "continue"


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded Elo is None."""
    return value if math.isfinite(value) else None


def summarize(a_scores: Sequence[float], gate: float = 0.55, sprt_config: SprtConfig | None = None) -> dict[str, Any]:
    """Win rate of A with its 95 % interval, Elo with interval, SPRT state and the gate decision.

    The gate passes if the SPRT (when given) accepted H1, else if the win rate reaches `gate`:
    a decided SPRT speaks for the games it stopped, the threshold for a full set of games.
    """
    games, points = len(a_scores), float(sum(a_scores))
    wins, draws = sum(1 for s in a_scores if s == 1.0), sum(1 for s in a_scores if s == 0.5)
    winrate = points / games if games else 0.5
    low, high = wilson_interval(points, games)
    facts: dict[str, Any] = {
        "games": games, "a_wins": wins, "b_wins": games - wins - draws, "draws": draws,
        "a_winrate": winrate, "a_winrate_low": low, "a_winrate_high": high,
        "elo": _finite(elo_from_winrate(winrate)), "elo_low": _finite(elo_from_winrate(low)),
        "elo_high": _finite(elo_from_winrate(high)), "gate": gate, "sprt": None, "sprt_config": None,
    }
    if sprt_config is not None:
        facts["sprt_config"] = asdict(sprt_config)
        facts["sprt"] = sprt(points, games - points, sprt_config.elo0, sprt_config.elo1,
                             sprt_config.alpha, sprt_config.beta)
    decided = facts["sprt"] in ("accept", "reject")
    facts["gate_rule"] = "sprt" if decided else "threshold"
    facts["gate_passed"] = facts["sprt"] == "accept" if decided else bool(games) and winrate >= gate
    return facts
