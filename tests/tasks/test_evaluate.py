"""tasks.app.evaluate's match (what the tasks and the CLI call): chunks, resume,
early stop, the results table and summary; one match against GNU Go through the GTP spec."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gocore.play.match import MatchConfig
from gocore.play.ratings import SprtConfig
from storage import matches
from tasks.app.evaluate import (
    MatchSettings,
    finish_match,
    is_decided,
    play_chunk,
    play_match_here,
    run_match,
    start_match,
)
from tasks.app.players import PlayerError, build_player
from tasks.evaluate import finalize_match, play_games

TINY = MatchConfig(size=5, komi=7.5, seed=1)


def settings(black: str = "random", white: str = "uct-5", games: int = 4, **changes) -> MatchSettings:
    return MatchSettings(black, white, games, sims=changes.pop("sims", 8), config=changes.pop("config", TINY),
                         **changes)


def test_chunks_cover_the_missing_games_and_a_rerun_plays_nothing_twice(tmp_path: Path):
    match = str(tmp_path / "m")
    chunks = start_match(match, settings(games=5), games_per_chunk=2)
    assert chunks == [[0, 1], [2, 3], [4]]
    rows = play_chunk(match, settings(games=5), chunks[1])
    assert [r["game"] for r in rows] == [2, 3]
    before = {p.name: p.stat().st_mtime_ns for p in Path(match, "games").iterdir()}
    assert start_match(match, settings(games=5), games_per_chunk=2) == [[0, 1], [4]]
    played: list[int] = []
    play_chunk(match, settings(games=5), [0, 1, 2, 3, 4], on_game=lambda r: played.append(r["game"]))
    assert played == [0, 1, 4]
    after = {p.name: p.stat().st_mtime_ns for p in Path(match, "games").iterdir()}
    assert all(after[name] == mtime for name, mtime in before.items())  # finished games untouched
    assert start_match(match, settings(games=5)) == []


def test_the_same_seed_replays_the_same_games(tmp_path: Path):
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    for match, chunking in ((first, 4), (second, 1)):  # different chunking, same games
        for chunk in start_match(match, settings(), games_per_chunk=chunking):
            play_chunk(match, settings(), chunk)
    for index in range(4):
        assert matches.sgf_path(Path(first), index).read_text() == matches.sgf_path(Path(second), index).read_text()


def test_a_different_match_under_the_same_id_is_refused(tmp_path: Path):
    start_match(str(tmp_path / "m"), settings())
    with pytest.raises(matches.MatchError, match="other settings"):
        start_match(str(tmp_path / "m"), settings(white="random"))


def test_finish_writes_results_and_summary_that_agree(tmp_path: Path):
    match = str(tmp_path / "m")
    for chunk in start_match(match, settings()):
        play_games.fn(chunk, match, settings())
    summary = finalize_match.fn(match, settings(), 0.55, None)
    table = pq.read_table(Path(match) / matches.RESULTS).to_pylist()
    assert [r["game"] for r in table] == [0, 1, 2, 3]
    assert summary["a_winrate"] == pytest.approx(sum(r["a_score"] for r in table) / 4)
    assert summary["games"] == 4 and summary["player_a"] == "random" and not summary["stopped_early"]
    assert matches.read_summary(Path(match)) == summary
    assert summary["gate_passed"] == (summary["a_winrate"] >= 0.55)


def test_a_decided_sprt_stops_the_match_early(tmp_path: Path):
    match = str(tmp_path / "m")
    lopsided = settings("uct-20", "random", games=40)  # UCT wins every game against random on 5x5
    sprt = SprtConfig(elo0=0, elo1=200, alpha=0.1, beta=0.1)
    played: list[int] = []
    summary = play_match_here(match, lopsided, 0.55, sprt, on_game=lambda row: played.append(row["game"]))
    assert 2 <= len(played) < 40 and played == list(range(len(played))) and is_decided(match, lopsided, sprt)
    assert summary["stopped_early"] and summary["sprt"] == "accept" and summary["gate_passed"]
    assert summary["gate_rule"] == "sprt" and summary["games"] == len(played)
    assert play_match_here(match, lopsided, 0.55, sprt, on_game=played.append) == summary  # a rerun plays nothing
    assert len(played) == summary["games"]


@pytest.mark.parametrize("sprt, waves", [(None, [[[0, 1], [2, 3], [4, 5], [6, 7]]]),
                                          (SprtConfig(elo0=0, elo1=200, alpha=0.2, beta=0.2), [[[0, 1], [2, 3]]])])
def test_run_match_plays_waves_until_the_sprt_decides(tmp_path: Path, sprt: SprtConfig | None, waves: list):
    """The flow's shape: without an SPRT one wave of every chunk; with one, waves of `wave` chunks
    and none after the test has decided (uct-20 sweeps random: 4 wins decide at these error rates)."""
    match, lopsided = str(tmp_path / "m"), settings("uct-20", "random", games=8)
    seen: list[list[list[int]]] = []
    progress: list[int] = []

    def play_wave(chunks: list[list[int]]):
        seen.append(chunks)
        return (play_chunk(match, lopsided, chunk) for chunk in chunks)

    summary = run_match(match, lopsided, 0.55, sprt, play_wave=play_wave, games_per_chunk=2, wave=2,
                        on_rows=progress.append)
    assert seen == waves and progress == [2 * (i + 1) for i in range(len(progress))]
    assert summary["games"] == progress[-1] == sum(len(chunk) for wave in waves for chunk in wave)


@pytest.mark.gnugo
def test_a_gtp_spec_plays_gnugo_and_compares_counts(tmp_path: Path, gnugo_path: str):
    match = str(tmp_path / "m")
    vs_gnugo = settings("random", "gtp:gnugo --mode gtp --level 0 --chinese-rules --capture-all-dead", games=2,
                        config=MatchConfig(size=5))
    for chunk in start_match(match, vs_gnugo):
        play_chunk(match, vs_gnugo, chunk)
    summary = finish_match(match, vs_gnugo)
    assert summary["games"] == 2 and summary["b_failures"] == 0
    assert summary["external_counts"] == summary["reasons"].get("two-passes", 0) and summary["disagreements"] == 0


@pytest.mark.gnugo
def test_any_gnugo_command_line_scores_right_or_says_loudly_it_may_not(tmp_path: Path, gnugo_path: str):
    """The README's own `gtp:gnugo --mode gtp --level 0` (no --capture-all-dead): GNU Go's dead
    stones are played out in a cleanup phase and both counts agree; with territory rules they
    cannot, and the summary's first line says so."""
    from storage.matches import summary_rows

    summaries = {}
    for rules in ("--chinese-rules", "--japanese-rules"):
        match = str(tmp_path / rules)
        spec = settings("random", f"gtp:gnugo --mode gtp --level 0 {rules}", games=2, config=MatchConfig(size=9))
        for chunk in start_match(match, spec):
            play_chunk(match, spec, chunk)
        summaries[rules] = finish_match(match, spec)
    area = summaries["--chinese-rules"]
    assert area["a_wins"] == 0 and area["disagreements"] == 0 and area["external_counts"] == 2
    assert area["reasons"].get("cleanup", 0) >= 1
    assert summary_rows(area)[0][0] == "games"
    territory = summaries["--japanese-rules"]
    assert territory["disagreements"] >= 1 and summary_rows(territory)[0][0] == "WARNING"


