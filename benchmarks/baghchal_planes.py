"""Baghchal input planes A/B: the documented 5 planes against 5 plus a plane of captured goats.

Two fresh nets trained on the same self-play rows with the same seed, validation losses side by side.

    python -m benchmarks.baghchal_planes --data-dir DATA --loop LOOP [--generations 1-10] [--steps 2000]

The extra plane is ``goats captured / 5`` on every point (captures = goats placed - goats on the
board, so the 5 planes already imply it, but only as a count over the goat plane). A plane earns
its place only if it lowers the validation losses here (issue #37: more planes only where they
measurably help). Last line: ``baghchal_planes: value_mse_5=<x> value_mse_6=<y> policy_loss_5=... ``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="the data dir of a Baghchal loop")
    parser.add_argument("--loop", required=True, help="the loop whose self-play rows to train on")
    parser.add_argument("--generations", default="1-10", help="first-last generation of rows")
    parser.add_argument("--steps", type=int, default=2000, help="training steps of each net")
    parser.add_argument("--seed", type=int, default=0, help="the nets' initialisation and batch order")
    return parser.parse_args(argv)


if __name__ == "__main__":
    ARGS = parse_args()

os.environ.setdefault("OMP_NUM_THREADS", "1")

import dataclasses  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from gocore.nn.baghchal_net import build, net_config  # noqa: E402
from gocore.nn.baghchal_planes import bits_of  # noqa: E402
from gocore.nn.baghchal_training import Batch, RowStreams  # noqa: E402
from gocore.nn.training import TrainConfig, train  # noqa: E402
from gocore.rules.baghchal.position import DEFAULT_RULES  # noqa: E402
from storage import baghchal as files  # noqa: E402


class CapturedPlaneStreams(RowStreams):
    """`RowStreams` whose batches carry a sixth plane: goats captured / 5."""

    def batch(self, rows: np.ndarray) -> Batch:
        batch = super().batch(rows)
        on_board = bits_of(self.columns["goats"][rows]).sum(axis=1)
        captured = (self.columns["placed"][rows].astype(np.float32) - on_board) / DEFAULT_RULES.captures_to_win
        plane = np.broadcast_to(captured[:, None, None, None], (len(rows), 1, *batch.planes.shape[2:]))
        return dataclasses.replace(batch, planes=np.concatenate([batch.planes, plane], axis=1).astype(np.float32))


def trained(columns: dict[str, np.ndarray], extra: bool, steps: int, seed: int) -> dict[str, float]:
    """Validation metrics of a fresh `cpu` net trained `steps` steps (and its CPU seconds)."""
    config = dataclasses.replace(net_config("cpu"), in_planes=5 + int(extra))
    torch.manual_seed(seed)
    net = build(config)
    train_config = TrainConfig(objective="dual", steps=steps, batch_size=128, optimizer="adamw", lr=0.002,
                               lr_steps=(), lr_schedule="cosine", checkpoint_every=steps, val_every=steps,
                               val_batches=60, log_every=max(1, steps // 5), device="cpu", seed=seed)
    streams = (CapturedPlaneStreams if extra else RowStreams)(columns, 128, seed=seed)
    started = time.process_time()
    outcome = train(net, streams, train_config)
    return {**outcome.val_metrics, "cpu_seconds": time.process_time() - started}


def main(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    first, last = (int(part) for part in args.generations.split("-"))
    columns = files.read_rows(Path(args.data_dir), args.loop, list(range(first, last + 1)))
    print(f"{len(columns['z']):,} rows (8 symmetries each) of {args.loop}, generations {first}-{last}; "
          f"{args.steps} steps of 128 for each net", flush=True)
    results = {}
    for extra in (False, True):
        results[extra] = trained(columns, extra, args.steps, args.seed)
        r = results[extra]
        print(f"{'5 planes + captured' if extra else '5 planes (documented)':24} validation value MSE "
              f"{r['value_mse']:.4f}  policy loss {r['policy_loss']:.4f}  top-1 {r['policy_top1']:.1%}  "
              f"({r['cpu_seconds']:.0f} CPU s)", flush=True)
    print(f"baghchal_planes: value_mse_5={results[False]['value_mse']:.4f} value_mse_6={results[True]['value_mse']:.4f} "
          f"policy_loss_5={results[False]['policy_loss']:.4f} policy_loss_6={results[True]['policy_loss']:.4f}")


if __name__ == "__main__":
    main(ARGS)
