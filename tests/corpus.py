"""A corpus builder for the ingest tests: real-looking games, broken SGF, and what to expect of them.

Games come from GNU Go self-play over GTP (`gnugo_records`, a few, cached for the test session
because each costs about a second) and from our own agents through `gocore.play.match.play_game`
(`agent_records`, many, fast). `CorpusBuilder` writes them as files next to broken ones and
records, for every game slot, the refusal reason a correct ingest must give (None = accepted):
the expectations are derived from how each file was built, never from the code under test.
`mixed_corpus` is the standard mix shared by the encode-task and flow tests.

`assert_rows_match_games` checks dataset rows against the games they came from: each row, its
symmetry undone, must be the replayed position (`Position.play` + `encode_position`, the slow
reference path), the game's move and its result.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from gocore.nn import features
from gocore.play.gtp_client import GtpClient, gnugo_command
from gocore.play.match import play_game
from gocore.rules import symmetry
from gocore.rules.board import Position
from gocore.rules.coords import from_rowcol, pass_move
from gocore.rules.sgf import GameRecord, replay, winner_from_result, write
from gocore.search.agents import RandomAgent, UCTAgent

# --- games ---------------------------------------------------------------------------------------

def gnugo_game(gnugo_path: str, opening: int, level: int, size: int = 9, komi: float = 7.5,
               max_moves: int = 300) -> GameRecord:
    """GNU Go against itself after black's first move `opening` (distinct openings → distinct games)."""
    moves: list[tuple[int, int]] = [(1, opening)]
    result = None
    command = gnugo_command(level, size, komi, path=gnugo_path) + ["--seed", str(opening + 1)]
    with GtpClient(command) as engine:
        engine.komi(komi)  # GTP's default komi is 0 whatever the command line says
        engine.play(1, opening, size)
        color, passes = -1, 0
        while passes < 2 and len(moves) < max_moves:
            move = engine.genmove(color, size)
            if move is None:
                result = f"{'W' if color == 1 else 'B'}+R"
                break
            moves.append((color, move))
            passes = passes + 1 if move == pass_move(size) else 0
            color = -color
        if result is None:
            result = engine.final_score()
    return GameRecord(size=size, komi=komi, rules="Chinese", moves=moves, result=result,
                      winner=winner_from_result(result), player_black=f"GNU Go {level}",
                      player_white=f"GNU Go {level}")


@functools.cache
def gnugo_records(gnugo_path: str, count: int = 3) -> tuple[GameRecord, ...]:
    """`count` GNU Go self-play games on 9x9 (levels 0 and 1), once per test process."""
    openings = [from_rowcol(r, c, 9) for r, c in ((4, 4), (2, 6), (6, 2), (2, 2), (6, 6))]
    return tuple(gnugo_game(gnugo_path, openings[i], level=i % 2) for i in range(count))


@functools.cache
def agent_game(seed: int, size: int = 9, komi: float = 7.5, uct: bool = False,
               max_moves: int | None = None) -> GameRecord:
    """A game between two random agents (or two small UCT agents) via `play_game`."""
    if uct:
        black, white = UCTAgent(sims=6, seed=seed), UCTAgent(sims=6, seed=seed + 1)
    else:
        black, white = RandomAgent(seed), RandomAgent(seed + 1)
    game = play_game(black, white, size=size, komi=komi, max_moves=max_moves)
    return GameRecord(size=size, komi=komi, rules="Tromp-Taylor", moves=list(game.moves),
                      result=game.result, winner=game.winner, player_black=f"{black.name}-{seed}",
                      player_white=f"{white.name}-{seed + 1}")


@functools.cache
def agent_records(count: int, size: int = 9, first_seed: int = 0) -> tuple[GameRecord, ...]:
    """`count` distinct random-agent games (every fourth with integer komi, so jigo can happen)."""
    games: dict[tuple, GameRecord] = {}
    seed = first_seed
    while len(games) < count:
        record = agent_game(seed, size, komi=7.0 if seed % 4 == 3 else 7.5)
        games.setdefault(tuple(record.moves), record)
        seed += 2
    return tuple(games.values())


def with_illegal_move(record: GameRecord, at: int) -> tuple[GameRecord, str]:
    """A copy whose move `at` (0-based) is played on an occupied point; its refusal reason.

    The reason names the 1-based move number, as `gocore.rules.sgf.replay` counts.
    """
    position = Position.initial(record.size, record.komi)
    for color, move in record.moves[:at]:
        position = position.play(move, color)
    occupied = np.flatnonzero(position.stones.reshape(-1))
    if not len(occupied):
        raise ValueError(f"no stone on the board before move {at}; pick a later move")
    moves = list(record.moves)
    moves[at] = (moves[at][0], int(occupied[0]))
    return dataclasses.replace(record, moves=moves), f"illegal-move@{at + 1}"


