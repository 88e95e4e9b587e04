"""The Elo ladder: Bradley–Terry ratings of every player from every game they played.

P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400)), fitted by maximum likelihood over all games
(a jigo is half a win for each side), with one anchor held fixed (the random player at 0), so
ratings mean the same thing run after run. Standard errors come from the inverse Hessian of the
log-likelihood (the anchor has none). As in BayesElo, each pair of players that met gets
`prior_draws` virtual jigos: a player who won every game keeps a finite rating, and a lopsided
pair is pulled in a little. A player with no chain of games to the anchor cannot be placed: it is
left out, with its games counted.

Start reading at `fit_ladder`; `informative_opponents` picks whom a new player should meet.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log odds unit


@dataclass(frozen=True)
class Outcome:
    """One game between two players, from `a`'s side."""

    a: str
    b: str
    a_score: float
    """1 a won, 0.5 jigo, 0 b won."""


@dataclass(frozen=True)
class Rating:
    """A player's place on the ladder."""

    player: str
    elo: float
    """Elo relative to the anchor (random = 0)."""
    stderr: float | None
    """One standard error of `elo`; None for the anchor, whose rating is fixed."""
    games: int
    """Games the player played (in the fit)."""
    score: float
    """Points scored in those games (wins + jigo / 2)."""

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """The 95 % interval (by default) of `elo`; the anchor's is a point."""
        half = 0.0 if self.stderr is None else z * self.stderr
        return self.elo - half, self.elo + half


def expected_score(elo_a: float, elo_b: float) -> float:
    """A's expected points against B under the Elo / Bradley–Terry model."""
    return 1.0 / (1.0 + 10.0 ** ((elo_b - elo_a) / 400.0))


def fit_ladder(outcomes: Iterable[Outcome], anchor: str = "random", anchor_elo: float = 0.0,
               prior_draws: float = 2.0, iterations: int = 100) -> list[Rating]:
    """Ratings of every player connected to `anchor` by games, best first."""
    outcomes = list(outcomes)
    players = _connected_players(outcomes, anchor)
    if not players:
        return []
    index = {name: i for i, name in enumerate(players)}
    wins, games = _pair_tables(outcomes, index, prior_draws)  # (P, P) each
    ratings = np.zeros(len(players))  # natural-log odds units, anchor at 0
    free = np.arange(len(players)) != index[anchor]
    for _ in range(iterations):
        gradient, hessian = _derivatives(ratings, wins, games)
        step = np.linalg.solve(hessian[np.ix_(free, free)], gradient[free])
        ratings[free] -= step
        if np.abs(step).max() < 1e-9:
            break
    _, hessian = _derivatives(ratings, wins, games)
    covariance = np.linalg.inv(-hessian[np.ix_(free, free)])
    errors = np.full(len(players), np.nan)
    errors[free] = np.sqrt(np.diag(covariance))
    played, scored = _totals(outcomes, index)
    table = [Rating(name, anchor_elo + ELO_SCALE * ratings[i],
                    None if name == anchor else float(ELO_SCALE * errors[i]), played[i], scored[i])
             for name, i in index.items()]
    return sorted(table, key=lambda rating: -rating.elo)


def informative_opponents(player: str, ratings: Sequence[Rating], count: int) -> list[str]:
    """The `count` rated players whose games against `player` would tell the most: those whose
    expected score is nearest 50 % (a game's information is p(1-p)), uncertain ones first on ties."""
    by_name = {rating.player: rating for rating in ratings}
    if player not in by_name:
        return [rating.player for rating in ratings[:count]]
    own = by_name[player].elo

    def information(rating: Rating) -> tuple[float, float]:
        p = expected_score(own, rating.elo)
        return -p * (1 - p), -(rating.stderr or 0.0)

    others = sorted((r for r in ratings if r.player != player), key=information)
    return [rating.player for rating in others[:count]]


def _connected_players(outcomes: Sequence[Outcome], anchor: str) -> list[str]:
    """The anchor and every player reachable from it through games, anchor first."""
    neighbours: dict[str, set[str]] = {}
    for game in outcomes:
        neighbours.setdefault(game.a, set()).add(game.b)
        neighbours.setdefault(game.b, set()).add(game.a)
    if anchor not in neighbours:
        return []
    seen, frontier = [anchor], [anchor]
    while frontier:
        for other in sorted(neighbours[frontier.pop()]):
            if other not in seen:
                seen.append(other)
                frontier.append(other)
    return seen


def _pair_tables(outcomes: Sequence[Outcome], index: dict[str, int],
                 prior_draws: float) -> tuple[np.ndarray, np.ndarray]:
    """(wins[i, j]: points i scored against j, games[i, j]: games between them), priors included."""
    size = len(index)
    wins, games = np.zeros((size, size)), np.zeros((size, size))
    for game in outcomes:
        if game.a in index and game.b in index and game.a != game.b:
            i, j = index[game.a], index[game.b]
            wins[i, j] += game.a_score
            wins[j, i] += 1.0 - game.a_score
            games[i, j] += 1.0
            games[j, i] += 1.0
    met = games > 0
    wins[met] += prior_draws / 2
    games[met] += prior_draws
    return wins, games


def _derivatives(ratings: np.ndarray, wins: np.ndarray, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the log-likelihood in natural-log odds units."""
    p = 1.0 / (1.0 + np.exp(ratings[None, :] - ratings[:, None]))  # (P, P): i beats j
    gradient = (wins - games * p).sum(axis=1)
    weight = games * p * (1.0 - p)
    hessian = weight.copy()
    np.fill_diagonal(hessian, 0.0)
    hessian[np.diag_indices_from(hessian)] = -weight.sum(axis=1) + np.diag(weight)
    return gradient, hessian


def _totals(outcomes: Sequence[Outcome], index: dict[str, int]) -> tuple[list[int], list[float]]:
    played, scored = [0] * len(index), [0.0] * len(index)
    for game in outcomes:
        if game.a in index and game.b in index:
            played[index[game.a]] += 1
            played[index[game.b]] += 1
            scored[index[game.a]] += game.a_score
            scored[index[game.b]] += 1.0 - game.a_score
    return played, scored
