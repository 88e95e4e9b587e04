"""`gocore.play.analysis_server`: the order of work (priority, batches, terminate) and the serve loop."""

from __future__ import annotations

import io
import json

from gocore.play.analysis_server import AnalysisServer
from tests.helpers import AreaEvaluator

SIZE = 5


class CountingEvaluator(AreaEvaluator):
    """Records how many positions each net call was given."""

    def __init__(self):
        self.calls: list[int] = []

    def evaluate(self, positions):
        self.calls.append(len(positions))
        return super().evaluate(positions)


def query(query_id: str, moves: list, **changes) -> str:
    return json.dumps({"id": query_id, "rules": "tromp-taylor", "komi": 0.5, "boardXSize": SIZE, "boardYSize": SIZE,
                       "moves": moves, "maxVisits": 8, **changes})


def server(evaluator=None, batch: int = 8) -> tuple[AnalysisServer, io.StringIO]:
    out = io.StringIO()
    return AnalysisServer(evaluator or AreaEvaluator(), SIZE, 4, "test", stdout=out, batch=batch), out


def lines(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_higher_priority_goes_first_then_arrival_order():
    engine, out = server(batch=1)
    for line in (query("a", []), query("b", [], priority=3), query("c", [["B", "C3"]]), query("d", [], priority=3)):
        engine.handle(line)
    while engine.step():
        pass
    assert [r["id"] for r in lines(out)] == ["b", "d", "a", "c"]


def test_turns_with_the_same_settings_are_searched_in_one_batch():
    evaluator = CountingEvaluator()
    engine, out = server(evaluator)
    engine.handle(query("game", [["B", "C3"], ["W", "B2"]], analyzeTurns=[0, 1, 2]))
    engine.handle(query("other", [], maxVisits=5))  # other visits: a batch of its own
    assert engine.step() and evaluator.calls[0] == 3  # the three roots in one net call
    assert [(r["id"], r["turnNumber"]) for r in lines(out)] == [("game", 0), ("game", 1), ("game", 2)]
    assert all(r["rootInfo"]["visits"] == 8 for r in lines(out))
    assert engine.step() and lines(out)[-1]["rootInfo"]["visits"] == 5 and not engine.step()


def test_terminate_with_turn_numbers_drops_only_those_turns():
    engine, out = server()
    engine.handle(query("game", [["B", "C3"], ["W", "B2"]], analyzeTurns=[0, 1, 2]))
    engine.handle(json.dumps({"id": "t", "action": "terminate", "terminateId": "game", "turnNumbers": [0, 2]}))
    while engine.step():
        pass
    ack, dropped_0, dropped_2, kept = lines(out)  # the action is echoed first, as KataGo does
    assert dropped_0["noResults"] and dropped_0["turnNumber"] == 0 and dropped_2["turnNumber"] == 2
    assert ack == {"id": "t", "action": "terminate", "terminateId": "game", "turnNumbers": [0, 2]}
    assert kept["turnNumber"] == 1 and kept["moveInfos"]


def test_serve_answers_everything_read_before_the_input_ends():
    engine, out = server()
    stdin = io.StringIO("\n".join([json.dumps({"id": "v", "action": "query_version"}), query("a", []),
                                   "[1, 2]", query("b", [["B", "pass"], ["W", "pass"]])]) + "\n")
    engine.serve(stdin)
    answers = {r.get("id"): r for r in lines(out)}
    assert answers["v"]["version"] and answers["a"]["rootInfo"]["visits"] == 8
    assert answers[None]["error"] == "a query must be a JSON object"
    assert answers["b"]["moveInfos"] == [] and answers["b"]["turnNumber"] == 2  # the game is over: nothing to search


def test_report_during_search_every_sends_partial_answers_before_the_final_one():
    engine, out = server()
    engine.handle(query("live", [], maxVisits=64, reportDuringSearchEvery=1e-6))
    engine.step()
    *partial, final = lines(out)
    assert partial and all(r["isDuringSearch"] is True for r in partial)
    visits = [r["rootInfo"]["visits"] for r in partial]
    assert visits == sorted(set(visits)) and visits[-1] < 64  # growing, chunk by chunk
    assert final["isDuringSearch"] is False and final["rootInfo"]["visits"] == 64
