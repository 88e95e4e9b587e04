"""Training throughput streaming from Parquet vs the same samples already in memory, side by side.

    python -m benchmarks.train [--games 300] [--steps 5] [--rounds 7] [--batch-size 256]

Builds a 9x9 agz17 dataset (random games, all 8 symmetries, written as ingest writes shards),
then trains the `small` DualNet with `gocore.nn.training.train` on (a) `storage.stream.BatchStream`
over the shards and (b) `InMemoryBatches` holding the same samples (the stream's first batches)
as float32 arrays. Runs alternate A-B-B-A from the same initial weights; each run's rate leaves
out its first step (warm-up, shuffle-buffer fill); each mode keeps its best run, as in the other
benchmarks. Other processes sharing the cores move step times several-fold, so the median of
the per-round ratios and samples per CPU-second are printed too. The last line is
``train: parquet_vs_memory=<ratio> samples_per_s=<n>`` (target: ratio >= 0.9, the data path
never starves the model).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterable
from itertools import islice
from pathlib import Path


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="random games in the dataset (x8 symmetries)")
    parser.add_argument("--shards", type=int, default=4, help="Parquet shards")
    parser.add_argument("--steps", type=int, default=5, help="training steps per run (>= 2)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of one run per mode")
    parser.add_argument("--batch-size", type=int, default=256, help="rows per step")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch, gocore and storage load

import numpy as np
import torch

from gocore.nn.encode import EncodeOptions, ShardEncoder
from gocore.nn.nets import build_net, preset
from gocore.nn.training import SMALL, TrainConfig, train
from gocore.play.match import play_game
from gocore.rules.sgf import GameRecord
from gocore.search.agents import RandomAgent
from storage import datasets, schemas
from storage.memory_batches import InMemoryBatches
from storage.stream import Batch, StreamFactory
from tasks.app.rows import ROW_DECODER

SIZE = 9


def build_dataset(root: Path, games: int, shards: int, seed: int) -> Path:
    """Random 9x9 games encoded (agz17, all8) into `shards` Parquet shards plus a manifest."""
    listed = []
    for shard in range(shards):
        encoder = ShardEncoder(EncodeOptions(encoder="agz17", augment="all8", size=SIZE), seed=seed + shard)
        for i in range(shard, games, shards):
            game = play_game(RandomAgent(seed=seed + 2 * i), RandomAgent(seed=seed + 2 * i + 1), size=SIZE)
            encoder.add_game(GameRecord(size=SIZE, moves=game.moves, winner=game.winner), f"random#{i}")
        columns = encoder.finish()
        name = f"shard-{shard:05d}.parquet"
        size = datasets.write_parquet(root / name, schemas.encoded_rows_table(columns))
        listed.append({"file": name, "rows": len(columns), "bytes": size, "key": str(shard)})
    datasets.write_manifest(root, {"shards": listed, "rows": sum(s["rows"] for s in listed),
                                   "bytes": sum(s["bytes"] for s in listed)})
    return root


def measure(net_state: dict[str, torch.Tensor], factory: Callable[[str, int], Iterable[Batch]],
            config: TrainConfig) -> dict[str, float]:
    """samples/s, data-wait fraction and samples per CPU-second (all threads) of one run from
    `net_state`, leaving out its first step."""
    net = build_net(preset("small", SIZE, 17, encoder="agz17"))
    net.load_state_dict(net_state)
    reports: list[tuple[dict[str, float], float]] = []
    train(net, factory, config, on_metrics=lambda step, m: reports.append((m, time.process_time())))
    steady = reports[1:]  # one report per step
    seconds = sum(config.batch_size / m["train/samples_per_s"] for m, _ in steady)
    waited = sum(m["train/data_wait"] * config.batch_size / m["train/samples_per_s"] for m, _ in steady)
    samples = len(steady) * config.batch_size
    return {"rate": samples / seconds, "wait": waited / seconds,
            "cpu_rate": samples / (steady[-1][1] - reports[0][1])}


def main() -> None:
    args = parse_args()

    with tempfile.TemporaryDirectory(prefix="gozero-bench-train-") as tmp:
        started = time.perf_counter()
        dataset = build_dataset(Path(tmp) / "dataset", args.games, args.shards, seed=11)
        manifest = datasets.read_manifest(dataset)
        print(f"dataset: {manifest['rows']:,} rows, {manifest['bytes'] / 1e6:.1f} MB in {args.shards} shards "
              f"({time.perf_counter() - started:.1f} s to build)")
        factory = StreamFactory(dataset, args.batch_size, ROW_DECODER, val_percent=5, seed=0)
        memory = InMemoryBatches.collect(islice(factory("train", 0), args.steps), batch_size=args.batch_size)
        sources = {"memory": lambda split, skip: memory, "parquet": factory}
        config = dataclasses.replace(SMALL, steps=max(2, args.steps), batch_size=args.batch_size, val_every=0,
                                     checkpoint_every=0, log_every=1)
        torch.manual_seed(0)
        initial = build_net(preset("small", SIZE, 17, encoder="agz17")).state_dict()
        measure(initial, sources["memory"], config)  # warm-up: allocator, kernels
        runs: dict[str, list[dict[str, float]]] = {"memory": [], "parquet": []}
        for index in range(args.rounds):
            for mode in ("memory", "parquet")[:: 1 if index % 2 == 0 else -1]:  # A-B-B-A: no order bias
                runs[mode].append(measure(initial, sources[mode], config))
            print(f"  round {index + 1}: memory {runs['memory'][-1]['rate']:7.1f}, "
                  f"parquet {runs['parquet'][-1]['rate']:7.1f} samples/s")
    report(runs, args.batch_size)


def report(runs: dict[str, list[dict[str, float]]], batch_size: int) -> None:
    """Print the best rate of each mode, the robust side figures, and the summary line."""
    best = {mode: max(results, key=lambda r: r["rate"]) for mode, results in runs.items()}
    cpu = {mode: max(r["cpu_rate"] for r in results) for mode, results in runs.items()}
    paired = np.median([p["rate"] / m["rate"] for p, m in zip(runs["parquet"], runs["memory"])])
    print(f"in memory:        {best['memory']['rate']:8.1f} samples/s  {cpu['memory']:7.1f} samples/CPU-s  "
          f"(small DualNet 9x9 agz17, batch {batch_size}, {torch.get_num_threads()} torch threads)")
    print(f"streamed parquet: {best['parquet']['rate']:8.1f} samples/s  {cpu['parquet']:7.1f} samples/CPU-s  "
          f"(waiting for data {100 * best['parquet']['wait']:.2f}% of the time)")
    cpu_ratio = cpu["parquet"] / cpu["memory"]
    print(f"median per-round ratio {paired:.3f}; samples per CPU-second ratio {cpu_ratio:.3f}")
    ratio = best["parquet"]["rate"] / best["memory"]["rate"]
    print(f"train: parquet_vs_memory={ratio:.3f} samples_per_s={best['parquet']['rate']:.1f}")


if __name__ == "__main__":
    main()
