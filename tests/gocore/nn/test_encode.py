"""gocore.nn.encode: filters, game ids, and the rows `ShardEncoder` makes (checked against replays)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from gocore.nn import features
from gocore.nn.encode import EncodedRows, EncodeOptions, ShardEncoder, filter_reason, game_id
from gocore.rules.coords import from_rowcol
from gocore.rules.sgf import GameRecord
from storage.schemas import ROW_SCHEMA, encoded_rows_table
from tests.corpus import agent_game, agent_records, assert_rows_match_games, position_keys, with_illegal_move

FACTOR = {"all8": 8, "random1": 1, "none": 1}


@pytest.fixture(scope="module")
def games() -> tuple[GameRecord, ...]:
    """Six distinct random-agent 9x9 games with results."""
    return agent_records(6)


def encode(records, options: EncodeOptions, seed: int = 7) -> dict[str, np.ndarray]:
    """Rows of `records` (sources ``g<i>#0``) through one ShardEncoder; every game must be kept."""
    encoder = ShardEncoder(options, seed)
    for i, record in enumerate(records):
        assert encoder.add_game(record, f"g{i}#0") is None
    return as_numpy(encoder.finish())


def as_numpy(rows: EncodedRows) -> dict[str, np.ndarray]:
    """The encoder's rows as one numpy array per ROW_SCHEMA column (strings per row), for easy checks."""
    table = encoded_rows_table(rows)
    return {name: rows.planes if name == "planes" else table[name].to_numpy(zero_copy_only=False)
            for name in ROW_SCHEMA.names}


def by_source(records) -> dict[str, GameRecord]:
    return {f"g{i}#0": record for i, record in enumerate(records)}


# --- options and filters ----------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [("augment", "all4"), ("encoder", "agz18")])
def test_options_refuse_unknown_augment_or_encoder(field, value):
    with pytest.raises(ValueError, match=value):
        EncodeOptions(**{field: value})


def test_a_complete_game_of_the_right_size_passes_every_filter(games):
    assert filter_reason(games[0], EncodeOptions()) is None


@pytest.mark.parametrize("change, options, reason", [
    ({"size": 13}, EncodeOptions(size=9), "filter:size"),
    ({"handicap": 2, "setup_black": [from_rowcol(2, 2, 9), from_rowcol(6, 6, 9)]},
     EncodeOptions(allow_handicap=False), "filter:handicap"),
    ({"setup_white": [from_rowcol(4, 4, 9)]}, EncodeOptions(allow_handicap=False), "filter:handicap"),
    ({"winner": None, "result": None}, EncodeOptions(), "filter:no-result"),
    ({"winner": None, "result": "Void"}, EncodeOptions(), "filter:no-result"),
])
def test_filters_name_the_rule_that_refuses_a_game(games, change, options, reason):
    assert filter_reason(dataclasses.replace(games[0], **change), options) == reason


def test_short_games_are_refused_below_min_moves(games):
    record = games[0]
    assert filter_reason(record, EncodeOptions(min_moves=len(record.moves))) is None
    assert filter_reason(record, EncodeOptions(min_moves=len(record.moves) + 1)) == "filter:min-moves"


def test_handicap_and_unknown_results_pass_when_allowed(games):
    handicap = dataclasses.replace(games[0], handicap=2, winner=None, result=None)
    assert filter_reason(handicap, EncodeOptions(allow_handicap=True, require_result=False)) is None


# --- game ids -------------------------------------------------------------------------------------

def test_game_id_ignores_names_komi_result_date_and_source(games):
    record = games[0]
    renamed = dataclasses.replace(record, player_black="Honinbo", player_white="Meijin", komi=6.5,
                                  result="B+R", winner=1, date="1846-09-11", source="other.sgf#4",
                                  rank_black="9p", rules="Japanese")
    assert game_id(renamed) == game_id(record)
    assert len(game_id(record)) == 16 and int(game_id(record), 16) >= 0


def test_game_id_ignores_the_order_setup_stones_are_listed_in(games):
    stones = [from_rowcol(2, 2, 9), from_rowcol(6, 6, 9), from_rowcol(2, 6, 9)]
    one = dataclasses.replace(games[0], moves=[], setup_black=stones)
    other = dataclasses.replace(games[0], moves=[], setup_black=stones[::-1])
    assert game_id(one) == game_id(other)


def test_game_id_changes_with_a_move_a_colour_the_setup_or_the_size(games):
    record = games[0]
    moves = list(record.moves)
    variants = [
        dataclasses.replace(record, moves=moves[:-1]),
        dataclasses.replace(record, moves=[moves[0], (moves[1][0], moves[2][1]), *moves[2:]]),
        dataclasses.replace(record, moves=[(-moves[0][0], moves[0][1]), *moves[1:]]),
        dataclasses.replace(record, setup_black=[from_rowcol(0, 0, 9)]),
        dataclasses.replace(record, setup_white=[from_rowcol(0, 0, 9)]),
        dataclasses.replace(record, size=13),
        games[1],
    ]
    ids = [game_id(record)] + [game_id(variant) for variant in variants]
    assert len(set(ids)) == len(ids)


def test_game_id_is_the_same_in_another_process(games):
    # A per-process salt (Python's hash()) would break dedupe across shards encoded in parallel.
    moves = [list(m) for m in games[0].moves]
    script = ("from gocore.nn.encode import game_id; from gocore.rules.sgf import GameRecord; "
              f"print(game_id(GameRecord(size=9, moves=[tuple(m) for m in {moves!r}])))")
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == game_id(games[0])


# --- ShardEncoder: refusals -----------------------------------------------------------------------

def test_same_game_twice_in_a_shard_is_a_duplicate_and_encoded_once(games):
    encoder = ShardEncoder(EncodeOptions(augment="none"), seed=1)
    twin = dataclasses.replace(games[0], player_black="Someone", player_white="Else", komi=0.5)
    assert encoder.add_game(games[0], "a.sgf#0") is None
    reason, detail = encoder.add_game(twin, "b.sgf#0")
    assert reason == "duplicate" and game_id(games[0]) in detail
    rows = as_numpy(encoder.finish())
    assert len(rows["planes"]) == len(games[0].moves)
    assert set(rows["source"]) == {"a.sgf#0"}
    assert [entry[1] for entry in encoder.game_list()] == ["a.sgf#0"]


def test_illegal_move_is_refused_with_its_move_number_and_leaves_no_rows(games):
    illegal, reason = with_illegal_move(games[1], at=30)
    encoder = ShardEncoder(EncodeOptions(), seed=1)
    assert encoder.add_game(illegal, "x.sgf#0")[0] == reason == "illegal-move@31"
    assert len(encoder.finish()) == 0 and encoder.game_list() == []


def test_a_refused_game_is_not_remembered_as_seen(games):
    illegal, reason = with_illegal_move(games[1], at=30)
    encoder = ShardEncoder(EncodeOptions(), seed=1)
    assert encoder.add_game(illegal, "x.sgf#0")[0] == reason
    assert encoder.add_game(illegal, "x.sgf#1")[0] == reason  # not "duplicate"


def test_setup_with_a_chain_without_liberties_is_a_setup_conflict():
    corner, right, below = from_rowcol(0, 0, 9), from_rowcol(0, 1, 9), from_rowcol(1, 0, 9)
    record = GameRecord(size=9, setup_black=[corner], setup_white=[right, below], moves=[(1, 40)],
                        winner=1, result="B+R")
    reason, detail = ShardEncoder(EncodeOptions(), seed=1).add_game(record, "s.sgf#0")
    assert reason == "setup-conflict" and "liberty" in detail


def test_a_game_without_moves_gives_no_rows_when_min_moves_is_zero():
    encoder = ShardEncoder(EncodeOptions(min_moves=0), seed=1)
    assert encoder.add_game(GameRecord(size=9, winner=1, result="B+R"), "e.sgf#0") is None
    rows = as_numpy(encoder.finish())
    assert len(rows["planes"]) == 0 and encoder.game_list()[0][2] == 0


# --- ShardEncoder: rows ---------------------------------------------------------------------------

@pytest.mark.parametrize("augment", sorted(FACTOR))
@pytest.mark.parametrize("encoder_name", sorted(features.ENCODERS))
def test_rows_are_the_replayed_positions_under_their_symmetry(games, augment, encoder_name):
    records = games[:3]
    rows = encode(records, EncodeOptions(encoder=encoder_name, augment=augment))
    assert len(rows["planes"]) == FACTOR[augment] * sum(len(r.moves) for r in records)
    assert_rows_match_games(rows, by_source(records))
    assert set(rows["encoder"]) == {encoder_name} and set(rows["size"]) == {9}


def test_all8_gives_each_position_all_eight_symmetries_once(games):
    rows = encode(games[:3], EncodeOptions(augment="all8"))
    per_position = Counter(zip(rows["source"].tolist(), rows["move_number"].tolist()))
    assert set(per_position.values()) == {8}
    assert len(set(position_keys(rows))) == len(rows["planes"])
    for source, record in by_source(games[:3]).items():
        assert {n for s, n in per_position if s == source} == set(range(len(record.moves)))


def test_random1_gives_one_row_per_position_in_a_random_symmetry(games):
    rows = encode(games, EncodeOptions(augment="random1"))
    positions = Counter(zip(rows["source"].tolist(), rows["move_number"].tolist()))
    assert len(positions) == len(rows["planes"]) == sum(len(r.moves) for r in games)
    assert set(positions.values()) == {1}
    used = Counter(rows["symmetry"].tolist())
    assert set(used) == set(range(8))  # hundreds of positions: every symmetry shows up
    assert max(used.values()) < len(rows["planes"]) / 4


def test_none_keeps_every_position_in_the_identity_frame(games):
    rows = encode(games[:3], EncodeOptions(augment="none"))
    assert set(rows["symmetry"].tolist()) == {0}
    assert len(set(position_keys(rows))) == len(rows["planes"]) == sum(len(r.moves) for r in games[:3])


@pytest.mark.parametrize("augment", ["all8", "none"])
def test_rows_are_shuffled_so_neighbours_rarely_share_a_position(games, augment):
    rows = encode(games, EncodeOptions(augment=augment))
    ids, numbers = rows["game_id"], rows["move_number"].astype(np.int64)
    same_game = ids[1:] == ids[:-1]
    same_position = same_game & (numbers[1:] == numbers[:-1])
    neighbouring = same_game & (np.abs(numbers[1:] - numbers[:-1]) <= 1)
    # In game order 7 of 8 adjacent all8 rows share a position and every adjacent "none" pair
    # is neighbouring; shuffled, both are a matter of chance (well under 1 %).
    assert same_position.mean() < 0.02
    assert neighbouring.mean() < 0.05


def test_value_is_plus_one_for_the_winners_moves_and_zero_without_a_winner(games):
    jigo = dataclasses.replace(games[0], winner=0, result="0")
    unknown = dataclasses.replace(games[1], winner=None, result=None)
    rows = encode([games[2], jigo, unknown], EncodeOptions(augment="none", require_result=False))
    record = games[2]
    colors = {number: color for number, (color, _) in enumerate(record.moves)}
    mine = rows["source"] == "g0#0"
    for number, value in zip(rows["move_number"][mine], rows["value"][mine]):
        assert value == (1 if colors[int(number)] == record.winner else -1)
    assert set(rows["value"][~mine].tolist()) == {0}


def test_same_seed_gives_the_same_rows_and_another_seed_another_order(games):
    options = EncodeOptions(augment="random1")
    first, again, other = (encode(games[:3], options, seed) for seed in (5, 5, 6))
    for name in first:
        assert np.array_equal(first[name], again[name])
    assert not np.array_equal(first["move_number"], other["move_number"])


def test_rows_fit_the_parquet_schema_also_when_every_game_is_refused(games):
    encoder = ShardEncoder(EncodeOptions(), seed=1)
    encoder.add_game(games[0], "g0#0")
    assert encoded_rows_table(encoder.finish()).schema.equals(ROW_SCHEMA)
    encoder = ShardEncoder(EncodeOptions(), seed=1)
    encoder.add_game(dataclasses.replace(games[0], size=13), "x#0")
    empty = encoded_rows_table(encoder.finish())
    assert empty.num_rows == 0 and empty.schema.equals(ROW_SCHEMA)


def test_encoder_returns_numpy_columns_and_gocore_never_imports_pyarrow(games):
    rows = ShardEncoder(EncodeOptions(augment="none"), seed=1)
    rows.add_game(games[0], "g0#0")
    encoded = rows.finish()
    arrays = [encoded.planes, encoded.move, encoded.value, encoded.move_number, encoded.symmetry,
              encoded.komi, encoded.game]
    assert all(isinstance(a, np.ndarray) and len(a) == len(encoded) for a in arrays)
    assert encoded.game_ids == (game_id(games[0]),) and encoded.sources == ("g0#0",)
    script = "import sys, gocore.nn.encode; sys.exit('pyarrow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", script]).returncode == 0


