"""Ingest speed: SGF text -> Parquet rows on disk (agz17, 8x augmented), 9x9, side by side with a
straightforward baseline on the same games, plus the speed-up from 1 to 2 worker processes.

    python -m benchmarks.ingest [--games 2000] [--baseline-games 300] [--runs 3]

The baseline is what one would write first: sgfmill parse, `sgfmill.boards` replay, numpy planes
built per position, `numpy.rot90`/`fliplr` per position and symmetry, packbits, the same writer.
Last line: ``ingest: games_per_s=<n> x_baseline=<ratio> bytes_per_row=<n> scaling_2w=<ratio>``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path


def parse_args() -> argparse.Namespace:
    """The command line; parsed before the imports below, so that --help answers at once."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="9x9 games to encode")
    parser.add_argument("--baseline-games", type=int, default=300, help="games for the slower baseline")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of ours; the median counts")
    return parser.parse_args()


# ruff: noqa: E402 - the imports below come after the early parse on purpose
if __name__ == "__main__":
    parse_args()  # --help and usage errors end here, before numba, gocore and Prefect load

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sgfmill import boards  # noqa: E402
from sgfmill import sgf as sgfmill_sgf

from gocore.nn.encode import EncodeOptions  # noqa: E402
from gocore.play.match import play_game  # noqa: E402
from gocore.rules import sgf  # noqa: E402
from gocore.search.agents import RandomAgent  # noqa: E402
from storage import datasets, schemas  # noqa: E402
from tasks.encode import ShardSpec, encode_shard, finalize_dataset, plan_shards  # noqa: E402

SIZE = 9
OPTIONS = EncodeOptions(encoder="agz17", augment="all8", size=SIZE)


def write_games(folder: Path, count: int, seed: int) -> None:
    """`count` random 9x9 games of 40-80 moves (typical 9x9 lengths), one SGF file each."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    for i in range(count):
        game = play_game(RandomAgent(seed=seed + 2 * i), RandomAgent(seed=seed + 2 * i + 1), SIZE,
                         max_moves=int(rng.integers(40, 81)))
        record = sgf.GameRecord(size=SIZE, komi=7.5, moves=game.moves, winner=game.winner,
                                result=game.result, player_black="b", player_white="w")
        (folder / f"game-{i:05d}.sgf").write_text(sgf.write(record))


def plan(folder: Path, dataset: Path) -> list[ShardSpec]:
    """The ingest flow's own plan task (content keys, ~16 shards for a small dataset)."""
    return plan_shards.fn([str(folder)], str(folder.parent), str(dataset), OPTIONS)


def ingest(folder: Path, dataset: Path, pool: multiprocessing.pool.Pool | None) -> tuple[list[dict], dict, float]:
    """The ingest flow's work without Prefect: plan, encode every shard (here or on the pool),
    finalize (dedupe, quarantine, manifest) and the polars summary. Returns (shard stats, summary,
    seconds spent encoding: SGF text -> Parquet rows and stats on disk)."""
    shards = plan(folder, dataset)
    encoding, stats = timed(lambda: encode_all(shards, dataset, pool))
    finalize_dataset.fn(str(dataset), shards, OPTIONS, [str(folder)])
    return stats, datasets.summary(dataset), encoding


def encode_one(shard: ShardSpec, out: str) -> dict:
    """The encode task's own function, without Prefect around it (picklable for the pool)."""
    return encode_shard.fn(shard, out, OPTIONS)


def warm_worker(shard: ShardSpec, out: str) -> None:
    """Pool initializer: imports and the numba cache are loaded before any timing starts."""
    encode_one(shard, out)


def encode_all(shards: list[ShardSpec], out: Path, pool: multiprocessing.pool.Pool | None) -> list[dict]:
    args = [(shard, str(out)) for shard in shards]
    if pool is None:
        return [encode_one(*a) for a in args]
    return list(pool.imap_unordered(encode_star, args, chunksize=1))  # one shard at a time, as the flow


def encode_star(args: tuple[ShardSpec, str]) -> dict:
    return encode_one(*args)