def renamed(record: GameRecord) -> GameRecord:
    """The same game (same moves) under other player names: a duplicate."""
    return dataclasses.replace(record, player_black="Someone", player_white="Else")


def sgf_text(record: GameRecord) -> str:
    """The SGF of `record` on one line (for .sgfs files); records here have no multi-line text."""
    return write(record).replace("\n", "")


# --- corpus --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Slot:
    """One game slot of a file: what was written there and the refusal expected (None = accepted).

    `index` is the game's place in its file; -1 stands for a file refused as a whole.
    """

    file: str
    index: int
    record: GameRecord | None
    reason: str | None


@dataclass
class Corpus:
    """Files (relative path → bytes) and the expected fate of every game in them."""

    files: dict[str, bytes] = field(default_factory=dict)
    slots: list[Slot] = field(default_factory=list)

    def write(self, root: Path) -> Path:
        """Write the files under `root` (created); returns `root`."""
        for name, data in self.files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return root

    @property
    def accepted(self) -> list[Slot]:
        """Slots that must become rows."""
        return [slot for slot in self.slots if slot.reason is None]

    def expected_rows(self, per_position: int) -> int:
        """Rows of the dataset: every move of every accepted game, `per_position` times."""
        return per_position * sum(len(slot.record.moves) for slot in self.accepted)

    def expected_quarantine(self, prefix: str = "") -> set[tuple[str, int, str]]:
        """{(file label, game_index, reason)}; labels are `prefix` + the relative path."""
        return {(prefix + slot.file, slot.index, slot.reason) for slot in self.slots if slot.reason}

    def records_by_source(self, prefix: str = "") -> dict[str, GameRecord]:
        """Accepted records keyed like the dataset's `source` column: ``<label>#<index>``."""
        return {f"{prefix}{slot.file}#{slot.index}": slot.record for slot in self.accepted}


class CorpusBuilder:
    """Adds files to a Corpus together with the fate each game must meet."""

    def __init__(self) -> None:
        self.corpus = Corpus()

    def game(self, name: str, record: GameRecord, reason: str | None = None) -> CorpusBuilder:
        """A one-game .sgf file."""
        return self.collection(name, [(write(record), record, reason)])

    def collection(self, name: str, games: Iterable[tuple[str, GameRecord | None, str | None]]
                   ) -> CorpusBuilder:
        """A file of several games: (SGF text, record or None, expected reason) each, in order."""
        games = list(games)
        separator = "\n" if name.endswith(".sgfs") else "\n\n"
        self._add(name, separator.join(text for text, _, _ in games) + "\n",
                  [(i, record, reason) for i, (_, record, reason) in enumerate(games)])
        return self

    def unreadable(self, name: str, data: bytes, reason: str) -> CorpusBuilder:
        """A file refused as a whole (game_index -1), e.g. no SGF game in it at all."""
        self._add(name, data, [(-1, None, reason)])
        return self

    def _add(self, name: str, data: str | bytes, slots: list[tuple[int, GameRecord | None, str | None]]) -> None:
        if name in self.corpus.files:
            raise ValueError(f"{name} is already in the corpus")
        self.corpus.files[name] = data.encode("utf-8") if isinstance(data, str) else data
        self.corpus.slots += [Slot(name, index, record, reason) for index, record, reason in slots]

    def build(self) -> Corpus:
        return self.corpus


def header(size: int = 9, extra: str = "") -> str:
    """A root node for hand-written broken games."""
    return f"(;FF[4]GM[1]SZ[{size}]KM[7.5]RE[B+R]{extra}"