def test_a_crashing_engine_forfeits_its_games_and_the_match_completes(tmp_path: Path):
    script = tmp_path / "crash.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    sys.exit(3)\n")
    match = str(tmp_path / "m")
    crashing = settings("random", f"gtp:{sys.executable} {script}", games=3)
    for chunk in start_match(match, crashing, games_per_chunk=2):
        play_chunk(match, crashing, chunk)
    summary = finish_match(match, crashing)
    assert summary["games"] == 3 and summary["a_wins"] == 3 and summary["b_failures"] == 3
    assert summary["reasons"] == {"crash": 3}
    assert summary["failure_details"] == {"B crash": "GtpEngineDied: GTP 'boardsize 5' failed: engine exited with code 3"}
    from storage.matches import summary_rows

    assert ("why B crash (first)", summary["failure_details"]["B crash"]) in summary_rows(summary)


def test_a_model_directory_plays_alphazero_search_and_a_broken_one_is_refused(tmp_path: Path):
    from gocore.nn.nets import NetConfig, build_net
    from gocore.search.agents import AlphaZeroAgent
    from storage.checkpoints import save_model

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model = str(save_model(tmp_path / "tiny", build_net(config), config.to_dict()))
    net_vs_random = settings(model, "random", games=2, sims=4, config=MatchConfig(size=5, max_moves=12))
    agent = build_player(model, net_vs_random.player_settings()).make(3)
    assert isinstance(agent, AlphaZeroAgent) and agent.config.sims == 4
    match = str(tmp_path / "m")
    for chunk in start_match(match, net_vs_random):
        play_chunk(match, net_vs_random, chunk)
    rows = matches.read_rows(Path(match))
    assert len(rows) == 2 and {r["reason"] for r in rows} <= {"two-passes", "move-cap", "resign"}
    with pytest.raises(PlayerError, match="plays 5x5, not 9x9"):
        build_player(model, settings(config=MatchConfig(size=9)).player_settings())
    (tmp_path / "broken").mkdir()
    with pytest.raises(PlayerError, match="cannot load"):
        build_player(str(tmp_path / "broken"), settings().player_settings())


