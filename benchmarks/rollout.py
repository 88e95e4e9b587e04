"""AlphaGo's fast rollout policy: rollouts/s beside uniform random playouts on one core, and how
well it predicts expert moves.

    python -m benchmarks.rollout [--dataset DIR] [--model URI|DIR] [--rollouts 3000] [--steps 3000]

Speed: full 9x9 games from the empty board, best of 3 CPU-time measurements each (the least
disturbed on a shared machine), the pattern policy (`gocore.search.rollout`) and the uniform
random playouts (`board.random_playouts`) in the same run. Weights: the model's, else trained
here on --dataset, else random (N(0, 0.5) per feature: the kernel's cost hardly depends on them).

Accuracy (with --dataset): top-1 expert-move prediction on the dataset's held-out games after
training on up to --rows of its training rows, next to a uniform choice among the same
candidates, and the SL policy's (--policy URI) on the same positions.

The last line is ``rollout: policy_per_s=<n> uniform_per_s=<n> ratio=<r> [accuracy=<a> uniform_accuracy=<u>]``.
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", help="an ingested dataset directory to train on and measure accuracy")
    parser.add_argument("--model", help="a rollout model (models:/... or a model directory) to time")
    parser.add_argument("--policy", help="an SL policy model whose accuracy to show beside (needs --dataset)")
    parser.add_argument("--rollouts", type=int, default=3000, help="policy rollouts per timing")
    parser.add_argument("--steps", type=int, default=3000, help="training steps (with --dataset)")
    parser.add_argument("--rows", type=int, default=100_000, help="training rows read (with --dataset)")
    parser.add_argument("--data-dir", help="data dir of the model registry (default: GOZERO_DATA or ./gozero-data)")
    return parser.parse_args()


if __name__ == "__main__":
    ARGS = parse_args()  # --help and usage errors end here, before numba, torch and gocore load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from gocore.nn import patterns  # noqa: E402
from gocore.rules.board import Position, random_playouts  # noqa: E402
from gocore.search.rollout import PatternRollouts  # noqa: E402

SIZE = 9


def per_second(count: int, play) -> float:
    """Games per CPU second, best of 3 (after one warm-up call that compiles)."""
    play(5)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        play(count)
        best = min(best, time.process_time() - start)
    return count / best


def trained_weights(args: argparse.Namespace) -> tuple[np.ndarray, dict[str, float]]:
    """Weights trained on --dataset and the accuracies on its held-out rows."""
    import torch

    from gocore.nn import rollout_training
    from gocore.nn.nets import NetConfig, build_net
    from gocore.nn.rollout_training import RolloutTrainConfig
    from tasks.rollout import policy_accuracy, read_examples
    from tasks.train import dataset_facts

    torch.set_num_threads(1)
    facts = dataset_facts(args.dataset)
    config = RolloutTrainConfig(steps=args.steps)
    start = time.perf_counter()
    train, val = read_examples(facts, "train", args.rows, 0), read_examples(facts, "val", 20_000, 0)
    net = build_net(NetConfig(board_size=facts.board_size, in_planes=facts.in_planes, family="rollout"))
    loss = rollout_training.fit(net, train, config)
    scores = {"accuracy": rollout_training.accuracy(net, val),
              "uniform_accuracy": rollout_training.uniform_accuracy(val)}
    print(f"trained on {len(train)} positions ({config.steps} steps, final loss {loss:.3f}) in "
          f"{time.perf_counter() - start:.0f} s; held out: {len(val)} positions")
    if args.policy:
        scores["policy_accuracy"] = policy_accuracy(args.policy, facts, 20_000, 0, args.data_dir)
    return net.weights_array(), scores


def main(args: argparse.Namespace) -> None:
    scores: dict[str, float] = {}
    if args.model:
        from tasks.app.models import load_rollout_policy

        weights = load_rollout_policy(args.model, SIZE, args.data_dir).weights
    elif args.dataset:
        weights, scores = trained_weights(args)
    else:
        weights = np.random.default_rng(0).normal(0.0, 0.5, patterns.NUM_FEATURES)
    rollouts, start = PatternRollouts(weights), Position.initial(SIZE)
    policy = per_second(args.rollouts, lambda n: rollouts.scores(start, n, seed=1))
    uniform = per_second(10 * args.rollouts, lambda n: random_playouts(start, n, seed=1))
    moves = (rollouts.trace(start, 1, 1, record=3 * SIZE * SIZE)[1] >= 0).sum()
    print(f"pattern-policy rollouts: {policy:,.0f}/s   uniform random playouts: {uniform:,.0f}/s   "
          f"ratio {policy / uniform:.3f}   (one traced policy game: {moves} moves)")
    for name, value in scores.items():
        print(f"{name}: {value:.3f}")
    extra = "".join(f" {k}={v:.3f}" for k, v in scores.items())
    print(f"rollout: policy_per_s={policy:.0f} uniform_per_s={uniform:.0f} ratio={policy / uniform:.3f}{extra}")


if __name__ == "__main__":
    main(ARGS)
