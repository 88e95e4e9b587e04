"""Baghchal's files: self-play rows, game records, matches, its ladder and pictures of positions.

    <data>/baghchal/selfplay/<loop>/gen=<k>/
        rows-s<seed>.parquet      the batch's rows, 8 symmetries each (ROWS_SCHEMA)
        games-s<seed>.txt         its games, one a line: "<game id>\\t<record in the library's notation>"
        batch-s<seed>.json        the sidecar: settings and counts, written last (marks it finished)
    <data>/baghchal/matches/<match id>/
        match.json                the match: players, settings, games planned (written first)
        games-<first>.parquet     a chunk of finished games (MATCH_SCHEMA), atomic: a rerun skips it
    <data>/baghchal/ladder.json   the last fit of every Baghchal player's Elo
    <data>/baghchal/pictures/     PNGs of positions (`plot_position`)

Baghchal has its own ladder: every match under matches/ is one of its games. Storage knows bytes,
not the game: boards arrive as (5, 5) arrays (+1 goat, -1 tiger), rows as numpy columns.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from storage.atomic import atomic_path, remove_stale_temps, write_bytes, write_json
from storage.datasets import write_parquet
from storage.schemas import PI_DTYPE, encode_pi, numeric_column, string_column

ROOT = "baghchal"
LADDER = "ladder.json"

ROWS_SCHEMA = pa.schema([
    ("goats", pa.int64()),  # bit p: a goat on point p (row-major from the top-left)
    ("tigers", pa.int64()),
    ("placed", pa.int8()),  # goats placed so far
    ("captured", pa.int8()),
    ("to_play", pa.int8()),  # +1 Goat, -1 Tiger
    ("ply", pa.int16()),
    ("pi", pa.binary()),  # float16 little-endian (217,): the search's policy target
    ("z", pa.int8()),  # +1 the side to move won, 0 a draw, -1 lost
    ("game_id", pa.string()),
    ("symmetry", pa.int8()),  # 0..7: which of the 8 stored copies of the position
    ("generation", pa.int32()),
    ("model_version", pa.string()),
])

MATCH_SCHEMA = pa.schema([
    ("game", pa.int32()),
    ("goat", pa.string()),
    ("tiger", pa.string()),
    ("a_side", pa.int8()),  # +1 player A played Goat
    ("winner", pa.int8()),  # +1 Goat, -1 Tiger, 0 a draw
    ("a_score", pa.float32()),  # 1, 0.5, 0
    ("reason", pa.string()),
    ("detail", pa.string()),
    ("plies", pa.int16()),
    ("seconds", pa.float32()),
    ("opening", pa.int8()),  # random plies the game began with
    ("record", pa.string()),  # the game in the library's notation
])


def root(data: Path) -> Path:
    """Where Baghchal's files live."""
    return data / ROOT


# -------------------------------------------------------------- self-play
def generation_dir(data: Path, loop: str, generation: int) -> Path:
    """The self-play of one generation of loop `loop`."""
    return root(data) / "selfplay" / loop / f"gen={generation}"


def rows_path(data: Path, loop: str, generation: int, seed: int) -> Path:
    return generation_dir(data, loop, generation) / f"rows-s{seed}.parquet"


def games_path(data: Path, loop: str, generation: int, seed: int) -> Path:
    return generation_dir(data, loop, generation) / f"games-s{seed}.txt"


def sidecar_path(data: Path, loop: str, generation: int, seed: int) -> Path:
    return generation_dir(data, loop, generation) / f"batch-s{seed}.json"


def rows_table(columns: Mapping[str, Any]) -> pa.Table:
    """A table in ROWS_SCHEMA from numpy columns (pi (R, 217) float32)."""
    arrays = []
    for field in ROWS_SCHEMA:
        value = columns[field.name]
        if field.name == "pi":
            arrays.append(encode_pi(value))
        elif pa.types.is_string(field.type):
            arrays.append(string_column(value))
        else:
            arrays.append(numeric_column(np.asarray(value), field.type))
    return pa.Table.from_arrays(arrays, schema=ROWS_SCHEMA)


def write_batch(data: Path, loop: str, generation: int, seed: int, columns: Mapping[str, Any],
                records: Mapping[str, str], sidecar: Mapping[str, Any]) -> dict[str, Any]:
    """The games, then the rows, then the sidecar (last: it marks the batch finished); the sidecar."""
    lines = "".join(f"{game_id}\t{record}\n" for game_id, record in records.items())
    write_bytes(games_path(data, loop, generation, seed), lines.encode())
    size = write_parquet(rows_path(data, loop, generation, seed), rows_table(columns))
    recorded = {**sidecar, "rows_file": str(rows_path(data, loop, generation, seed)), "bytes": size}
    write_json(sidecar_path(data, loop, generation, seed), recorded)
    return recorded


def clean_partial(data: Path, loop: str, generation: int) -> int:
    """Remove the temp files killed writers left in a generation; call before its batches start
    (a batch's writer running beside it would lose its own)."""
    directory = generation_dir(data, loop, generation)
    return remove_stale_temps(directory) if directory.exists() else 0


def read_finished(data: Path, loop: str, generation: int, seed: int) -> dict[str, Any] | None:
    """The sidecar of a finished batch; None if missing, unreadable, or its rows were lost since."""
    try:
        sidecar = json.loads(sidecar_path(data, loop, generation, seed).read_bytes())
    except (OSError, ValueError):
        return None
    rows = rows_path(data, loop, generation, seed)
    return sidecar if rows.exists() and rows.stat().st_size == sidecar.get("bytes") else None


