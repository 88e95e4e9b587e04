"""From game records to training rows: filters, replay, feature planes, symmetries, shuffle.

`ShardEncoder` is the ingest hot path for one shard: `add_game` checks a record against the
filters and the rules (one numba replay per game) and buffers it; `finish` encodes every buffered
game in one batched call (planes packed as on disk, `storage.schemas.ROW_SCHEMA`), applies the
augmentation and shuffles the rows so that copies of one position, and neighbouring positions
of one game, are not adjacent. It returns numpy columns (`EncodedRows`); storage turns them into
Arrow and Parquet. Nothing here touches files.

Auxiliary targets (KataGo's ownership and score, as self-play rows carry them): a game played out
to two passes whose RE states the Tromp-Taylor count of its final board (GNU Go's games here: RE is
our count) gives every row the final owner of each point and the final lead, from the side to
move's view; any other game (resigned, counted with dead stones removed, no count) leaves them
unknown, masked out in training.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numba import njit

from gocore.nn import features, packed
from gocore.rules import symmetry
from gocore.rules.board import IllegalMove, Position, replay_moves
from gocore.rules.sgf import GameRecord, result_margin

AUGMENTATIONS = ("all8", "random1", "none")


@dataclass(frozen=True)
class EncodeOptions:
    """How SGF games become rows; part of the dataset's identity (and of every cache key)."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    encoder: str = "agz17"
    """Feature encoder (gocore.nn.features.ENCODERS): agz17 (AlphaGo Zero's stones), tactical (agz17 +
    liberties, captures, ladders), alphago48 / alphago49 (AlphaGo 2016's policy / value input) or oneplane."""
    augment: str = "all8"
    """all8: every position x 8 symmetries; random1: one random symmetry; none."""
    size: int = 9
    """Board size N: only games on this board size are kept."""
    allow_handicap: bool = True
    """Keep handicap games (HA >= 2 or setup stones)."""
    min_moves: int = 1
    """Games with fewer moves are refused."""
    require_result: bool = True
    """Refuse games whose winner is unknown (RE missing, ?, Void)."""

    def __post_init__(self) -> None:
        features.get_encoder(self.encoder)
        if self.augment not in AUGMENTATIONS:
            raise ValueError(f"augment must be one of {', '.join(AUGMENTATIONS)}, not {self.augment!r}")


def game_id(record: GameRecord, played: np.ndarray | None = None) -> str:
    """Stable 16-hex-digit id of a game: size, setup stones and moves (not names or komi).

    `played` is `moves_array(record)` when the caller already has it.
    """
    digest = hashlib.blake2b(digest_size=8)
    digest.update(np.array([record.size], np.int64).tobytes())
    for stones in (sorted(record.setup_black), sorted(record.setup_white)):
        digest.update(np.array([-1] + stones, np.int64).tobytes())
    digest.update((moves_array(record) if played is None else played).tobytes())
    return digest.hexdigest()


def moves_array(record: GameRecord) -> np.ndarray:
    """(T, 2) int64 C-ordered: colour, move of each move (twice as fast as numpy.array on tuples)."""
    flat = np.fromiter(itertools.chain.from_iterable(record.moves), np.int64, 2 * len(record.moves))
    return flat.reshape(-1, 2)


@lru_cache(maxsize=None)
def _empty_board(size: int, to_play: int) -> Position:
    """The start of most games, made once: replay_moves only reads it."""
    return Position.from_setup(size, [], [], to_play)


def filter_reason(record: GameRecord, options: EncodeOptions) -> str | None:
    """Why the filters refuse this game (``filter:<name>``), or None to keep it."""
    if record.size != options.size:
        return "filter:size"
    if not options.allow_handicap and (record.handicap >= 2 or record.setup_black or record.setup_white):
        return "filter:handicap"
    if len(record.moves) < options.min_moves:
        return "filter:min-moves"
    if options.require_result and record.winner is None:
        return "filter:no-result"
    return None


