"""storage.matches: the match directory, atomic game writes, resuming, the results table, the summary."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gocore.play.match import MatchConfig, play_match_game
from gocore.play.ratings import summarize
from gocore.rules.sgf import write
from gocore.search.agents import RandomAgent
from storage import matches, schemas
from storage.atomic import TEMP_PREFIX

SETTINGS = {"black": "random", "white": "uct-5", "games": 4, "size": 5, "komi": 7.5}


def row(index: int, a_score: float = 1.0, **changes) -> dict:
    """A results row as gocore.play.match.MatchGame.row() makes it."""
    base = {"game": index, "black": "A", "white": "B", "a_color": 1, "winner": 1, "a_score": a_score,
            "result": "B+3.5", "moves": 40, "reason": "two-passes", "detail": "", "score": 3.5,
            "seconds": 0.25, "external_score": None, "disagreement": None}
    return base | changes


@pytest.fixture
def match(tmp_path: Path) -> Path:
    path = tmp_path / "matches" / "m1"
    matches.begin(path, SETTINGS)
    return path


def test_begin_records_settings_and_refuses_a_different_match(match: Path):
    assert matches.read_settings(match) == SETTINGS
    with pytest.raises(matches.MatchError, match="white"):
        matches.begin(match, SETTINGS | {"white": "gnugo-5"})
    matches.begin(match, SETTINGS | {"games": 10, "gtp_timeout": 60.0})  # the same match, resumed
    assert matches.read_settings(match)["games"] == 10
    with pytest.raises(matches.MatchError, match="holds no match"):
        matches.read_settings(match.parent / "other")


def test_a_game_is_done_only_once_its_row_is_written(match: Path):
    matches.write_game(match, 2, "(;GM[1]SZ[5])", row(2))
    assert matches.finished_games(match) == {2}
    assert matches.missing_games(match, 4) == [0, 1, 3]
    # a crash between the SGF and the row: the game is replayed, its SGF overwritten
    matches.sgf_path(match, 0).write_text("(;GM[1]SZ[5])")
    assert 0 in matches.missing_games(match, 4)
    assert matches.sgf_path(match, 2).read_text() == "(;GM[1]SZ[5])"
    assert matches.progress(match) == (1, 4)


def test_writes_are_atomic_and_leftover_temp_files_are_cleared(match: Path):
    matches.write_game(match, 0, "(;GM[1]SZ[5])", row(0))
    assert not [p for p in match.rglob("*") if p.name.startswith(TEMP_PREFIX)]
    stale = match / matches.WORK_DIR / f"{TEMP_PREFIX}game-00001.json.abc"
    stale.write_text("{")  # a writer killed mid-write
    assert matches.finished_games(match) == {0}
    matches.begin(match, SETTINGS)
    assert not stale.exists()


def test_results_table_has_the_schema_and_the_rows(match: Path):
    rows = [row(1, 0.0, winner=-1, result="W+R", reason="resign"),
            row(0, external_score="B+3.5", disagreement=False)]
    table = pq.read_table(matches.write_results(match, rows))
    assert table.schema.equals(schemas.RESULTS_SCHEMA)
    assert table.column("game").to_pylist() == [0, 1]
    assert table.column("external_score").to_pylist() == ["B+3.5", None]
    assert table.column("disagreement").to_pylist() == [False, None]
    assert matches.read_results(match).equals(table)


def test_a_played_game_row_fits_the_schema(match: Path):
    game = play_match_game(0, RandomAgent(1), RandomAgent(2), MatchConfig(size=5), ("A", "B"))
    matches.write_game(match, 0, write(game.record()), game.row())
    table = schemas.results_table(matches.read_rows(match))
    assert table.to_pylist()[0]["result"] == game.game.result
    assert set(game.row()) == set(schemas.RESULTS_SCHEMA.names)


def test_summary_is_written_last_and_a_stale_one_is_removed(match: Path):
    assert matches.read_summary(match) is None
    with pytest.raises(matches.MatchError):
        matches.read_results(match)
    summary = {"match_id": "m1", "games_planned": 4, **summarize([1.0, 0.0, 1.0, 1.0])}
    matches.write_summary(match, summary)
    assert matches.read_summary(match) == json.loads(json.dumps(summary))
    matches.begin(match, SETTINGS)  # same games: still complete
    assert matches.read_summary(match) is not None
    matches.begin(match, SETTINGS | {"games": 8})  # more games to play: not complete any more
    assert matches.read_summary(match) is None


def test_summary_markdown_reports_the_verdict():
    facts = summarize([1.0] * 3 + [0.0])
    summary = {"match_id": "m1", "player_a": "uct-50", "player_b": "random", "games_planned": 4,
               "stopped_early": False, "reasons": {"two-passes": 3, "resign": 1}, "external_counts": 0,
               "disagreements": 0, **facts}
    text = matches.summary_markdown(summary)
    assert text.startswith("# Match `m1`") and "| A win rate (95 % CI) | 75.0% (" in text
    assert "| ended by resign | 1 |" in text and "| gate ≥ 55% | passed (by threshold) |" in text
    assert math.isfinite(facts["elo"])


@pytest.mark.parametrize("black, white, start", [
    ("models:/gozero-9x9@champion", "gtp:gnugo --mode gtp --level 1",
     "gozero-9x9-champion-vs-gtp-gnugo-mode-gtp-level-1-"),
    ("/data/checkpoints/gen3/", "uct-400", "gen3-vs-uct-400-"),
])
def test_default_match_ids_are_readable_safe_directory_names(black: str, white: str, start: str):
    from storage.layout import safe_name

    match_id = matches.default_match_id(black, white)
    assert match_id.startswith(start) and safe_name(match_id) == match_id


def test_match_ids_lists_begun_matches_by_prefix(tmp_path: Path):
    assert matches.match_ids(tmp_path) == []
    for match_id in ("ladder-a-vs-b", "ladder-a-vs-c", "gate-7"):
        matches.begin(tmp_path / "matches" / match_id, SETTINGS)
    (tmp_path / "matches" / "ladder-a-vs-empty").mkdir()  # no match.json: never begun
    assert matches.match_ids(tmp_path, "ladder-a-vs-") == ["ladder-a-vs-b", "ladder-a-vs-c"]
    assert len(matches.match_ids(tmp_path)) == 3
