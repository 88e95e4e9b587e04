"""Baghchal on CPU bf16 against float32: self-play simulations per CPU-second, outputs and strength, same net.

    python -m benchmarks.baghchal_bf16 [--model models:/baghchal/85 --data-dir DIR] [--games 32] [--sims 48]
                                       [--match 200] [--match-sims 64] [--bf16-sims 64] [--workers 2]
                                       [--train 400 --loop NAME]

Baghchal's evaluator runs its net on the CPU convolution path chosen per machine, as Go's does
(`gocore.nn.conv_paths`), among the float32 paths unless a loop asks ``--cpu-bf16`` (``bf16`` only
where the CPU does bf16 natively). This measures, for one
Baghchal net (``--model``; default a freshly initialised ``cpu``-preset net, which says nothing of
strength), in one process and one torch thread:

1. self-play: `games` games in lockstep (the loop's SELFPLAY search, `sims` simulations a ply), once
   on each path (float32 = ``channels_last``, and ``bf16``), twice in alternation: simulations per
   CPU-second of each, and the ratio;
2. outputs: priors and values of both paths on 256 positions of those games: the largest
   differences and how often the top prior action agrees;
3. with ``--match N``: N games of the net on ``bf16`` (``--bf16-sims``) against the same net on
   float32 (``--match-sims``), sides alternating, `--opening` random plies shared by each pair of
   games, each side's search evaluating 8 leaves a call (one would run ``bf16`` in float32:
   `conv_paths.for_batch`): bf16's score (a draw is half a point) with its 95 % interval clustered
   by opening, and the CPU seconds a ply of each side;
4. with ``--train STEPS --loop NAME``: the net trained from its weights for STEPS steps on the rows
   of the last 4 generations of loop NAME in ``--data-dir`` (the loop's own `train_config` on its
   recorded settings: AdamW, its batch size and lr, cosine decay), once in float32 and once with ``cpu_bf16`` (`TrainConfig.cpu_bf16`),
   same seed and batches: rows per CPU-second of each, the ratio, and both nets' final training loss
   and validation policy loss and value MSE.

The last line is ``baghchal_bf16: selfplay_ratio=<r> [match_score=<s>] [train_ratio=<t>]``. Without native bf16 it says so
and exits 0 (the choice then never offers the path).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a Baghchal net (model dir or URI; default: a fresh cpu net)")
    parser.add_argument("--data-dir", default=None, help="data dir of a models:/ URI")
    parser.add_argument("--games", type=int, default=32, help="self-play games searched in lockstep")
    parser.add_argument("--sims", type=int, default=48, help="self-play simulations per ply")
    parser.add_argument("--match", type=int, default=0, help="games of bf16 against float32 (0: none)")
    parser.add_argument("--match-sims", type=int, default=64, help="simulations per ply of the float32 side")
    parser.add_argument("--bf16-sims", type=int, default=None, help="of the bf16 side (default: --match-sims)")
    parser.add_argument("--opening", type=int, default=4, help="random plies shared by each pair of match games")
    parser.add_argument("--workers", type=int, default=1, help="processes playing the match")
    parser.add_argument("--train", type=int, default=0, help="training steps of each precision (0: none)")
    parser.add_argument("--loop", default=None, help="the Baghchal loop in --data-dir whose rows --train uses")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch and gocore load

import dataclasses
import time

import numpy as np
import torch

from benchmarks.cpu_bf16 import FLOAT32, LEAVES, play_timed, split_match
from gocore.nn import baghchal_net, conv_paths
from gocore.nn.baghchal_net import BaghchalNetEvaluator
from gocore.play.baghchal_match import BaghchalMatchConfig, MatchGame, play_match
from gocore.play.ratings import clustered_interval
from gocore.rules.baghchal.position import Position
from gocore.search.baghchal_agents import ZeroAgent
from gocore.search.baghchal_selfplay import MATCH, SELFPLAY, BaghchalSelfPlayConfig, PlayedGame, play_games
from storage import baghchal as files
from storage import layout, loops
from tasks.app.baghchal_settings import BaghchalLoopSettings
from tasks.app.models import load_net


def the_net(model: str | None, data_dir: str | None) -> torch.nn.Module:
    """The net of `model`, or a freshly initialised `cpu`-preset one (seed 0)."""
    if model is None:
        torch.manual_seed(0)
        return baghchal_net.build(baghchal_net.net_config("cpu"))
    net = load_net(model, data_dir)
    if net.config.game != "baghchal":
        raise SystemExit(f"{model} is a {net.config.game} net, not a Baghchal one")
    return net


def selfplay_rate(net: torch.nn.Module, path: str, games: int, sims: int) -> tuple[float, list[PlayedGame]]:
    """(simulations per CPU-second, the games) of `games` lockstep self-play games on `path`."""
    evaluator = BaghchalNetEvaluator(net, device="cpu", conv_path=path)
    play_games(evaluator, BaghchalSelfPlayConfig(SELFPLAY.replace(sims=8, max_moves=4)), 2, seed=1)  # warm-up
    started = time.process_time()
    played = play_games(evaluator, BaghchalSelfPlayConfig(SELFPLAY.replace(sims=sims)), games, seed=3)
    plies = sum(len(game.actions) for game in played)
    return plies * sims / (time.process_time() - started), played


def agreement(net: torch.nn.Module, positions: Sequence[Position]) -> dict[str, float]:
    """Largest prior and value differences between the paths, and the top-action agreement."""
    p32, v32 = BaghchalNetEvaluator(net, device="cpu", conv_path=FLOAT32).evaluate(positions)
    p16, v16 = BaghchalNetEvaluator(net, device="cpu", conv_path="bf16").evaluate(positions)
    return {"prior_max": float(np.abs(p32 - p16).max()), "value_max": float(np.abs(v32 - v16).max()),
            "value_mean": float(np.abs(v32 - v16).mean()), "top1": float((p32.argmax(1) == p16.argmax(1)).mean())}


def play_part(model: str | None, data_dir: str | None, indices: Sequence[int], sims32: int, sims16: int,
              opening: int) -> list[tuple[MatchGame, float, float]]:
    """Games `indices` of bf16 (player A) against float32: (game, A's CPU s, B's CPU s) each."""
    torch.set_num_threads(1)
    net = the_net(model, data_dir)
    evaluators = {path: BaghchalNetEvaluator(net, device="cpu", conv_path=path) for path in ("bf16", FLOAT32)}

    def agent_of(path: str, sims: int, seed: int) -> ZeroAgent:
        return ZeroAgent(evaluators[path], MATCH.replace(sims=sims, leaves_per_game=LEAVES), seed=seed)

    return play_timed(agent_of, play_match, indices, BaghchalMatchConfig(opening=opening), sims16, sims32, every=20)


def match(args: argparse.Namespace, sims16: int) -> list[tuple[MatchGame, float, float]]:
    """The match, its games split over `workers` processes, in game order."""
    return split_match(play_part, args, sims16, args.opening)


def train_both(net: torch.nn.Module, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """{precision: rows per CPU-second and the final metrics} of `args.train` steps each (see the module doc)."""
    from gocore.nn.baghchal_training import RowStreams
    from gocore.nn.training import train
    from tasks.baghchal import train_config

    data = layout.data_dir(args.data_dir)
    loop_dir = files.generation_dir(data, args.loop, 0).parent
    done = sorted(int(path.name.removeprefix("gen=")) for path in loop_dir.glob("gen=*"))
    window = [generation for generation in done if files.finished_batches(data, args.loop, generation)][-4:]
    if not window:
        raise SystemExit(f"loop {args.loop!r} in {data} has no finished self-play batches")
    columns = files.read_rows(data, args.loop, window)
    recorded = loops.read_settings(data, args.loop) or {}  # the loop's batch size, lr, seed
    settings = BaghchalLoopSettings(**{key: value for key, value in recorded.items()
                                       if key in {field.name for field in dataclasses.fields(BaghchalLoopSettings)}})
    print(f"training: {len(columns['z']):,} rows of generations {window[0]}-{window[-1]}, {args.train} steps of "
          f"{settings.batch_size} each way", flush=True)
    results = {}
    for name, bf16 in (("float32", False), ("bf16", True)):
        config = dataclasses.replace(train_config(settings, window[-1], args.train, "cpu"), cpu_bf16=bf16,
                                     checkpoint_every=0)
        trained = baghchal_net.build(net.config)
        trained.load_state_dict(net.state_dict())
        torch.manual_seed(config.seed)
        started = time.process_time()
        outcome = train(trained, RowStreams(columns, settings.batch_size, seed=config.seed), config)
        cpu = time.process_time() - started
        results[name] = {"rows_per_cpu_s": args.train * settings.batch_size / cpu, "loss": outcome.metrics["loss"],
                         **{f"val_{key}": value for key, value in outcome.val_metrics.items()}}
        row = results[name]
        print(f"training {name:8} {row['rows_per_cpu_s']:7,.0f} rows/CPU-s; loss {row['loss']:.4f}, val policy loss "
              f"{row.get('val_policy_loss', float('nan')):.4f}, val value MSE {row.get('val_value_mse', float('nan')):.4f}",
              flush=True)
    return results


def main() -> None:
    args = parse_args()
    if args.train and (args.loop is None or args.data_dir is None):
        raise SystemExit("--train needs --loop and --data-dir: the rows it trains on")
    torch.set_num_threads(1)
    print(f"{conv_paths.cpu_model()}, torch {torch.__version__}, one thread; model {args.model or 'a fresh cpu net'}")
    if not conv_paths.bf16_native():
        print("this CPU does not do bf16 natively (or GOZERO_CPU_BF16=0): the bf16 path is never chosen")
        print("baghchal_bf16: selfplay_ratio=nan")
        return
    net = the_net(args.model, args.data_dir)
    rates: dict[str, list[float]] = {FLOAT32: [], "bf16": []}
    for path in (FLOAT32, "bf16", FLOAT32, "bf16"):
        rate, played = selfplay_rate(net, path, args.games, args.sims)
        rates[path].append(rate)
        plies = sum(len(game.actions) for game in played)
        print(f"self-play {path:13} {rate:7,.0f} simulations/CPU-s  ({args.games} games, {plies} plies)", flush=True)
    ratio = max(rates["bf16"]) / max(rates[FLOAT32])
    print(f"self-play bf16 / float32 (best of two each): {ratio:.2f}x")
    positions = [position for game in played for position in game.positions]
    close = agreement(net, positions[::max(1, len(positions) // 256)][:256])
    print(f"outputs on 256 self-play positions: priors differ by at most {close['prior_max']:.4f}, values by at "
          f"most {close['value_max']:.4f} (mean {close['value_mean']:.4f}); top prior action agrees in "
          f"{close['top1']:.1%}")
    tail = f"baghchal_bf16: selfplay_ratio={ratio:.3f}"
    if args.match:
        sims16 = args.bf16_sims or args.match_sims
        games = match(args, sims16)
        scores = [game.a_score for game, _, _ in games]
        interval = clustered_interval(scores, [game.opening for game, _, _ in games])
        cpu16, cpu32 = sum(row[1] for row in games), sum(row[2] for row in games)
        plies = max(1, sum(len(game.game.actions) - len(game.opening) for game, _, _ in games) / 2)  # searched, a side
        draws = sum(score == 0.5 for score in scores)
        print(f"match: bf16 at {sims16} sims against float32 at {args.match_sims}, {len(games)} games "
              f"({draws} drawn): {sum(scores):g} points, {np.mean(scores):.1%} (95 % {interval.low:.1%}-"
              f"{interval.high:.1%}, clustered by {interval.clusters} openings); CPU s per ply bf16 "
              f"{cpu16 / plies:.4f}, float32 {cpu32 / plies:.4f}")
        tail += f" match_score={np.mean(scores):.3f}"
    if args.train:
        trained = train_both(net, args)
        ratio = trained["bf16"]["rows_per_cpu_s"] / trained["float32"]["rows_per_cpu_s"]
        print(f"training bf16 / float32: {ratio:.2f}x")
        tail += f" train_ratio={ratio:.3f}"
    print(tail)


if __name__ == "__main__":
    main()