def test_a_finished_match_enters_the_ratings_table_once(data_dir: Path, tmp_path: Path):
    from storage import ratings

    match = str(data_dir / "matches" / "m")
    for chunk in start_match(match, settings()):
        play_chunk(match, settings(), chunk)
    finish_match(match, settings())
    first = ratings.read_games(data_dir).to_pylist()
    finish_match(match, settings())  # a retried finalize, or the match resumed with nothing left to play
    assert ratings.read_games(data_dir).to_pylist() == first
    assert [(r["player_a"], r["player_b"], r["size"], r["sims"]) for r in first] == [("random", "uct-5", 5, 8)] * 4
    assert all((data_dir / r["sgf"]).is_file() for r in first)
    elsewhere = str(tmp_path / "scratch" / "m")  # a match dir outside any data dir has no table
    for chunk in start_match(elsewhere, settings(games=1)):
        play_chunk(elsewhere, settings(games=1), chunk)
    finish_match(elsewhere, settings(games=1))
    assert not (tmp_path / "ratings").exists() and not (tmp_path / "scratch" / "ratings").exists()


def test_an_alias_is_recorded_as_the_version_it_named_when_the_match_began(data_dir: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    from storage import ratings, registry
    from tests.helpers import register_tiny_nets

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the registry of this data dir
    register_tiny_nets(data_dir, 2)  # champion: version 1
    match = str(data_dir / "matches" / "gate")
    gate = settings("models:/gozero-5x5@champion", "models:/gozero-5x5/2", games=2, sims=2,
                    config=MatchConfig(size=5, max_moves=12))
    chunks = start_match(match, gate, games_per_chunk=1)
    play_chunk(match, gate, chunks[0])
    registry.promote("gozero-5x5", 2, "the alias moves", data=data_dir)
    with pytest.raises(matches.MatchError, match="alias moved"):  # would play version 2 as version 1
        play_chunk(match, gate, chunks[1])
    finish_match(match, gate)
    games = ratings.read_games(data_dir).to_pylist()
    assert [(g["player_a"], g["player_b"]) for g in games] == [("gozero-5x5/1", "gozero-5x5/2")]
    with pytest.raises(matches.MatchError, match="ladder_a"):  # resuming under the moved alias
        start_match(match, gate)