@dataclass(frozen=True)
class EncodedRows:
    """One shard's rows as numpy columns, in row order (storage.schemas.ROW_SCHEMA's columns).

    The string columns are stored once per game (or once): a row's game is an index into
    `game_ids` and `sources`, so no string is copied per row.
    """

    encoder: str  # feature encoder name of every row
    size: int  # board size N of every row
    planes: np.ndarray  # (R, nbytes) uint8: packed planes (C, N, N)
    move: np.ndarray  # (R,) int16: the move played, in the row's symmetry frame; pass = N*N
    value: np.ndarray  # (R,) int8: +1 the side to move won, -1 lost, 0 jigo or unknown
    move_number: np.ndarray  # (R,) int16: 0-based index of the move in its game
    symmetry: np.ndarray  # (R,) int8: dihedral symmetry 0..7 applied to planes and move
    komi: np.ndarray  # (R,) float32: komi of the row's game
    game: np.ndarray  # (R,) int32: the row's game, an index into game_ids and sources
    game_ids: tuple[str, ...]  # one stable id per game (`game_id`)
    sources: tuple[str, ...]  # one ``<file>#<index>`` label per game
    ownership: np.ndarray | None = None  # (R, N*N) int8 final owner, side to move's view, row's frame
    score: np.ndarray | None = None  # (R,) float32 final lead of the side to move; NaN where unknown

    def __len__(self) -> int:
        return len(self.move)


@dataclass
class _Pending:
    """Replayed games waiting for `finish`."""

    stones: list[np.ndarray] = field(default_factory=list)  # (T+1, N, N) int8 per game
    movers: list[np.ndarray] = field(default_factory=list)  # (T,) int8 per game
    moves: list[np.ndarray] = field(default_factory=list)  # (T,) int16 per game
    values: list[np.ndarray] = field(default_factory=list)  # (T,) int8: +1 mover won
    game_ids: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    komis: list[float] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)  # +1 black, -1 white, 0 jigo or unknown
    owners: list[np.ndarray] = field(default_factory=list)  # (N*N,) int8 final owner, black's view (0s if unknown)
    margins: list[float] = field(default_factory=list)  # black's final lead, NaN if unknown


class ShardEncoder:
    """Collects the games of one shard and turns them into shuffled rows."""

    def __init__(self, options: EncodeOptions, seed: int):
        self.options = options
        self._rng = np.random.default_rng(seed)
        self._pending = _Pending()
        self._seen: set[str] = set()

    def add_game(self, record: GameRecord, source: str) -> tuple[str, str] | None:
        """Buffer a game; returns (reason, detail) if it is refused, else None."""
        reason = filter_reason(record, self.options)
        if reason is not None:
            return reason, ""
        played = moves_array(record)  # (T, 2): colour, move; T may be 0
        gid = game_id(record, played)
        if gid in self._seen:
            return "duplicate", f"game_id {gid}"
        if record.setup_black or record.setup_white:
            try:
                start = Position.from_setup(record.size, record.setup_black, record.setup_white,
                                            record.first_to_play, record.komi)
            except ValueError as error:
                return "setup-conflict", str(error)
        else:
            start = _empty_board(record.size, record.first_to_play)
        colors, moves = played[:, 0], played[:, 1]
        try:
            stones, movers = replay_moves(start, moves, colors)
        except IllegalMove as error:
            return f"illegal-move@{error.index + 1}", str(error)
        self._seen.add(gid)
        self._buffer(record, gid, source, stones, movers, moves)
        return None

    def _buffer(self, record: GameRecord, gid: str, source: str, stones: np.ndarray,
                movers: np.ndarray, moves: np.ndarray) -> None:
        pending = self._pending
        pending.stones.append(stones)
        pending.movers.append(movers)
        pending.moves.append(moves.astype(np.int16))
        pending.values.append((movers * (record.winner or 0)).astype(np.int8))
        pending.game_ids.append(gid)
        pending.sources.append(source)
        pending.komis.append(record.komi)
        pending.winners.append(record.winner or 0)
        owner, margin = final_count(record, stones[-1], moves)
        pending.owners.append(owner)
        pending.margins.append(margin)

    def game_list(self) -> list[list]:
        """[game_id, source, moves, winner] of every accepted game, in order added."""
        pending = self._pending
        return [[gid, source, len(moves), winner] for gid, source, moves, winner
                in zip(pending.game_ids, pending.sources, pending.moves, pending.winners)]

    def finish(self) -> EncodedRows:
        """All rows, shuffled, as numpy columns."""
        pending, size = self._pending, self.options.size
        lengths = np.array([len(m) for m in pending.movers], dtype=np.int64)
        if not len(lengths):
            return empty_rows(self.options)
        moves = np.concatenate(pending.moves)  # (R,) the un-augmented positions, game after game
        index, symmetries = self._rows(len(moves))  # (R',) each: shuffled rows
        planes = packed.encode_rows_packed(pending.stones, pending.movers, self.options.encoder,
                                             index, symmetries)  # written in shuffled order
        rows = len(index)
        move, value = np.empty(rows, np.int16), np.empty(rows, np.int8)
        number, komi, game = np.empty(rows, np.int16), np.empty(rows, np.float32), np.empty(rows, np.int32)
        _gather_rows(index, symmetries, symmetry.move_table(size), moves, np.concatenate(pending.values), lengths,
                     np.array(pending.komis, np.float32), move, value, number, komi, game)
        movers = np.concatenate(pending.movers)[index]  # (R',) +1 black to move
        owners = np.stack(pending.owners)[game]  # (R', N*N) black's view, identity frame
        ownership = np.empty_like(owners)
        np.put_along_axis(ownership, symmetry.move_table(size)[symmetries, :size * size], owners, axis=1)
        score = np.asarray(pending.margins, np.float32)[game] * movers  # (R',) NaN stays NaN
        return EncodedRows(encoder=self.options.encoder, size=size, planes=planes, move=move, value=value,
                           move_number=number, symmetry=symmetries.astype(np.int8), komi=komi, game=game,
                           game_ids=tuple(pending.game_ids), sources=tuple(pending.sources),
                           ownership=(ownership * movers[:, None]).astype(np.int8), score=score.astype(np.float32))

    def _rows(self, positions: int) -> tuple[np.ndarray, np.ndarray]:
        """(position index (R',), symmetry (R',)) of every row the augmentation asks for, shuffled:
        copies and neighbours of a position end up far apart."""
        if self.options.augment == "random1":
            symmetries = self._rng.integers(0, 8, positions)
            order = self._rng.permutation(positions)
            return order, symmetries[order]
        copies = 8 if self.options.augment == "all8" else 1
        order = self._rng.permutation(positions * copies)  # row r: position r // copies, symmetry r % copies
        return order // copies, order % copies


