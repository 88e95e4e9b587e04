"""The ingest flow on a GNU Go source: games played in parallel tasks, encoded like downloaded ones.

The module fixture runs `gozero ingest gnugo-9x9:level=1,games=6` (a process pool of two workers
under the session's Prefect harness) and runs it again unchanged: the first run must write six
distinct, played-out, correctly counted games and a dataset of them; the second must touch no
file. A game lost afterwards is played again by the task alone, and no other.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from flows.ingest import run_ingest
from gocore.nn.encode import EncodeOptions
from gocore.rules import sgf, sgf_read
from storage import datasets, gnugo_source, layout
from tasks.gnugo_games import plan_gnugo_games, play_gnugo_games
from tests.corpus import files_of

pytestmark = pytest.mark.gnugo  # plays GNU Go games: the system tier's (tests/conftest.py)

SOURCE = "gnugo-9x9:level=1,games=6"
NAME = "gnugo"


@pytest.fixture(scope="module")
def ingested(prefect_harness, gnugo_path: str, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    data = tmp_path_factory.mktemp("gnugo") / "data"
    source = gnugo_source.parse_gnugo_source(SOURCE)
    options = EncodeOptions(augment="none")

    def ingest() -> datasets.DatasetSummary:
        return run_ingest([SOURCE], NAME, str(data), options, workers=2)

    first = ingest()
    games = gnugo_source.games_dir(data, source)
    raw_first, dataset_first = files_of(games), files_of(layout.dataset_dir(data, NAME))
    second = ingest()
    return SimpleNamespace(data=data, source=source, games=games, first=first, second=second,
                           raw_first=raw_first, raw_second=files_of(games), dataset_first=dataset_first,
                           dataset_second=files_of(layout.dataset_dir(data, NAME)))


def read_records(ingested: SimpleNamespace) -> list[sgf.GameRecord]:
    return [sgf_read.read_games(Path(path).read_bytes())[0]
            for path in gnugo_source.game_files(ingested.data, ingested.source)]


def test_six_distinct_games_are_written_under_the_raw_area(ingested):
    assert sorted(ingested.raw_first) == [f"game-{index:06d}.sgf" for index in range(6)]
    records = read_records(ingested)
    assert len({tuple(record.moves) for record in records}) == 6
    assert len({tuple(record.moves[:4]) for record in records}) == 6  # the random openings differ


def test_games_are_chinese_komi_7_5_played_out_and_re_is_our_tromp_taylor_count(ingested):
    for record in read_records(ingested):
        assert (record.size, record.komi, record.rules) == (9, 7.5, "Chinese")
        final = sgf.replay(record)[-1]
        assert record.moves[-1][1] == record.moves[-2][1] == 81  # both passed
        assert record.result == final.result() and record.winner == (1 if final.score() > 0 else -1)


def test_the_dataset_holds_every_game_with_its_rows(ingested):
    records = read_records(ingested)
    assert ingested.first.games == 6 and ingested.first.games_refused == 0
    assert ingested.first.rows == sum(len(record.moves) for record in records)  # augment none: a row a move
    manifest = datasets.read_manifest(layout.dataset_dir(ingested.data, NAME))
    assert manifest["sources"] == [ingested.source.text]


def test_a_rerun_plays_nothing_and_rewrites_nothing(ingested):
    assert ingested.raw_second == ingested.raw_first
    assert ingested.dataset_second == ingested.dataset_first
    assert (ingested.second.games, ingested.second.rows) == (ingested.first.games, ingested.first.rows)


def test_a_lost_game_is_planned_and_played_again_alone(ingested):
    data, source = str(ingested.data), ingested.source
    assert plan_gnugo_games.fn(source, data) == []
    gnugo_source.game_path(ingested.data, source, 3).unlink()
    assert plan_gnugo_games.fn(source, data) == [[3]]
    assert play_gnugo_games.fn([1, 3, 5], source, data) == 1
    after = files_of(ingested.games)
    assert {name for name in after if after[name] != ingested.raw_first[name]} == {"game-000003.sgf"}
