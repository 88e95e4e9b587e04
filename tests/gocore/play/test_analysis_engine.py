"""`gocore.play.analysis_engine`: KataGo analysis-engine queries read as positions, searches written
as KataGo's responses (coordinates, perspective, ownership, policy)."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.play.analysis_engine import (
    QueryError,
    TurnRequest,
    format_response,
    parse_query,
    root_policy,
)
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp
from gocore.search import mcts
from gocore.search.analysis import MoveAnalysis, PositionAnalysis, analyse
from tests.gocore.search.test_analysis import AreaHeadsEvaluator


def katrain_query(size: int = 9, **changes) -> dict:
    """A query with the fields KaTrain's `KataGoEngine.request_analysis` sends."""
    query = {"id": "QUERY:1", "rules": "japanese", "priority": 0, "analyzeTurns": [3], "maxVisits": 16,
             "komi": 6.5, "boardXSize": size, "boardYSize": size, "includeOwnership": True,
             "includeMovesOwnership": True, "includePolicy": True, "initialStones": [["B", "C3"]],
             "initialPlayer": "W", "moves": [["W", "E5"], ["B", "D4"], ["W", "pass"]],
             "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "maxTime": 8.0}, "reportDuringSearchEvery": 0.5}
    return {**query, **changes}


def request(position: Position, perspective: str = "BLACK", **changes) -> TurnRequest:
    values = dict(id="q", turn=0, position=position, visits=8, max_time=None, report_every=None, priority=0,
                  perspective=perspective,
                  include_ownership=True, include_policy=True)
    return TurnRequest(**{**values, **changes})


def test_a_katrain_query_gives_the_position_of_each_analysed_turn_and_warns_of_what_is_ignored():
    turns, warnings = parse_query(katrain_query(analyzeTurns=[0, 3]), 9, 100)
    assert [t.turn for t in turns] == [0, 3] and all(t.visits == 16 and t.max_time == 8.0 for t in turns)
    assert all(t.report_every == 0.5 and t.include_ownership and t.include_policy for t in turns)
    start, last = turns[0].position, turns[1].position
    assert start.to_play == -1 and start.komi == 6.5 and start.stones.ravel()[from_gtp("C3", 9)] == 1
    assert last.stones.ravel()[from_gtp("E5", 9)] == -1 and last.stones.ravel()[from_gtp("D4", 9)] == 1
    assert last.to_play == 1 and last.passes == 1
    assert {w["field"] for w in warnings} == {"rules"}  # japanese: territory scoring, analysed by area
    assert all(t.include_moves_ownership for t in turns)
    assert all(w["id"] == "QUERY:1" and "warning" in w for w in warnings)
    default, _ = parse_query(katrain_query(analyzeTurns=None) | {"analyzeTurns": [1]}, 9, 100)
    without_turns = {k: v for k, v in katrain_query().items() if k not in ("analyzeTurns", "maxVisits")}
    (only,), _ = parse_query(without_turns, 9, 100)
    assert default[0].turn == 1 and only.turn == 3 and only.visits == 100  # the last position, --visits


@pytest.mark.parametrize(("changes", "field", "match"), [
    ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves", "Illegal move 1: W E5"),
    ({"boardXSize": 19, "boardYSize": 19}, "boardXSize", "9x9 boards only"),
    ({"moves": [["B", "Z9"]]}, "moves", "Z9"),
    ({"analyzeTurns": [7]}, "analyzeTurns", "0..3"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "RED"}}, "overrideSettings", "BLACK"),
    ({"id": 5}, "id", "string"),
    ({"komi": "six"}, "komi", "number"),
    ({"reportDuringSearchEvery": 0}, "reportDuringSearchEvery", "positive"),
    ({"overrideSettings": {"maxTime": -1}}, "overrideSettings", "maxTime must be a positive"),
])
def test_a_query_that_cannot_run_names_its_field(changes, field, match):
    with pytest.raises(QueryError, match=match) as error:
        parse_query(katrain_query(**changes), 9, 100)
    assert error.value.field == field


