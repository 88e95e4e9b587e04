"""Every Parquet row schema gozero writes, documented in one place, and numpy columns → Arrow tables.

gocore returns numpy columns (`gocore.nn.encode.EncodedRows`, `gocore.search.selfplay`'s
columns); the builders here (`encoded_rows_table`, `rows_table`, `selfplay_table`,
`results_table`, `ratings_table`) turn them into tables of these schemas. Packed planes are
``numpy.packbits`` of the uint8 planes (C, N, N), C order, big-endian bits; they are stored as
binary values of one fixed width per dataset.

SGF datasets (`ROW_SCHEMA`, ``<data>/datasets/<name>/shard-*.parquet``), one row per position
per symmetry:

============  ========  ===============================================================
column        type      meaning
============  ========  ===============================================================
encoder       string    feature encoder name (``agz17``, ``oneplane``)
size          int8      board size N
planes        binary    packed planes (C, N, N)
move          int16     move played, in this row's symmetry frame (pass = N*N)
value         int8      +1 the side to move won, -1 lost, 0 jigo or unknown
game_id       string    stable hash of size + komi-free setup + moves (16 hex digits)
move_number   int16     0-based index of the move in the game
symmetry      int8      dihedral symmetry 0..7 applied (0 = identity)
komi          float32   komi of the game
source        string    ``<file relative to the raw dir>#<game index in the file>``
ownership     binary    final Tromp-Taylor owner of each point, side to move's view, in this row's
                        symmetry frame (N*N int8, as in SELFPLAY_SCHEMA); null unless the game was
                        played out to two passes and its RE is that count (GNU Go's games are)
score         float32   final lead of the side to move in points; null exactly when ownership is
============  ========  ===============================================================

Refused games (`QUARANTINE_SCHEMA`, ``quarantine.parquet`` of a dataset): file, game_index
(-1 = the whole file), reason (``filter:size``, ``illegal-move@12``, ``duplicate``, ...), detail.

Self-play rows (`SELFPLAY_SCHEMA`, ``<data>/selfplay/gen=<k>/shard-s<seed>.parquet``), one row
per position and stored symmetry:

=============  =======  ==============================================================
column         type     meaning
=============  =======  ==============================================================
encoder        string   feature encoder name (``agz17``, ``oneplane``)
size           int8     board size N
planes         binary   packed planes (C, N, N), as in ROW_SCHEMA
pi             binary   search visit distribution over the N*N+1 moves (pass last), in the
                        same symmetry frame as planes: N*N+1 little-endian float16 values
                        (2 bytes each; `encode_pi` / `storage.stream_columns.decode_pi`; rows sum
                        to 1 up to float16 rounding, and decode renormalises them)
z              int8     +1 the side to move won the game, -1 lost, 0 jigo
game_id        string   id of the self-play game (unique across generations)
move_number    int16    0-based index of the move in the game
generation     int32    self-play generation (the loop iteration that made the game)
model_version  string   version of the model that played (e.g. a registry version)
symmetry       int8     dihedral symmetry 0..7 applied to planes, pi and ownership (0 = identity)
komi           float32  komi of the game
ownership      binary   final Tromp-Taylor owner of each of the N*N points (row-major, same
                        symmetry frame as planes), from the side to move's view: N*N int8
                        values, +1 side to move, -1 opponent, 0 neither; null when the game
                        was not played out (resigned) or was written before this column
score          float32  final score lead of the side to move in points (area difference,
                        komi counted); null exactly when ownership is
q              float32  the root's searched value of the move's search, from the side to
                        move's view (-1..1); older shards lack the column (a value target
                        that mixes it in, `value_mix`, uses z alone for their rows)
=============  =======  ==============================================================

Match results (`RESULTS_SCHEMA`, ``<data>/matches/<id>/results.parquet``), one row per game,
sorted by game:

==============  ========  =============================================================
column          type      meaning
==============  ========  =============================================================
game            int32     0-based index; player A is black in even games
black           string    label of the player with black
white           string    label of the player with white
a_color         int8      +1 if player A had black, -1 if white
winner          int8      +1 black, -1 white, 0 jigo
a_score         float32   player A's points: 1 win, 0.5 jigo, 0 loss
result          string    SGF result: ``B+3.5``, ``0``, ``W+R`` (resign), ``B+F`` (forfeit), ``W+T`` (time)
moves           int16     moves played (passes count)
reason          string    two-passes, move-cap, resign, illegal-move, timeout, crash, error
detail          string    what went wrong in a forfeit ("" otherwise)
score           float32   Tromp-Taylor score of the final board, black - white - komi
seconds         float32   wall-clock time of the game
external_score  string    an external engine's ``final_score`` of a two-pass game, else null
disagreement    bool      true if that score differs from ours; null if not asked
opening         string    the match's random opening moves (ints, space-separated; "" none; null before they existed)
digest          string    fingerprint of the game's moves: equal digests are the same game played again
==============  ========  =============================================================

The ratings table (`RATINGS_SCHEMA`, ``<data>/ratings/match-<id>.parquet``, storage.ratings),
one row per game of every finished match, players by their ladder names:

==============  ========  =============================================================
column          type      meaning
==============  ========  =============================================================
match_id        string    the match (``<data>/matches/<match_id>/``)
game            int32     0-based index in the match; player A is black in even games
player_a        string    ladder name of player A (``gozero-9x9/3``, ``random``, ``uct-100``,
                          ``gnugo-1``, ``dir:<name>``, ``gtp:...``), resolved when the match began
player_b        string    ladder name of player B
a_color         int8      +1 if player A had black, -1 if white
a_score         float32   player A's points: 1 win, 0.5 jigo, 0 loss
result          string    SGF result: ``B+3.5``, ``0``, ``W+R``, ``B+F``, ``W+T``
reason          string    how the game ended (as in RESULTS_SCHEMA)
size            int8      board size N
komi            float32   komi
sims            int32     simulations per move of network players and a bare ``uct``
sgf             string    the game's SGF, relative to the data dir
==============  ========  =============================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

ROW_SCHEMA = pa.schema([
    ("encoder", pa.string()),
    ("size", pa.int8()),
    ("planes", pa.binary()),
    ("move", pa.int16()),
    ("value", pa.int8()),
    ("game_id", pa.string()),
    ("move_number", pa.int16()),
    ("symmetry", pa.int8()),
    ("komi", pa.float32()),
    ("source", pa.string()),
    ("ownership", pa.binary()),
    ("score", pa.float32()),
])

QUARANTINE_SCHEMA = pa.schema([
    ("file", pa.string()),
    ("game_index", pa.int32()),
    ("reason", pa.string()),
    ("detail", pa.string()),
])

SELFPLAY_SCHEMA = pa.schema([
    ("encoder", pa.string()),
    ("size", pa.int8()),
    ("planes", pa.binary()),
    ("pi", pa.binary()),
    ("z", pa.int8()),
    ("game_id", pa.string()),
    ("move_number", pa.int16()),
    ("generation", pa.int32()),
    ("model_version", pa.string()),
    ("symmetry", pa.int8()),
    ("komi", pa.float32()),
    ("ownership", pa.binary()),
    ("score", pa.float32()),
    ("q", pa.float32()),
])
AUX_COLUMNS = ("ownership", "score")  # auxiliary targets, which older shards lack (all null then)

RESULTS_SCHEMA = pa.schema([
    ("game", pa.int32()),
    ("black", pa.string()),
    ("white", pa.string()),
    ("a_color", pa.int8()),
    ("winner", pa.int8()),
    ("a_score", pa.float32()),
    ("result", pa.string()),
    ("moves", pa.int16()),
    ("reason", pa.string()),
    ("detail", pa.string()),
    ("score", pa.float32()),
    ("seconds", pa.float32()),
    ("external_score", pa.string()),
    ("disagreement", pa.bool_()),
    ("opening", pa.string()),
    ("digest", pa.string()),
])

RATINGS_SCHEMA = pa.schema([
    ("match_id", pa.string()),
    ("game", pa.int32()),
    ("player_a", pa.string()),
    ("player_b", pa.string()),
    ("a_color", pa.int8()),
    ("a_score", pa.float32()),
    ("result", pa.string()),
    ("reason", pa.string()),
    ("size", pa.int8()),
    ("komi", pa.float32()),
    ("sims", pa.int32()),
    ("sgf", pa.string()),
])

PI_DTYPE = np.dtype("<f2")  # float16 little-endian: 164 bytes per 9x9 row, 724 per 19x19 row


class GameRows(Protocol):
    """ROW_SCHEMA rows as numpy columns with their strings once per game (`EncodedRows` is one)."""

    @property
    def encoder(self) -> str: ...  # feature encoder name of every row
    @property
    def size(self) -> int: ...  # board size N of every row
    @property
    def planes(self) -> np.ndarray: ...  # (R, nbytes) uint8
    @property
    def move(self) -> np.ndarray: ...  # (R,) int16
    @property
    def value(self) -> np.ndarray: ...  # (R,) int8
    @property
    def move_number(self) -> np.ndarray: ...  # (R,) int16
    @property
    def symmetry(self) -> np.ndarray: ...  # (R,) int8
    @property
    def komi(self) -> np.ndarray: ...  # (R,) float32
    @property
    def game(self) -> np.ndarray: ...  # (R,) int32 index into game_ids and sources
    @property
    def game_ids(self) -> Sequence[str]: ...  # one per game
    @property
    def sources(self) -> Sequence[str]: ...  # one per game


def binary_column(packed: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """A Parquet binary column over fixed-width rows of packed bytes, without copying them; rows
    where `valid` (R,) bool is False are null."""
    rows, width = packed.shape  # (R, nbytes) uint8
    offsets = np.arange(0, (rows + 1) * width, width, dtype=np.int32)
    data = np.ascontiguousarray(packed).reshape(-1)
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    nulls = 0 if valid is None else int(len(valid) - np.count_nonzero(valid))
    return pa.Array.from_buffers(pa.binary(), rows, [validity, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls)


_NUMPY_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
                pa.float32(): np.float32, pa.float64(): np.float64}


def numeric_column(values: np.ndarray, type_: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """A column of `type_` (an int or float type) over a numpy array, nulls where `valid` (R,) bool
    is False. Built from buffers: `pa.array` on numpy imports pandas (~40 MB in every self-play worker)."""
    data = np.ascontiguousarray(values, dtype=_NUMPY_TYPES[type_])  # (R,)
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    nulls = 0 if valid is None else int(len(valid) - np.count_nonzero(valid))
    return pa.Array.from_buffers(type_, len(data), [validity, pa.py_buffer(data)], null_count=nulls)


def string_column(values: Iterable[str]) -> pa.Array:
    """A string column of `values` (no nulls), from buffers like `numeric_column`."""
    encoded = [str(value).encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, np.int32)  # (R+1,)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets),
                                                            pa.py_buffer(b"".join(encoded))])


def dictionary_column(codes: np.ndarray, values: Iterable[str]) -> pa.DictionaryArray:
    """A string column as row codes (R,) int32 into `values` (one string per game, say)."""
    return pa.DictionaryArray.from_arrays(np.asarray(codes, np.int32), pa.array(list(values), pa.string()))


def encoded_rows_table(rows: GameRows, dictionaries: bool = False) -> pa.Table:
    """A table in ROW_SCHEMA from per-game rows; string columns as dictionaries if `dictionaries`.

    The dictionaries (one value per game) spare a per-row string copy, and the Parquet writer
    stores them as its dictionary pages without hashing a row.
    """
    count = len(rows.move)
    columns = {
        "encoder": dictionary_column(np.zeros(count, np.int32), [rows.encoder]),
        "size": np.full(count, rows.size, np.int8), "planes": rows.planes, "move": rows.move,
        "value": rows.value, "game_id": dictionary_column(rows.game, rows.game_ids),
        "move_number": rows.move_number, "symmetry": rows.symmetry, "komi": rows.komi,
        "source": dictionary_column(rows.game, rows.sources),
    }
    score = getattr(rows, "score", None)
    if score is not None:
        known = ~np.isnan(score)  # (R,)
        columns["ownership"] = binary_column(np.asarray(rows.ownership, np.int8).view(np.uint8), valid=known)
        columns["score"] = numeric_column(score, pa.float32(), valid=known)
    return rows_table(columns, dictionaries)


def rows_table(columns: Mapping[str, Any], dictionaries: bool = False) -> pa.Table:
    """A table in ROW_SCHEMA from columns: numpy arrays (planes as (R, nbytes) uint8) or Arrow arrays.

    String columns given as Arrow dictionary arrays are decoded, unless `dictionaries`: then they
    stay dictionaries (for `storage.datasets.write_shard`, which stores them as such and reads
    back ROW_SCHEMA).
    """
    arrays = []
    count = len(columns["move"])
    for field in ROW_SCHEMA:
        value = columns.get(field.name)
        if value is None and field.name in AUX_COLUMNS:  # rows without auxiliary targets
            arrays.append(pa.nulls(count, field.type))
        elif isinstance(value, (pa.Array, pa.ChunkedArray)):
            keep = dictionaries and pa.types.is_dictionary(value.type)
            arrays.append(value if keep else value.cast(field.type))
        elif field.name == "planes":
            arrays.append(binary_column(value))
        else:
            arrays.append(pa.array(value, type=field.type))
    return pa.Table.from_arrays(arrays, names=ROW_SCHEMA.names)


def encode_pi(pi: np.ndarray) -> pa.Array:
    """(R, N*N+1) float32 visit distributions → a binary column of little-endian float16 rows."""
    pi = np.asarray(pi, dtype=np.float32)
    if pi.ndim != 2 or not np.isfinite(pi).all() or (pi < 0).any():
        raise ValueError(f"pi must be finite non-negative (R, N*N+1) values, got shape {pi.shape}")
    return binary_column(np.ascontiguousarray(pi.astype(PI_DTYPE)).view(np.uint8))  # (R, 2M)


def selfplay_table(columns: Mapping[str, Any]) -> pa.Table:
    """A table in SELFPLAY_SCHEMA from numpy columns (planes (R, nbytes) uint8, pi (R, N*N+1),
    ownership (R, N*N) int8, score (R,) float32 with NaN where unknown: both null there; without
    ownership and score, all null; without q (rows no search made), null)."""
    arrays = []
    known = None if "score" not in columns else ~np.isnan(np.asarray(columns["score"], np.float32))  # (R,)
    for field in SELFPLAY_SCHEMA:
        if (field.name in AUX_COLUMNS and known is None) or (field.name == "q" and "q" not in columns):
            arrays.append(pa.nulls(len(columns["z"]), field.type))
            continue
        value = columns[field.name]
        if field.name == "planes":
            arrays.append(binary_column(value))
        elif field.name == "pi":
            arrays.append(encode_pi(value))
        elif field.name == "ownership":
            arrays.append(binary_column(np.asarray(value, np.int8).view(np.uint8), valid=known))
        elif pa.types.is_string(field.type):
            arrays.append(string_column(value))
        else:
            arrays.append(numeric_column(value, field.type, valid=known if field.name == "score" else None))
    return pa.Table.from_arrays(arrays, schema=SELFPLAY_SCHEMA)


def quarantine_table(entries: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Refused games as a table in QUARANTINE_SCHEMA."""
    return pa.Table.from_pylist([dict(entry) for entry in entries], schema=QUARANTINE_SCHEMA)


def results_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Match game rows as a table in RESULTS_SCHEMA, sorted by game."""
    ordered = sorted(rows, key=lambda row: row["game"])
    return pa.Table.from_pylist([{name: row.get(name) for name in RESULTS_SCHEMA.names} for row in ordered],
                                schema=RESULTS_SCHEMA)


def ratings_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Ratings rows as a table in RATINGS_SCHEMA, sorted by match and game."""
    ordered = sorted(rows, key=lambda row: (row["match_id"], row["game"]))
    return pa.Table.from_pylist([{name: row[name] for name in RATINGS_SCHEMA.names} for row in ordered],
                                schema=RATINGS_SCHEMA)
