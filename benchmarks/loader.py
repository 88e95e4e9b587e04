"""Training data delivered per second: the in-process stream vs decode worker processes, against
the net's own training-step rate here and a projected GPU rate.

    python -m benchmarks.loader [--rows 24000] [--batches 24] [--batch-size 1024] [--workers 1 2 4] [--threads 1]

Writes four synthetic datasets (agz17 rows, a 30 % stone density, game-split; 9x9 and 19x19, SGF
rows and self-play rows with pi, ownership and score), then streams each as training does
(`storage.stream.StreamFactory`, random symmetry, aux targets on self-play rows, shuffle buffer
8,192 rows) and turns each batch into the tensors a step reads (`gocore.nn.batch_device.batch_tensors`
on the CPU):

- `in-process`: `loader_workers=0`, the path before worker processes (numpy symmetry, float32 on
  the host, one prefetch thread);
- `W workers`: `loader_workers=W`; batches are raw (uint8, the symmetry and float conversion run
  where the batch lands: here the CPU, so that cost is in the figure; on a GPU it leaves the host),
  unpacked in the prefetch thread for W = 1 and by W processes for W >= 2.

Rates leave out the first `workers` + 2 batches (the shuffle buffer's fill, the pool's start). Beside them: the
training step rate of the `tiny` and `small` DualNets on this CPU (batch 256, in memory), and a
*projection* for a GPU: forward FLOPs per sample counted by torch on the net definitions, times 3
for a training step, against an H100's dense bf16 peak (989 TFLOP/s) at 30 % and 40 %
utilisation. Each stream prints samples/s (wall) and samples per CPU-second (this process's
threads and its worker processes), and the ratio to in-process of the latter, which other
processes on the cores move less. The last line is
``loader: best_workers_vs_in_process=<ratio> per CPU-second (19x19 self-play, W workers)``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=24_000, help="rows per dataset")
    parser.add_argument("--batches", type=int, default=24, help="batches timed per stream (after the first)")
    parser.add_argument("--batch-size", type=int, default=1024, help="rows per batch")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="worker counts to try")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (2 spin against other runs here)")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before torch, gocore and storage load

import numpy as np
import psutil
import torch
from torch.utils.flop_counter import FlopCounterMode

from gocore.nn.batch_device import batch_tensors
from gocore.nn.features import pack_planes
from gocore.nn.losses import loss_terms
from gocore.nn.nets import build_net, preset
from storage import datasets
from storage.schemas import rows_table, selfplay_table
from storage.stream import StreamFactory
from tasks.app.rows import ROW_DECODER

PLANES = 17
H100_BF16_DENSE = 989e12  # FLOP/s, SXM, no sparsity
UTILISATION = (0.30, 0.40)
STEP_FLOPS_PER_FORWARD = 3  # forward + backward (about twice the forward)


def write_dataset(root: Path, size: int, is_selfplay: bool, rows: int, seed: int) -> Path:
    """Two shards of synthetic agz17 rows (games of 100 moves) and a manifest."""
    rng, points, listed = np.random.default_rng(seed), size * size, []
    for shard in range(2):
        count = rows // 2
        planes = (rng.random((count, PLANES, size, size)) < 0.3).astype(np.uint8)  # (R, C, N, N)
        games = np.repeat([f"g{shard}-{g}" for g in range(count // 100 + 1)], 100)[:count].astype(object)
        columns = {"encoder": np.full(count, "agz17", object), "size": np.full(count, size, np.int8),
                   "planes": pack_planes(planes), "game_id": games, "symmetry": np.zeros(count, np.int8),
                   "move_number": np.arange(count, dtype=np.int16) % 100, "komi": np.full(count, 7.5, np.float32)}
        value = rng.choice(np.array([-1, 1], np.int8), count)
        if is_selfplay:
            pi = rng.random((count, points + 1)).astype(np.float32)  # (R, N*N+1)
            columns.update(pi=pi / pi.sum(axis=1, keepdims=True), z=value, generation=np.zeros(count, np.int32),
                           model_version=np.full(count, "v1", object), score=rng.normal(0, 5, count).astype(np.float32),
                           ownership=rng.integers(-1, 2, (count, points)).astype(np.int8))
            table = selfplay_table(columns)
        else:
            columns.update(move=rng.integers(0, points + 1, count).astype(np.int16), value=value,
                           source=np.full(count, "synthetic", object))
            table = rows_table(columns)
        name = f"shard-{shard}.parquet"
        size_bytes = datasets.write_parquet(root / name, table, row_group_size=4096)
        listed.append({"file": name, "rows": count, "bytes": size_bytes, "key": str(shard)})
    datasets.write_manifest(root, {"shards": listed, "rows": sum(s["rows"] for s in listed)})
    return root


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its children (the forkserver's workers too)."""
    children = psutil.Process().children(recursive=True)
    return time.process_time() + sum(sum(c.cpu_times()[:2]) for c in children if c.is_running())