def finished_batches(data: Path, loop: str, generation: int) -> dict[int, dict[str, Any]]:
    """{seed: sidecar} of the generation's finished batches."""
    found = {}
    for path in sorted(generation_dir(data, loop, generation).glob("batch-s*.json")):
        seed = path.stem.removeprefix("batch-s")
        if seed.isdigit() and (sidecar := read_finished(data, loop, generation, int(seed))) is not None:
            found[int(seed)] = sidecar
    return found


def read_rows(data: Path, loop: str, generations: Iterable[int]) -> dict[str, np.ndarray]:
    """The rows of every finished batch of these generations, as numpy columns (pi (R, 217) float32)."""
    paths = [Path(sidecar["rows_file"]) for generation in generations
             for sidecar in finished_batches(data, loop, generation).values()]
    if not paths:
        return {field.name: np.zeros(0) for field in ROWS_SCHEMA}
    table = pa.concat_tables(pq.read_table(path, schema=ROWS_SCHEMA) for path in paths)
    columns = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names if name != "pi"}
    pi_bytes = b"".join(table.column("pi").to_pylist())
    columns["pi"] = np.frombuffer(pi_bytes, PI_DTYPE).reshape(table.num_rows, -1).astype(np.float32)
    return columns


def read_records(data: Path, loop: str, generation: int) -> dict[str, str]:
    """{game id: record} of the generation's finished batches."""
    records = {}
    for seed in finished_batches(data, loop, generation):
        for line in games_path(data, loop, generation, seed).read_text().splitlines():
            game_id, _, record = line.partition("\t")
            records[game_id] = record
    return records


# -------------------------------------------------------------- matches and the ladder
def match_dir(data: Path, match_id: str) -> Path:
    return root(data) / "matches" / match_id


def write_match_info(data: Path, match_id: str, info: Mapping[str, Any]) -> None:
    """match.json: who plays and how (written before any game)."""
    write_json(match_dir(data, match_id) / "match.json", dict(info))


def read_match_info(data: Path, match_id: str) -> dict[str, Any] | None:
    try:
        return json.loads((match_dir(data, match_id) / "match.json").read_bytes())
    except (OSError, ValueError):
        return None


def chunk_path(data: Path, match_id: str, first: int) -> Path:
    return match_dir(data, match_id) / f"games-{first:05d}.parquet"


def write_games(data: Path, match_id: str, first: int, rows: Sequence[Mapping[str, Any]]) -> Path:
    """A chunk of finished games (MATCH_SCHEMA rows), atomically."""
    path = chunk_path(data, match_id, first)
    write_parquet(path, pa.Table.from_pylist([dict(row) for row in rows], schema=MATCH_SCHEMA))
    return path


def read_games(data: Path, match_id: str) -> list[dict[str, Any]]:
    """Every finished game of a match, by game index."""
    paths = sorted(match_dir(data, match_id).glob("games-*.parquet"))
    rows = [row for path in paths for row in pq.read_table(path, schema=MATCH_SCHEMA).to_pylist()]
    return sorted(rows, key=lambda row: row["game"])


def match_ids(data: Path) -> list[str]:
    """Every Baghchal match with a match.json."""
    base = root(data) / "matches"
    return sorted(path.parent.name for path in base.glob("*/match.json")) if base.exists() else []


def write_ladder(data: Path, players: Sequence[Mapping[str, Any]]) -> Path:
    path = root(data) / LADDER
    write_json(path, {"players": [dict(p) for p in players]})
    return path


def read_ladder(data: Path) -> list[dict[str, Any]] | None:
    try:
        return json.loads((root(data) / LADDER).read_bytes())["players"]
    except (OSError, ValueError, KeyError):
        return None


# -------------------------------------------------------------- pictures
def picture_path(data: Path, name: str) -> Path:
    return root(data) / "pictures" / f"{name}.png"


def plot_position(board: np.ndarray, path: Path, title: str = "") -> Path:
    """A PNG of a Baghchal position: the lines, tigers (orange, T) and goats (white, G) on
    (5, 5) `board` (+1 goat, -1 tiger); `title` above it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(4.2, 4.6))
    for i in range(5):
        axes.plot([0, 4], [i, i], color="#5b4636", linewidth=1.5, zorder=1)
        axes.plot([i, i], [0, 4], color="#5b4636", linewidth=1.5, zorder=1)
    for start, end in (((0, 0), (4, 4)), ((0, 4), (4, 0)), ((0, 2), (2, 0)), ((0, 2), (2, 4)),
                       ((2, 0), (4, 2)), ((2, 4), (4, 2))):
        axes.plot([start[1], end[1]], [4 - start[0], 4 - end[0]], color="#5b4636", linewidth=1.5, zorder=1)
    for row in range(5):
        for col in range(5):
            piece = int(board[row, col])
            if piece:
                face, letter = ("white", "G") if piece > 0 else ("#e8862a", "T")
                axes.add_patch(plt.Circle((col, 4 - row), 0.32, facecolor=face, edgecolor="black", zorder=2))
                axes.text(col, 4 - row, letter, ha="center", va="center", fontsize=13, fontweight="bold", zorder=3)
    axes.set_xticks(range(5), [str(c) for c in range(1, 6)])
    axes.set_yticks(range(5), [str(r) for r in range(5, 0, -1)])
    axes.set_xlim(-0.6, 4.6)
    axes.set_ylim(-0.6, 4.6)
    axes.set_aspect("equal")
    axes.set_facecolor("#f3e2b3")
    axes.set_title(textwrap.fill(title, 56), fontsize=8)
    figure.tight_layout()
    with atomic_path(path, durable=False) as temp:
        figure.savefig(temp, dpi=100, format="png")
    plt.close(figure)
    return path
