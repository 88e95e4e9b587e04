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


class Session:
    """`serve` on pipes in a thread, as a GUI talks to it: `send` lines, `read` answers as they come."""

    def __init__(self, engine: AnalysisServer):
        import os
        import threading

        read_in, self._write_in = os.pipe()
        self._stdin = os.fdopen(read_in, "r")
        self._to_engine = os.fdopen(self._write_in, "w")
        self.thread = threading.Thread(target=engine.serve, args=(self._stdin,), daemon=True)
        self.thread.start()

    def send(self, *lines: str) -> None:
        self._to_engine.write("".join(line + "\n" for line in lines))
        self._to_engine.flush()

    def close(self) -> None:
        self._to_engine.close()
        self.thread.join(timeout=30)


class StreamOut(io.StringIO):
    """stdout that hands each written line to a queue, so a test can wait for answers."""

    def __init__(self):
        import queue

        super().__init__()
        self.lines: queue.Queue[dict] = queue.Queue()

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self.lines.put(json.loads(line))
        return super().write(text)

    def next(self, timeout: float = 30) -> dict:
        return self.lines.get(timeout=timeout)


def test_terminate_halts_the_query_being_searched_and_it_answers_with_what_it_has():
    out = StreamOut()
    engine = AnalysisServer(AreaEvaluator(), SIZE, 4, "test", stdout=out, max_visits=1_000_000)
    session = Session(engine)
    session.send(query("PONDER", [], maxVisits=10_000_000, reportDuringSearchEvery=0.05))
    while not out.next().get("isDuringSearch"):
        pass  # searching: partial answers come
    session.send(json.dumps({"id": "t", "action": "terminate", "terminateId": "PONDER"}),
                 query("next", [["B", "C3"]]), json.dumps({"id": "v", "action": "query_version"}))
    answers = {}
    while len(answers) < 4:
        answer = out.next()
        if not answer.get("isDuringSearch"):
            answers[answer["id"]] = answer
    assert answers["t"] == {"id": "t", "action": "terminate", "terminateId": "PONDER"}
    halted = answers["PONDER"]
    assert halted["isDuringSearch"] is False and 1 < halted["rootInfo"]["visits"] < 10_000_000 and halted["moveInfos"]
    assert answers["next"]["rootInfo"]["visits"] == 8 and answers["v"]["action"] == "query_version"
    session.close()
    assert not session.thread.is_alive()


def test_query_version_is_answered_while_a_search_runs():
    out = StreamOut()
    engine = AnalysisServer(AreaEvaluator(), SIZE, 4, "test", stdout=out)
    session = Session(engine)
    session.send(query("long", [], maxVisits=5_000, reportDuringSearchEvery=0.05))
    assert out.next()["isDuringSearch"]
    session.send(json.dumps({"id": "v", "action": "query_version"}), json.dumps({"id": "c", "action": "clear_cache"}))
    replies = []
    while len(replies) < 2:
        answer = out.next()
        assert answer["id"] != "long" or answer["isDuringSearch"]  # still searching when the replies come
        replies += [answer["id"]] if "action" in answer else []
    assert replies == ["v", "c"]
    session.send(json.dumps({"id": "stop", "action": "terminate_all"}))
    while (answer := out.next())["id"] != "long" or answer["isDuringSearch"]:
        pass
    assert answer["rootInfo"]["visits"] < 5_000
    session.close()


def test_max_visits_beyond_the_tree_memory_is_searched_to_the_cap_with_a_warning():
    engine, out = server()
    engine.max_visits = 24
    engine.handle(query("ponder", [], maxVisits=10_000_000))
    engine.handle(query("a", [["B", "C3"]], maxVisits=12, analyzeTurns=[0, 1]))
    while engine.step():
        pass
    warning, answer, first, second = lines(out)
    assert warning["field"] == "maxVisits" and "searching 24 visits" in warning["warning"]
    assert answer["rootInfo"]["visits"] == 24 and first["rootInfo"]["visits"] == second["rootInfo"]["visits"] == 12


def test_a_batch_never_holds_more_visits_than_the_cap():
    evaluator = CountingEvaluator()
    engine, out = server(evaluator)
    engine.max_visits = 16
    engine.handle(query("game", [["B", "C3"], ["W", "B2"]], analyzeTurns=[0, 1, 2]))  # 8 visits each
    engine.step()
    assert len(lines(out)) == 2 and evaluator.calls[0] == 2  # two roots fit, the third waits
    assert engine.step() and len(lines(out)) == 3


def test_moves_ownership_and_search_averaged_scores_with_heads():
    from tests.gocore.search.test_analysis import AreaHeadsEvaluator

    engine, out = server(AreaHeadsEvaluator())
    engine.handle(query("own", [["B", "C3"], ["W", "C2"]], maxVisits=40, includeOwnership=True,
                        includeMovesOwnership=True))
    engine.step()
    (answer,) = lines(out)
    infos = answer["moveInfos"]
    assert all(len(m["ownership"]) == SIZE * SIZE for m in infos) and len(answer["ownership"]) == SIZE * SIZE
    root_heads = 1.5 - 0.5  # black's area lead minus komi: what the heads say of the root alone
    assert answer["rootInfo"]["scoreLead"] != root_heads  # the search's average, not that reading
    plain, out_plain = server(AreaHeadsEvaluator())
    plain.handle(query("plain", [["B", "C3"], ["W", "C2"]], maxVisits=40, includeOwnership=True))
    plain.step()
    assert all("ownership" not in m for m in lines(out_plain)[0]["moveInfos"])


def test_a_finished_game_is_answered_with_its_result():
    engine, out = server()
    engine.handle(query("end", [["B", "C3"], ["W", "pass"], ["B", "pass"]], komi=0.5, includeOwnership=True))
    engine.step()
    (answer,) = lines(out)
    assert answer["moveInfos"] == [] and answer["rootInfo"]["winrate"] == 1.0  # black's view: black won
    assert answer["rootInfo"]["scoreLead"] == 24.5 and answer["rootInfo"]["visits"] == 1
