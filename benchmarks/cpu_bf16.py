"""CPU bf16 inference against float32: self-play simulations per CPU-second, outputs and strength, same net.

    python -m benchmarks.cpu_bf16 [--model storage/shipped/gozero-9x9] [--games 16] [--sims 64]
                                  [--match 200] [--match-sims 64] [--bf16-sims 64] [--workers 2]

On a CPU that does bf16 natively (AMX or AVX512-BF16: `gocore.nn.conv_paths.bf16_native`), the
conv path ``bf16`` runs the net's convolutions in bfloat16 under CPU autocast. This measures, for
one trained 9x9 net (default: the net that ships with gozero), in one process and one torch thread:

1. self-play: `games` games in lockstep (AlphaGo Zero's SELFPLAY preset, `sims` simulations a
   move), once on each path (float32 = ``channels_last``, and ``bf16``), twice in alternation:
   simulations per CPU-second of each, and the ratio;
2. outputs: priors and values of both paths on 256 positions of the net's own match games: the
   largest differences and how often the top prior move agrees;
3. with ``--match N``: N games of the net on ``bf16`` (``--bf16-sims``) against the same net on
   float32 (``--match-sims``), colours alternating, two random opening moves shared by each pair
   of games (evaluation's `MatchConfig`, seed 0), each side's search evaluating 8 leaves a call as
   self-play does (one leaf a call would run ``bf16`` in float32: `conv_paths.for_batch`): bf16's
   score with its 95 % interval clustered by opening, and the CPU seconds each side spent. Equal
   simulations ask whether bf16's rounding costs strength; ``--bf16-sims`` about ``ratio x
   --match-sims`` asks what it buys at equal CPU.

The last line is ``cpu_bf16: selfplay_ratio=<r> [match_score=<s>]``. Without native bf16 it says so and
exits 0 (the choice then never offers the path).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="storage/shipped/gozero-9x9", help="a 9x9 dual net (model dir or URI)")
    parser.add_argument("--data-dir", default=None, help="data dir of a models:/ URI")
    parser.add_argument("--games", type=int, default=16, help="self-play games searched in lockstep")
    parser.add_argument("--sims", type=int, default=64, help="self-play simulations per move")
    parser.add_argument("--match", type=int, default=0, help="games of bf16 against float32 (0: none)")
    parser.add_argument("--match-sims", type=int, default=64, help="simulations per move of the float32 side")
    parser.add_argument("--bf16-sims", type=int, default=None, help="of the bf16 side (default: --match-sims)")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the match")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from gocore.nn import conv_paths
from gocore.nn.inference import NetEvaluator
from gocore.play.match import MatchConfig, MatchGame, play_match
from gocore.play.ratings import clustered_interval
from gocore.rules import sgf
from gocore.rules.board import Position
from gocore.search import mcts
from gocore.search.agents import AlphaZeroAgent
from gocore.search.selfplay import play_games
from tasks.app.models import load_net

FLOAT32 = "channels_last"
LEAVES = 8  # leaves a match search evaluates in one call (self-play's `leaves_per_game`)


def selfplay_rate(net: torch.nn.Module, path: str, games: int, sims: int) -> tuple[float, int]:
    """(simulations per CPU-second, moves) of `games` lockstep self-play games on `path`."""
    evaluator = NetEvaluator(net, device="cpu", conv_path=path)
    config = mcts.SELFPLAY.replace(sims=sims)
    play_games(evaluator, config.replace(sims=8, max_moves=4), 2, size=9, seed=1)  # warm-up
    started = time.process_time()
    played = play_games(evaluator, config, games, size=9, seed=3)
    moves = sum(len(game.moves) for game in played)
    return moves * sims / (time.process_time() - started), moves


def positions_of(games: Sequence[MatchGame], count: int) -> list[Position]:
    """Up to `count` positions replayed from the games' moves, spread evenly over them."""
    positions = [position for game in games for position in sgf.replay(game.record())[:-1]]
    step = max(1, len(positions) // count)
    return positions[::step][:count]


def agreement(net: torch.nn.Module, positions: Sequence[Position]) -> dict[str, float]:
    """Largest prior and value differences between the paths, and the top-move agreement."""
    p32, v32 = NetEvaluator(net, device="cpu", conv_path=FLOAT32).evaluate(positions)
    p16, v16 = NetEvaluator(net, device="cpu", conv_path="bf16").evaluate(positions)
    return {"prior_max": float(np.abs(p32 - p16).max()), "value_max": float(np.abs(v32 - v16).max()),
            "value_mean": float(np.abs(v32 - v16).mean()), "top1": float((p32.argmax(1) == p16.argmax(1)).mean())}


class Timed:
    """An agent whose `select_move` CPU seconds add up in `seconds`."""

    def __init__(self, agent: AlphaZeroAgent):
        self.agent, self.seconds = agent, 0.0

    def select_move(self, position: Position) -> int:
        started = time.process_time()
        try:
            return self.agent.select_move(position)
        finally:
            self.seconds += time.process_time() - started

    def __getattr__(self, name: str):
        if name == "agent":
            raise AttributeError(name)
        return getattr(self.agent, name)


def play_timed(agent_of: Callable[[str, int, int], Any], play: Callable[..., Iterable[Any]], indices: Sequence[int],
               config: Any, sims16: int, sims32: int, every: int) -> list[tuple[Any, float, float]]:
    """Games `indices` of bf16 (player A, `sims16` simulations) against float32 (B, `sims32`) played
    by `play` (a game's `play_match`) under `config`, each side's agents from `agent_of(path, sims,
    seed)`: (game, A's CPU s, B's CPU s) each; a progress line every `every` games."""
    made: dict[str, list[Timed]] = {"a": [], "b": []}

    def make(side: str, path: str, sims: int):
        def agent(seed: int) -> Timed:
            made[side].append(Timed(agent_of(path, sims, seed)))
            return made[side][-1]
        return agent

    out = []
    for game in play(make("a", "bf16", sims16), make("b", FLOAT32, sims32), indices, config,
                     (f"bf16-{sims16}", f"float32-{sims32}")):
        out.append((game, made["a"][-1].seconds, made["b"][-1].seconds))
        if len(out) % every == 0:  # progress, one line per `every` games of this process
            print(f"  {len(out)} of {len(indices)} games of a worker: bf16 {sum(g.a_score for g, _, _ in out):g} points",
                  flush=True)
    return out


def split_match(part: Callable[..., list[tuple[Any, float, float]]], args: argparse.Namespace, sims16: int,
                *extra: Any) -> list[tuple[Any, float, float]]:
    """The match, its games split over `args.workers` processes each running `part(model, data_dir,
    indices, match_sims, sims16, *extra)`, in game order."""
    parts = [list(range(start, args.match, args.workers)) for start in range(args.workers)]
    with ProcessPoolExecutor(args.workers) as pool:
        done = pool.map(part, *zip(*[(args.model, args.data_dir, indices, args.match_sims, sims16, *extra)
                                     for indices in parts if indices]))
        return sorted((row for rows in done for row in rows), key=lambda row: row[0].index)


def play_part(model: str, data_dir: str | None, indices: Sequence[int], sims32: int, sims16: int
              ) -> list[tuple[MatchGame, float, float]]:
    """Games `indices` of bf16 (player A) against float32: (game, A's CPU s, B's CPU s) each."""
    torch.set_num_threads(1)
    net = load_net(model, data_dir)
    evaluators = {path: NetEvaluator(net, device="cpu", conv_path=path) for path in ("bf16", FLOAT32)}

    def agent_of(path: str, sims: int, seed: int) -> AlphaZeroAgent:
        return AlphaZeroAgent(evaluators[path], mcts.MATCH.replace(sims=sims, leaves_per_game=LEAVES), seed=seed)

    return play_timed(agent_of, play_match, indices, MatchConfig(size=9), sims16, sims32, every=10)


def match(args: argparse.Namespace, sims16: int) -> list[tuple[MatchGame, float, float]]:
    """The match, its games split over `workers` processes, in game order."""
    return split_match(play_part, args, sims16)


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    print(f"{conv_paths.cpu_model()}, torch {torch.__version__}, one thread; model {args.model}")
    if not conv_paths.bf16_native():
        print("this CPU does not do bf16 natively (or GOZERO_CPU_BF16=0): the bf16 path is never chosen")
        print("cpu_bf16: selfplay_ratio=nan")
        return
    net = load_net(args.model, args.data_dir)
    rates: dict[str, list[float]] = {FLOAT32: [], "bf16": []}
    for path in (FLOAT32, "bf16", FLOAT32, "bf16"):
        rate, moves = selfplay_rate(net, path, args.games, args.sims)
        rates[path].append(rate)
        print(f"self-play {path:13} {rate:7,.0f} simulations/CPU-s  ({args.games} games, {moves} moves)", flush=True)
    ratio = max(rates["bf16"]) / max(rates[FLOAT32])
    print(f"self-play bf16 / float32 (best of two each): {ratio:.2f}x")
    tail = f"cpu_bf16: selfplay_ratio={ratio:.3f}"
    if args.match:
        sims16 = args.bf16_sims or args.match_sims
        games = match(args, sims16)
        scores = [game.a_score for game, _, _ in games]
        interval = clustered_interval(scores, [game.opening for game, _, _ in games])
        cpu16, cpu32 = sum(row[1] for row in games), sum(row[2] for row in games)
        moves = max(1, sum(len(game.game.moves) for game, _, _ in games) / 2)  # each side's
        print(f"match: bf16 at {sims16} sims against float32 at {args.match_sims}, {len(games)} games: "
              f"{sum(scores):g} points, {np.mean(scores):.1%} (95 % {interval.low:.1%}-{interval.high:.1%}, "
              f"clustered by {interval.clusters} openings); CPU s per move bf16 "
              f"{cpu16 / moves:.3f}, float32 {cpu32 / moves:.3f}")
        close = agreement(net, positions_of([game for game, _, _ in games], 256))
        tail += f" match_score={np.mean(scores):.3f}"
    else:
        close = agreement(net, positions_of(match_free_games(net), 256))
    print(f"outputs on 256 positions: priors differ by at most {close['prior_max']:.4f}, values by at most "
          f"{close['value_max']:.4f} (mean {close['value_mean']:.4f}); top prior move agrees in {close['top1']:.1%}")
    print(tail)


def match_free_games(net: torch.nn.Module) -> list[MatchGame]:
    """Four quick float32 games of the net against itself (8 sims): positions for `agreement`."""
    evaluator = NetEvaluator(net, device="cpu", conv_path=FLOAT32)
    agent = lambda seed: AlphaZeroAgent(evaluator, mcts.MATCH.replace(sims=8), seed=seed)  # noqa: E731
    return list(play_match(agent, agent, range(4), MatchConfig(size=9), ("a", "b")))


if __name__ == "__main__":
    main()