def test_game_list_records_id_source_length_and_winner_of_kept_games(games):
    encoder = ShardEncoder(EncodeOptions(), seed=1)
    for i, record in enumerate(games[:3]):
        encoder.add_game(record, f"g{i}#0")
    assert encoder.game_list() == [[game_id(r), f"g{i}#0", len(r.moves), r.winner]
                                   for i, r in enumerate(games[:3])]


def test_komi_and_source_columns_follow_each_game(games):
    records = [dataclasses.replace(games[0], komi=5.5), agent_game(11, komi=0.5)]
    rows = encode(records, EncodeOptions(augment="none"))
    for source, record in by_source(records).items():
        assert set(rows["komi"][rows["source"] == source].tolist()) == {record.komi}


# --- auxiliary targets --------------------------------------------------------------------------------

def test_a_played_out_game_gives_every_row_its_final_count_in_the_rows_frame_and_view(games):
    from gocore.rules.board import Position
    from gocore.rules.symmetry import move_table

    rows = encode(games[:2], EncodeOptions(augment="all8"))
    records, size = by_source(games[:2]), 9
    for r in range(0, len(rows["move"]), 7):
        record = records[rows["source"][r]]
        final = Position.initial(size, record.komi)
        for color, move in record.moves:
            final = final.play(move, color)
        mover = 1 if rows["move_number"][r] % 2 == 0 else -1
        owner = final.ownership().reshape(-1)  # (N*N,) black's view, identity frame
        expected = np.empty_like(owner)
        expected[move_table(size)[rows["symmetry"][r], :size * size]] = owner
        assert np.array_equal(np.frombuffer(rows["ownership"][r], np.int8), expected * mover)
        assert rows["score"][r] == pytest.approx(final.score() * mover)


def test_a_resigned_game_or_a_count_that_is_not_the_boards_leaves_the_targets_unknown(games):
    resigned = dataclasses.replace(games[0], result="W+R", winner=-1)
    recounted = dataclasses.replace(games[1], result="B+100.5", winner=1)  # dead stones removed, say
    rows = encode([resigned, recounted], EncodeOptions(augment="none"))
    assert all(value is None for value in rows["ownership"]) and np.isnan(rows["score"]).all()