def delivered_rate(dataset: Path, batch_size: int, batches: int, workers: int, aux: bool) -> tuple[float, float]:
    """Samples per second and per CPU-second (workers included) of train batches turned into CPU
    tensors, after `workers` + 2 warm-up batches."""
    factory = StreamFactory(dataset, batch_size, ROW_DECODER, shuffle_buffer=8192, random_symmetry=True,
                            aux_targets=aux, loader_workers=workers)
    stream = iter(factory("train", 0))
    try:
        for _ in range(workers + 2):  # warm-up: the buffer's fill, every worker started and fed
            batch_tensors(next(stream), torch.device("cpu"))
        started, cpu = time.perf_counter(), cpu_seconds()
        for _ in range(batches):
            batch_tensors(next(stream), torch.device("cpu"))
        samples = batches * batch_size
        return samples / (time.perf_counter() - started), samples / (cpu_seconds() - cpu)
    finally:
        stream.close()


def net_for(name: str, size: int) -> torch.nn.Module:
    return build_net(preset(name, size, PLANES, encoder="agz17"))


def forward_flops(name: str, size: int) -> float:
    """Forward FLOPs per sample of the preset's DualNet, counted by torch."""
    net = net_for(name, size).eval()
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        net(torch.zeros(1, PLANES, size, size))
    return float(counter.get_total_flops())


def step_rate(name: str, size: int, batch_size: int = 256, steps: int = 3) -> float:
    """Training samples/s of the preset's DualNet on this CPU (dual loss, SGD, data in memory)."""
    torch.manual_seed(0)
    net = net_for(name, size).train()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    rng = np.random.default_rng(0)
    batch = {"planes": torch.from_numpy((rng.random((batch_size, PLANES, size, size)) < 0.3).astype(np.float32)),
             "move": torch.from_numpy(rng.integers(0, size * size + 1, batch_size)),
             "value": torch.from_numpy(rng.choice([-1.0, 1.0], batch_size).astype(np.float32))}

    def one_step() -> None:
        terms = loss_terms(net, "dual", batch)
        optimizer.zero_grad(set_to_none=True)
        (terms["policy_loss"] + terms["value_mse"]).backward()
        optimizer.step()

    one_step()  # warm-up
    started = time.perf_counter()
    for _ in range(steps):
        one_step()
    return steps * batch_size / (time.perf_counter() - started)


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, batch {args.batch_size}, "
          f"{args.batches} batches timed per stream")
    kinds = [(9, False), (9, True), (19, False), (19, True)]
    rates: dict[tuple[int, bool], dict[int, tuple[float, float]]] = {}
    print("samples/s and samples/CPU-s (the ratio is of the latter, robust to the other runs' load):")
    with tempfile.TemporaryDirectory(prefix="gozero-bench-loader-") as tmp:
        for size, is_selfplay in kinds:
            label = f"{size}x{size} {'self-play' if is_selfplay else 'SGF'}"
            dataset = write_dataset(Path(tmp) / label.replace(" ", "-"), size, is_selfplay, args.rows, seed=size)
            rates[size, is_selfplay] = {w: delivered_rate(dataset, args.batch_size, args.batches, w, is_selfplay)
                                        for w in (0, *args.workers)}
            row = rates[size, is_selfplay]
            sides = "  ".join(f"{w} worker{'s' * (w > 1)} {row[w][0]:8,.0f} {row[w][1]:8,.0f} ({row[w][1] / row[0][1]:.2f}x)"
                              for w in args.workers)
            print(f"{label:15} in-process {row[0][0]:8,.0f} {row[0][1]:8,.0f}  {sides}")
    report_nets(rates)


def report_nets(rates: dict[tuple[int, bool], dict[int, tuple[float, float]]]) -> None:
    """The nets' step rates here, the GPU projection, and each against the best loader rate."""
    print("training steps (DualNet, batch 256, this CPU) and the GPU projection (H100 bf16, "
          f"{UTILISATION[0]:.0%}-{UTILISATION[1]:.0%} of {H100_BF16_DENSE / 1e12:.0f} TFLOP/s; PROJECTION):")
    for name, sizes in (("tiny", (9,)), ("small", (9, 19)), ("full", (9, 19))):
        for size in sizes:
            flops = STEP_FLOPS_PER_FORWARD * forward_flops(name, size)
            low, high = (u * H100_BF16_DENSE / flops for u in UTILISATION)
            best = max(wall for wall, _ in rates[size, True].values())  # self-play rows: the zero loop's data
            here = f"{step_rate(name, size):8,.0f} samples/s here" if name != "full" else " " * 23
            print(f"  {name:5} {size:2}x{size:<2} {flops / 1e6:8,.0f} MFLOP/sample  {here}  GPU {low:10,.0f}-{high:10,.0f} "
                  f"samples/s  loader/GPU {best / high:.3f}-{best / low:.3f}")
    row = rates[19, True]
    best = max((w for w in row if w), key=lambda w: row[w][1])
    print(f"loader: best_workers_vs_in_process={row[best][1] / row[0][1]:.3f} per CPU-second "
          f"(19x19 self-play, {best} workers)")


if __name__ == "__main__":
    main()