@pytest.mark.parametrize(("size", "corners"), [(9, ("A9", "J1")), (19, ("A19", "T1"))])
def test_moves_and_principal_variations_are_gtp_vertices(size, corners):
    top_left, bottom_right, last = 0, size * size - 1, size * size
    position = Position.initial(size)
    moves = (MoveAnalysis(top_left, 5, 0.6, 0.3, 0.5, 0, (top_left, bottom_right, last)),
             MoveAnalysis(last, 2, 0.4, 0.1, 0.2, 1, (last,)))
    response = format_response(request(position), PositionAnalysis(position, 8, 0.55, moves), None)
    assert [m["move"] for m in response["moveInfos"]] == [corners[0], "pass"]
    assert response["moveInfos"][0]["pv"] == [*corners, "pass"]
    assert response["rootInfo"]["currentPlayer"] == "B" and "policy" not in response


@pytest.mark.parametrize(("perspective", "to_play", "flipped"), [
    ("BLACK", 1, False), ("BLACK", -1, True), ("WHITE", 1, True), ("WHITE", -1, False),
    ("SIDETOMOVE", 1, False), ("SIDETOMOVE", -1, False)])
def test_numbers_are_turned_to_the_requested_perspective(perspective, to_play, flipped):
    position = Position.from_setup(5, [], [], to_play)
    move = MoveAnalysis(12, 9, 0.7, 0.2, 0.6, 0, (12,), score_lead=3.5)
    ownership = np.linspace(-1, 1, 25)
    analysis = PositionAnalysis(position, 10, 0.65, (move,), score_lead=2.0, ownership=ownership)
    response = format_response(request(position, perspective), analysis, None)
    sign = -1 if flipped else 1
    info, root = response["moveInfos"][0], response["rootInfo"]
    assert info["winrate"] == pytest.approx(0.3 if flipped else 0.7)
    assert info["lcb"] == pytest.approx(0.4 if flipped else 0.6)
    assert info["utility"] == pytest.approx(sign * 0.4) and info["prior"] == pytest.approx(0.2)
    assert info["scoreLead"] == info["scoreMean"] == pytest.approx(sign * 3.5)
    assert root["winrate"] == pytest.approx(0.35 if flipped else 0.65) and root["scoreLead"] == pytest.approx(sign * 2.0)
    assert response["ownership"] == pytest.approx(list(sign * ownership), abs=1e-6)


def test_a_searched_root_with_heads_gives_ownership_policy_and_scores_as_black_sees_them():
    evaluator = AreaHeadsEvaluator()
    position = Position.from_setup(5, [6, 7], [17], to_play=-1, komi=0.5)  # white to move
    search = mcts.BatchedSearch(evaluator, mcts.MATCH.replace(sims=24), [position], seed=0)
    search.search()
    root = search.roots[0]
    analysis = analyse(root, evaluator)
    response = format_response(request(position), analysis, root_policy(root.prior, root.illegal))
    assert response["ownership"] == pytest.approx(list(position.stones.ravel().astype(float)))  # +1 = black
    assert response["rootInfo"]["scoreLead"] == pytest.approx(position.score())  # black's lead
    assert response["rootInfo"]["visits"] == 24  # the root's own evaluation counts
    policy = response["policy"]
    assert len(policy) == 26 and all(policy[m] == -1 for m in (6, 7, 17))
    assert sum(p for p in policy if p >= 0) == pytest.approx(1.0, abs=1e-4)
    assert sum(m["visits"] for m in response["moveInfos"]) == 23
    no_heads = format_response(request(position), analyse(root), None)
    assert "ownership" not in no_heads and no_heads["rootInfo"]["scoreLead"] == 0.0
    asked_not = format_response(request(position, include_ownership=False), analysis, None)
    assert "ownership" not in asked_not
