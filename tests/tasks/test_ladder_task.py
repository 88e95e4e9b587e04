"""tasks.ladder without Prefect: the fit from the ratings table, whom a player meets, match ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from gocore.play.ladder import Outcome, fit_ladder
from storage import matches, ratings
from tasks.app.ladder_settings import LadderSettings
from tasks.ladder import (
    LadderPlayer,
    choose_opponents,
    fit,
    match_id,
    met_opponents,
    pool,
)

RANDOM, UCT, GNUGO = LadderPlayer("random", "random"), LadderPlayer("uct-100", "uct-100"), LadderPlayer("gnugo-1", "gnugo-1")
V1, V2 = LadderPlayer("gozero-9x9/1", "models:/gozero-9x9/1"), LadderPlayer("gozero-9x9/2", "models:/gozero-9x9/2")


def games(a: str, b: str, a_points: float, count: int = 10) -> list[Outcome]:
    """`count` games of a against b where a scores `a_points` of them."""
    wins = int(a_points)
    return [Outcome(a, b, 1.0 if i < wins else 0.0) for i in range(count)]


def test_the_fit_reads_the_table_of_one_size_and_leaves_out_harness_failures(tmp_path: Path):
    rows = [{"game": i, "a_color": 1, "a_score": 1.0, "result": "B+F", "reason": "crash"} for i in range(6)]
    ratings.write_match(tmp_path, ratings.RatedMatch("m1", "uct-100", "random", 9, 7.5, 100), rows[:2])
    ratings.write_match(tmp_path, ratings.RatedMatch("m2", "uct-100", "random", 9, 7.5, 100),
                        [{**row, "reason": "two-passes", "result": "B+3"} for row in rows[:4]])
    ratings.write_match(tmp_path, ratings.RatedMatch("m3", "uct-100", "random", 5, 7.5, 100), rows)
    rated = {r.player: r for r in fit(tmp_path, 9)}
    assert rated["uct-100"].games == 4 and rated["uct-100"].elo > 0  # the 2 crashes are not counted
    assert fit(tmp_path, 5) == [] and fit(tmp_path, 13) == []


def test_a_newcomer_first_meets_random_only():
    rated = fit_ladder(games("uct-100", "random", 8))
    assert choose_opponents(V1, rated, [RANDOM, UCT], [], 3) == [RANDOM]
    assert choose_opponents(V1, rated, [RANDOM, UCT], [UCT], 3) == [UCT]  # resumes what it began


def test_a_rated_player_resumes_its_matches_then_meets_unrated_anchors_then_the_closest():
    rated = fit_ladder(games("uct-100", "random", 9) + games("gozero-9x9/1", "random", 5)
                       + games("gozero-9x9/2", "random", 8) + games("gozero-9x9/2", "gozero-9x9/1", 7))
    candidates = [RANDOM, UCT, GNUGO, V1, V2]
    assert choose_opponents(V2, rated, candidates, [], 2) == [GNUGO, UCT]  # gnugo-1 unrated: most to learn
    assert choose_opponents(V2, rated, candidates, [GNUGO], 2) == [GNUGO, UCT]
    assert choose_opponents(V2, rated, candidates, [GNUGO, V1, RANDOM], 2) == [GNUGO, V1, RANDOM]
    without_gnugo = [RANDOM, UCT, V1, V2]
    # v2 (8/10 against random) is nearest uct-100 (9/10), then v1; random is the least informative
    assert choose_opponents(V2, rated, without_gnugo, [], 3) == [UCT, V1, RANDOM]


def test_the_pool_is_random_the_anchors_that_can_play_and_past_champions(data_dir: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    from storage import registry
    from tests.helpers import register_tiny_nets

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert [p.name for p in pool(LadderSettings(size=5, anchors=("uct",), sims=7), data_dir)] == ["random", "uct-7"]
    monkeypatch.setenv("PATH", "")  # no GNU Go anywhere
    monkeypatch.setattr("gocore.play.gtp_client.GNUGO_FALLBACK", str(data_dir / "no-gnugo"))
    register_tiny_nets(data_dir, 3)  # version 1 champion, then 3; version 2 never was
    registry.promote("gozero-5x5", 3, "better", data=data_dir)
    found = pool(LadderSettings(size=5, anchors=("uct-100", "gnugo-1")), data_dir)
    assert found == [RANDOM, UCT, LadderPlayer("gozero-5x5/1", "models:/gozero-5x5/1"),
                     LadderPlayer("gozero-5x5/3", "models:/gozero-5x5/3")]


def test_match_ids_are_safe_names_and_begun_ladder_matches_are_found_again(tmp_path: Path):
    assert match_id("gozero-9x9/3", "gtp:gnugo --mode gtp", 9) == "ladder-9x9-gozero-9x9-3-vs-gtp-gnugo-mode-gtp"
    for opponent in (RANDOM, UCT):
        began = {"black": V2.spec, "white": opponent.spec, "ladder_a": V2.name, "ladder_b": opponent.name}
        matches.begin(tmp_path / "matches" / match_id(V2.name, opponent.name, 9), began)
    matches.begin(tmp_path / "matches" / match_id(V2.name, "random", 5), {"ladder_a": V2.name})  # another size
    assert met_opponents(V2, LadderSettings(size=9), tmp_path) == [RANDOM, UCT]
    assert met_opponents(V1, LadderSettings(size=9), tmp_path) == []