def mixed_corpus(gnugo: Iterable[GameRecord], random_games: int = 12) -> Corpus:
    """Real-looking games (GNU Go, random and UCT agents) mixed with every kind of broken file.

    File names sort so that the original of the duplicated game comes first.
    """
    gnugo = list(gnugo)
    games = agent_records(random_games + 8)
    plain, extra = games[:random_games], games[random_games:]
    builder = CorpusBuilder()
    for i, record in enumerate(gnugo):
        builder.game(f"gnugo-{i}.sgf", record)
    for i, record in enumerate(plain):
        builder.game(f"random-{i:02d}.sgf", record)
    for i in range(2):
        builder.game(f"uct-{i}.sgf", agent_game(1000 + 2 * i, uct=True, max_moves=30))
    illegal, illegal_reason = with_illegal_move(extra[0], at=25)
    builder.game("illegal-move.sgf", illegal, illegal_reason)
    builder.game("no-result.sgf", dataclasses.replace(extra[1], result=None, winner=None), "filter:no-result")
    builder.game("size-13.sgf", agent_game(7, size=13, max_moves=60), "filter:size")
    builder.game("zz-duplicate.sgf", renamed(gnugo[0]), "duplicate")
    builder.collection("collection.sgf", [
        (write(extra[2]), extra[2], None),
        (header(extra=";B[ee]W;[dd])"), None, "syntax"),  # W outside a node: parens still balance
        (write(extra[3]), extra[3], None),
        (write(renamed(extra[2])), None, "duplicate"),  # same file, so surely the same shard
    ])
    broken_line = sgf_text(extra[5])[:-1]  # the closing ')' is lost: only this line may be refused
    builder.collection("lines.sgfs", [
        (sgf_text(extra[4]), extra[4], None),
        (broken_line, None, "syntax"),
        (sgf_text(extra[6]), extra[6], None),
        (sgf_text(extra[7]), extra[7], None),
    ])
    truncated = write(extra[0])[: len(write(extra[0])) // 2]  # a download cut short mid-game
    builder.collection("broken-syntax.sgf", [(truncated, None, "syntax")])
    builder.collection("not-go.sgf", [(header().replace("GM[1]", "GM[2]") + ";B[ee])", None, "not-go")])
    builder.collection("board-size.sgf", [(header(size=25) + ";B[ee])", None, "board-size")])
    builder.unreadable("notes.sgf", b"these are not the games you are looking for\n", "empty")
    return builder.build()


# --- checking rows against the games they came from ---------------------------------------------

def table_columns(table: pa.Table) -> dict[str, np.ndarray]:
    """Numpy columns of a ROW_SCHEMA table; planes as (R, nbytes) uint8."""
    columns = {name: table[name].to_numpy(zero_copy_only=False) for name in table.column_names
               if name != "planes"}
    packed = [np.frombuffer(row, np.uint8) for row in table["planes"].to_pylist()]
    columns["planes"] = np.stack(packed) if packed else np.zeros((0, 0), np.uint8)
    return columns


def read_rows(paths: Iterable[Path]) -> dict[str, np.ndarray]:
    """The rows of the given shards, concatenated, as numpy columns."""
    return table_columns(pa.concat_tables([pq.read_table(path) for path in paths]))


def expected_value(record: GameRecord, color: int) -> int:
    """+1 if `color` won the game, -1 if it lost, 0 for jigo or an unknown result."""
    if record.winner in (None, 0):
        return 0
    return 1 if color == record.winner else -1


def assert_rows_match_games(columns: dict[str, np.ndarray], records: dict[str, GameRecord]) -> None:
    """Every row, its symmetry undone, is its game's position at `move_number`: planes, move, value.

    `records` maps the `source` column to the game; positions are replayed with Position.play and
    encoded with `encode_position`, the slow reference path the ingest must agree with.
    """
    replayed: dict[str, list[Position]] = {}
    for row in range(len(columns["planes"])):
        source, number, k = columns["source"][row], int(columns["move_number"][row]), int(columns["symmetry"][row])
        record = records[source]
        if source not in replayed:
            replayed[source] = replay(record)
        encoder = features.get_encoder(columns["encoder"][row])
        size = int(columns["size"][row])
        planes = features.unpack_planes(columns["planes"][row:row + 1], encoder.num_planes, size)[0]
        want = features.encode_position(replayed[source][number], encoder)
        assert np.array_equal(symmetry.apply(planes, symmetry.inverse(k)), want), (
            f"row {row}: planes of {source} move {number} under symmetry {k}")
        color, move = record.moves[number]
        assert symmetry.apply_to_move(int(columns["move"][row]), symmetry.inverse(k), size) == move, (
            f"row {row}: move of {source} move {number} under symmetry {k}")
        assert columns["value"][row] == expected_value(record, color), f"row {row}: value of {source}"
        assert columns["komi"][row] == np.float32(record.komi)


def position_keys(columns: dict[str, np.ndarray]) -> list[tuple[str, int, int]]:
    """(game_id, move_number, symmetry) of every row."""
    return list(zip(columns["game_id"].tolist(), columns["move_number"].tolist(), columns["symmetry"].tolist()))


def files_of(directory: Path) -> dict[str, tuple[int, int, int]]:
    """Relative path → (inode, mtime_ns, size) of every file under `directory`: a rewrite changes it."""
    return {p.relative_to(directory).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
            for p in directory.rglob("*") if p.is_file()}
