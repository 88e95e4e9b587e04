"""AlphaGo's RL policy: REINFORCE on games of a policy net against an opponent policy net.

    games   = play_policy_games(learner, opponent, n, size, komi, rng)   # n games in lockstep
    metrics = reinforce_step(learner, optimizer, games)                   # one update on them

Silver et al. (2016), Methods, "Reinforcement learning of policy networks": both sides sample
their moves from their policy; at the end of a minibatch of n games the learner's weights move by

    Δρ ∝ 1/n · Σ_i Σ_t ∇_ρ log p_ρ(a_t^i | s_t^i) · (z_t^i − b)

over the learner's own moves only, z_t^i = +1 if the learner won game i (−1 lost, 0 jigo). The
baseline b is the mean outcome of the minibatch (`baseline="mean"`) or 0 (`"none"`): the paper's
baseline is a value net's v(s_t), but this pipeline trains its value net on the RL policy's games,
after the RL stage, so the minibatch mean stands in; it is unbiased and removes the shared part of
the variance. Moves are sampled among `board.candidate_moves` (no own-eye filling, no pass before
the opponent's), as every other player here does, so that games of young nets end.

The learner is black in even games and white in odd ones. One net call per side per move number
covers every game still running. `sample_moves` is also the SL/RL policy sampler of value data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from gocore.nn import features, position_planes
from gocore.nn.nets import GoNet
from gocore.rules.board import Position, candidate_moves

BASELINES = ("mean", "none")


@dataclass(frozen=True)
class PolicyGames:
    """A minibatch of games, as REINFORCE needs them: the learner's positions, moves and outcomes."""

    planes: np.ndarray  # (T, C, N, N) uint8: the positions where the learner moved
    moves: np.ndarray  # (T,) int64: the move it sampled there (pass = N*N)
    candidates: np.ndarray  # (T, N*N+1) bool: the moves it sampled among
    game: np.ndarray  # (T,) int64: the game of each row
    outcomes: np.ndarray  # (n,) float32: +1 the learner won game i, -1 lost, 0 jigo
    lengths: np.ndarray  # (n,) int64: moves of each game (both sides)

    @property
    def win_rate(self) -> float:
        """The learner's score in these games (wins + jigo / 2) / n."""
        return float((self.outcomes + 1).mean() / 2) if len(self.outcomes) else 0.0


def net_device(net: GoNet) -> torch.device:
    """The device the net's parameters are on (where its inputs must go)."""
    return next(net.parameters()).device


def net_encoder(net: GoNet) -> str:
    """The feature encoder a net reads (agz17 when its config does not say)."""
    return net.config.encoder or "agz17"