def final_count(record: GameRecord, final_stones: np.ndarray, moves: np.ndarray) -> tuple[np.ndarray, float]:
    """((N*N,) int8 Tromp-Taylor owner of the final board, black's view; black's lead) of a game
    played out to two passes whose RE is that count; zeros and NaN for any other game."""
    size = record.size
    unknown = np.zeros(size * size, np.int8), float("nan")
    margin = result_margin(record.result)
    if margin is None or len(moves) < 2 or not (moves[-1] == moves[-2] == size * size):
        return unknown
    final = Position.from_setup(size, list(np.flatnonzero(final_stones.reshape(-1) == 1)),
                                list(np.flatnonzero(final_stones.reshape(-1) == -1)), komi=record.komi)
    owner = final.ownership().reshape(-1).astype(np.int8)  # (N*N,)
    if abs(float(owner.sum()) - record.komi - margin) > 1e-6:  # counted otherwise: dead stones taken off
        return unknown
    return owner, margin


@njit(cache=True)
def _gather_rows(index, symmetries, move_table, moves, values, lengths, komis,
                 move_out, value_out, number_out, komi_out, game_out):
    """The per-row columns of shuffled rows, in one pass: each row reads its position's move
    (mapped by the row's symmetry), value, move number, and its game's index and komi."""
    game_of = np.empty(moves.shape[0], np.int32)
    number_of = np.empty(moves.shape[0], np.int16)
    first = 0
    for g in range(lengths.shape[0]):
        for t in range(lengths[g]):
            game_of[first + t], number_of[first + t] = g, t
        first += lengths[g]
    for i in range(index.shape[0]):
        p = index[i]
        move_out[i] = move_table[symmetries[i], moves[p]]
        value_out[i], number_out[i] = values[p], number_of[p]
        game_out[i] = game_of[p]
        komi_out[i] = komis[game_of[p]]


def empty_rows(options: EncodeOptions) -> EncodedRows:
    """Zero rows with the right dtypes (a shard whose games were all refused)."""
    nbytes = features.packed_nbytes(features.get_encoder(options.encoder).num_planes, options.size)
    return EncodedRows(encoder=options.encoder, size=options.size, planes=np.zeros((0, nbytes), np.uint8),
                       move=np.array([], np.int16), value=np.array([], np.int8),
                       move_number=np.array([], np.int16), symmetry=np.array([], np.int8),
                       komi=np.array([], np.float32), game=np.array([], np.int32), game_ids=(), sources=(),
                       ownership=np.zeros((0, options.size ** 2), np.int8), score=np.array([], np.float32))