def baseline_encode(files: list[Path], out: Path) -> int:
    """The straightforward path, one position and one symmetry at a time; returns rows."""
    columns: dict[str, list] = {name: [] for name in schemas.ROW_SCHEMA.names}
    for path in files:
        game = sgfmill_sgf.Sgf_game.from_bytes(path.read_bytes())
        winner = {"b": 1, "w": -1}.get(game.get_winner(), 0)
        board, history = boards.Board(SIZE), []
        for number, node in enumerate(game.get_main_sequence()[1:]):
            colour, point = node.get_move()
            stones = np.zeros((SIZE, SIZE), np.int8)
            for c, (row, col) in board.list_occupied_points():
                stones[SIZE - 1 - row, col] = 1 if c == "b" else -1
            history.insert(0, stones)
            mover = 1 if colour == "b" else -1
            planes = []
            for lag in range(8):
                past = history[lag] if lag < len(history) else np.zeros((SIZE, SIZE), np.int8)
                planes += [past == mover, past == -mover]
            planes.append(np.full((SIZE, SIZE), mover == 1))
            planes = np.array(planes, np.uint8)
            move = SIZE * SIZE if point is None else (SIZE - 1 - point[0]) * SIZE + point[1]
            for k in range(8):
                sym = np.rot90(planes, k % 4, axes=(1, 2))
                sym = np.flip(sym, axis=2) if k >= 4 else sym
                one_hot = np.zeros(SIZE * SIZE, np.uint8)
                if move < SIZE * SIZE:
                    one_hot[move] = 1
                    grid = np.rot90(one_hot.reshape(SIZE, SIZE), k % 4)
                    grid = np.fliplr(grid) if k >= 4 else grid
                    sym_move = int(np.flatnonzero(grid.ravel())[0])
                else:
                    sym_move = move
                columns["planes"].append(np.packbits(sym))
                columns["move"].append(sym_move)
                columns["symmetry"].append(k)
                columns["value"].append(winner * mover)
                columns["move_number"].append(number)
                columns["game_id"].append(path.stem)
                columns["source"].append(path.name)
            if point is not None:
                board.play(point[0], point[1], colour)
    rows = len(columns["move"])
    table = schemas.rows_table({
        **{k: np.array(v) for k, v in columns.items() if k not in ("planes", "encoder", "size", "komi")},
        "planes": np.array(columns["planes"]), "encoder": np.full(rows, "agz17", object),
        "size": np.full(rows, SIZE, np.int8), "komi": np.full(rows, 7.5, np.float32),
        "game_id": np.array(columns["game_id"], object), "source": np.array(columns["source"], object)})
    datasets.write_parquet(out / "baseline.parquet", table)
    return rows


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_times(fn, runs: int, label: str) -> tuple[float, float, object]:
    """Medians of `runs` calls of fn(run index) -> (..., encode seconds): (whole, encoding,
    first result). Each run starts with everything written so far on disk, so none pays for
    another's writeback. All times are printed: on a shared machine they vary run to run."""
    times, encodings, first = [], [], None
    for run in range(runs):
        os.sync()
        elapsed, result = timed(lambda run=run: fn(run))
        times.append(elapsed)
        encodings.append(result[-1])
        first = result if run == 0 else first
    print(f"{label} runs (s): {' '.join(f'{t:.3f}' for t in times)}; encoding: "
          f"{' '.join(f'{t:.3f}' for t in encodings)}")
    return statistics.median(times), statistics.median(encodings), first


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="gozero-bench-") as tmp:
        root = Path(tmp)
        games_dir = root / "raw" / "games"
        write_games(games_dir, args.games, seed=1)
        files = sorted(games_dir.iterdir())
        warm = plan(games_dir, root / "warm")[:1]
        encode_all(warm, root / "warm", None)  # numba cache, imports
        finalize_dataset.fn(str(root / "warm"), warm, OPTIONS, [])
        datasets.summary(root / "warm")  # polars is imported before any timing, as in the flow

        t_one, e_one, (stats, facts, _) = median_times(
            lambda run: ingest(games_dir, root / f"one-{run}", None), args.runs, "1 worker ")
        rows, size, games = facts.rows, facts.bytes, facts.games
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(2, initializer=warm_worker, initargs=(warm[0], str(root / "warm2"))) as pool:
            pool.starmap(time.sleep, [(0.5,), (0.5,)])  # both workers are up and warm
            t_two, e_two, _ = median_times(
                lambda run: ingest(games_dir, root / f"two-{run}", pool), args.runs, "2 workers")
        (root / "base").mkdir()
        t_base, base_rows = timed(lambda: baseline_encode(files[: args.baseline_games], root / "base"))

    ours, whole, base = games / e_one, games / t_one, args.baseline_games / t_base
    print(f"games: {games} random 9x9 games, {rows:,} rows (agz17, all8), {len(stats)} shards; medians of "
          f"{args.runs} runs")
    print(f"gozero encode, 1 worker     {ours:>10,.0f} games/s  {rows / e_one:>12,.0f} rows/s  "
          "(SGF text -> Parquet rows on disk)")
    print(f"  with plan + finalize      {whole:>10,.0f} games/s  (+ content keys, dedupe, manifest, summary: "
          "the flow without Prefect)")
    print(f"baseline (sgfmill + numpy)  {base:>10,.0f} games/s  {base_rows / t_base:>12,.0f} rows/s "
          f"({args.baseline_games} games)")
    print(f"gozero encode, 2 workers    {games / e_two:>10,.0f} games/s  (x{e_one / e_two:.2f} vs 1 worker; "
          f"x{t_one / t_two:.2f} with plan + finalize)")
    print(f"bytes per row on disk       {size / rows:>10.1f}  (packed planes: {(17 * 81 + 7) // 8} bytes raw)")
    print(f"ingest: games_per_s={ours:.0f} x_baseline={ours / base:.1f} bytes_per_row={size / rows:.1f} "
          f"scaling_2w={e_one / e_two:.2f}")


if __name__ == "__main__":
    main()