@torch.inference_mode()
def sample_moves(net: GoNet, positions: Sequence[Position], rng: np.random.Generator,
                 planes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(moves (B,) int64 sampled from the net's policy over each position's candidate moves,
    candidates (B, N*N+1) bool); `planes` are the positions' encoded planes if already made."""
    planes = position_planes.encode_batch(positions, net_encoder(net)) if planes is None else planes
    candidates = np.stack([candidate_moves(p) for p in positions])  # (B, N*N+1)
    batch = torch.from_numpy(np.ascontiguousarray(planes)).to(net_device(net)).float()  # (B, C, N, N)
    logits = net(batch).float().cpu().numpy()  # (B, N*N+1)
    logits = np.where(candidates, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)  # (B, N*N+1)
    draws = rng.random(len(positions))[:, None]
    moves = np.minimum((cumulative < draws).sum(axis=1), cumulative.shape[1] - 1)
    moves = np.where(candidates[np.arange(len(moves)), moves], moves, candidates.argmax(axis=1))  # rounding
    return moves.astype(np.int64), candidates


def is_finished(position: Position, max_moves: int) -> bool:
    """Two passes, or the move cap (then the position is scored as it stands)."""
    return position.is_game_over() or position.move_number >= max_moves


def play_policy_games(learner: GoNet, opponent: GoNet, games: int, size: int, komi: float,
                      rng: np.random.Generator, max_moves: int | None = None) -> PolicyGames:
    """`games` games of `learner` against `opponent`, both sampling; the learner's rows and outcomes."""
    cap = max_moves or 3 * size * size
    positions = [Position.initial(size, komi)] * games
    learner_colors = np.where(np.arange(games) % 2 == 0, 1, -1)  # (n,) black in even games
    rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    learner.eval()
    while any(not is_finished(p, cap) for p in positions):
        for net, is_learner in ((learner, True), (opponent, False)):
            movers = [g for g in range(games) if not is_finished(positions[g], cap)
                      and (positions[g].to_play == learner_colors[g]) == is_learner]
            if not movers:
                continue
            batch = [positions[g] for g in movers]
            planes = position_planes.encode_batch(batch, net_encoder(net))  # (B, C, N, N)
            moves, candidates = sample_moves(net, batch, rng, planes)
            if is_learner:
                rows.append((planes, moves, candidates, np.asarray(movers, np.int64)))
            for g, move in zip(movers, moves):
                positions[g] = positions[g].play(int(move))
    winners = np.sign([p.score() for p in positions])  # (n,) +1 black won
    n_planes = features.get_encoder(net_encoder(learner)).num_planes
    return PolicyGames(
        planes=np.concatenate([r[0] for r in rows]) if rows else np.zeros((0, n_planes, size, size), np.uint8),
        moves=np.concatenate([r[1] for r in rows]) if rows else np.zeros(0, np.int64),
        candidates=np.concatenate([r[2] for r in rows]) if rows else np.zeros((0, size * size + 1), bool),
        game=np.concatenate([r[3] for r in rows]) if rows else np.zeros(0, np.int64),
        outcomes=(winners * learner_colors).astype(np.float32),
        lengths=np.array([p.move_number for p in positions], np.int64))


def advantages(games: PolicyGames, baseline: str = "mean") -> np.ndarray:
    """(T,) float32 z − b of every learner row: its game's outcome minus the baseline."""
    if baseline not in BASELINES:
        raise ValueError(f"baseline {baseline!r} is not one of {', '.join(BASELINES)}")
    b = float(games.outcomes.mean()) if baseline == "mean" and len(games.outcomes) else 0.0
    return (games.outcomes[games.game] - b).astype(np.float32)


def reinforce_loss(net: GoNet, games: PolicyGames, baseline: str = "mean") -> torch.Tensor:
    """−1/n Σ (z − b) log p(a | s): its gradient is REINFORCE's ascent direction, negated."""
    device = net_device(net)
    planes = torch.from_numpy(games.planes).to(device).float()  # (T, C, N, N)
    candidates = torch.from_numpy(games.candidates).to(device)  # (T, N*N+1)
    logits = net(planes).masked_fill(~candidates, float("-inf"))  # (T, N*N+1)
    moves = torch.from_numpy(games.moves).to(device)  # (T,)
    log_p = torch.log_softmax(logits, dim=1).gather(1, moves[:, None]).squeeze(1)  # (T,)
    weights = torch.from_numpy(advantages(games, baseline)).to(device)  # (T,)
    return -(weights * log_p).sum() / max(len(games.outcomes), 1)


def reinforce_step(net: GoNet, optimizer: torch.optim.Optimizer, games: PolicyGames,
                   baseline: str = "mean") -> dict[str, float]:
    """One REINFORCE update of `net` on a minibatch; its loss, win rate and mean game length."""
    net.train()
    optimizer.zero_grad(set_to_none=True)
    loss = reinforce_loss(net, games, baseline)
    loss.backward()
    optimizer.step()
    net.eval()
    return {"loss": float(loss.detach()), "win_rate": games.win_rate, "mean_length": float(games.lengths.mean()),
            "learner_moves": float(len(games.moves))}
