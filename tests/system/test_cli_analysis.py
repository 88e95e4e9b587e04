"""`gozero analysis` as KaTrain runs it: a subprocess fed KaTrain's queries on stdin, every answer one
JSON line on stdout, read field by field the way katrain/core/engine.py and game_node.py read them."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import pytest

ANALYSIS = [sys.executable, "-m", "flows.cli", "analysis"]
SIZE = 9
TREE_MB = 30  # --tree-memory: about 2,770 visits of a 9x9 tree


def katrain_query(query_id: str, moves: list, visits: int = 16, **changes) -> dict:
    """What KaTrain's `KataGoEngine.request_analysis` sends for a node (ownership on, no refine move)."""
    return {"rules": "japanese", "priority": 0, "analyzeTurns": [len(moves)], "maxVisits": visits, "komi": 6.5,
            "boardXSize": SIZE, "boardYSize": SIZE, "includeOwnership": True, "includeMovesOwnership": True,
            "includePolicy": True, "initialStones": [], "initialPlayer": "B", "moves": moves,
            "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "maxTime": 8.0},
            "reportDuringSearchEvery": 0.5, "id": query_id, **changes}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """A running `gozero analysis` on a tiny 9x9 net with ownership and score heads."""
    from gocore.nn.nets import build_net, preset
    from storage.checkpoints import save_model

    config = preset("tiny", SIZE, 17, encoder="agz17", aux_heads=True)
    model_dir = save_model(tmp_path_factory.mktemp("model") / "tiny", build_net(config), dataclasses.asdict(config))
    process = subprocess.Popen(ANALYSIS + ["--model", str(model_dir), "--threads", "1", "--tree-memory", str(TREE_MB)],
                               stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    yield process
    process.stdin.close()
    assert process.wait(timeout=60) == 0


def send(process, *queries) -> None:
    process.stdin.write("".join((q if isinstance(q, str) else json.dumps(q)) + "\n" for q in queries))
    process.stdin.flush()


def answers(process, count: int) -> list[dict]:
    """The next `count` lines, partial results (isDuringSearch) left out after checking their id."""
    found = []
    while len(found) < count:
        answer = json.loads(process.stdout.readline())
        if answer.get("isDuringSearch"):
            assert answer["moveInfos"] and answer["rootInfo"]["visits"] >= 1
        else:
            found.append(answer)
    return found


def test_query_version_is_answered_as_katago_does(engine):
    send(engine, {"id": "v", "action": "query_version"})
    (version,) = answers(engine, 1)
    assert version["id"] == "v" and version["action"] == "query_version"
    assert tuple(int(part) for part in version["version"].split(".")) >= (1, 9)


def test_a_katrain_query_is_answered_with_the_fields_katrain_reads(engine):
    moves = [["B", "E5"], ["W", "C3"], ["B", "pass"]]
    send(engine, katrain_query("QUERY:1", moves))
    warning, result = answers(engine, 2)
    assert warning["field"] == "rules" and "territory" in warning["warning"]  # japanese: logged by KaTrain, not an error
    assert result["id"] == "QUERY:1" and result["turnNumber"] == 3 and result["isDuringSearch"] is False
    assert "error" not in result and "noResults" not in result
    root = result["rootInfo"]
    assert isinstance(root["winrate"], float) and 0 <= root["winrate"] <= 1
    assert isinstance(root["scoreLead"], float) and root["visits"] == 16 and root["currentPlayer"] == "W"
    infos = result["moveInfos"]
    assert [m["order"] for m in infos] == list(range(len(infos))) and sum(m["visits"] for m in infos) == 15
    for info in infos:
        assert isinstance(info["move"], str) and info["pv"][0] == info["move"]
        assert all(isinstance(v, str) for v in info["pv"]) and isinstance(info["visits"], int)
        assert all(isinstance(info[k], float) for k in ("winrate", "scoreLead", "prior", "lcb", "utility"))
    assert "E5" not in {m["move"] for m in infos} and len(result["policy"]) == SIZE * SIZE + 1
    assert result["policy"][40] == -1 and result["policy"][-1] >= 0  # E5 is taken; pass is legal
    assert len(result["ownership"]) == SIZE * SIZE and all(-1 <= v <= 1 for v in result["ownership"])
    assert all(len(m["ownership"]) == SIZE * SIZE for m in infos)  # per-move ownership: KaTrain's ai:simple reads it


def test_bad_lines_get_error_responses_and_the_engine_reads_on(engine):
    send(engine, "this is not json", katrain_query("QUERY:2", [["B", "E5"], ["W", "E5"]]),
         katrain_query("QUERY:3", [], boardXSize=19, boardYSize=19), {"id": "u", "action": "fly"},
         {"id": "v", "action": "query_version"})
    garbage, illegal, *rest = answers(engine, 5)
    assert "error" in garbage and "id" not in garbage
    assert illegal["id"] == "QUERY:2" and "Illegal move" in illegal["error"]  # what KaTrain's sweep looks for
    assert rest[0]["id"] == "QUERY:3" and rest[0]["field"] == "boardXSize"
    assert rest[1]["id"] == "u" and rest[1]["field"] == "action" and rest[2]["action"] == "query_version"


def test_terminate_drops_a_pending_query_and_terminate_all_is_acknowledged(engine):
    send(engine, katrain_query("slow", [], visits=600, rules="chinese", includeMovesOwnership=False),
         katrain_query("doomed", [["B", "D4"]], visits=17, rules="chinese", includeMovesOwnership=False),
         {"id": "t", "action": "terminate", "terminateId": "doomed"})
    replies = {(r["id"], r.get("action")): r for r in answers(engine, 3)}
    assert replies["slow", None]["rootInfo"]["visits"] == 600
    assert replies["doomed", None] == {"id": "doomed", "turnNumber": 1, "isDuringSearch": False, "noResults": True}
    assert replies["t", "terminate"]["terminateId"] == "doomed"
    send(engine, {"id": "all", "action": "terminate_all"}, {"id": "c", "action": "clear_cache"})
    assert answers(engine, 2) == [{"id": "all", "action": "terminate_all"}, {"id": "c", "action": "clear_cache"}]


def test_a_missing_model_is_one_line_on_stderr_and_exit_code_1(tmp_path):
    session = subprocess.run(ANALYSIS + ["--model", str(tmp_path / "nothing")], input="", capture_output=True,
                             text=True, timeout=120)
    assert session.returncode == 1 and session.stdout == ""
    assert session.stderr.startswith("error: ") and session.stderr.count("\n") == 1, session.stderr


def ponder_query(query_id: str, moves: list) -> dict:
    """KaTrain's pondering query: 10,000,000 visits, a partial answer every 0.25 s, no maxTime."""
    return katrain_query(query_id, moves, visits=10_000_000, rules="chinese", reportDuringSearchEvery=0.25,
                         overrideSettings={"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.0})


def resident_mb(process) -> float:
    with open(f"/proc/{process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def test_katrain_pondering_is_terminated_and_the_next_query_answered_within_a_second(engine):
    send(engine, ponder_query("PONDER", [["B", "E5"]]))
    warning = json.loads(engine.stdout.readline())
    assert warning["id"] == "PONDER" and warning["field"] == "maxVisits"  # capped to the tree memory
    while not json.loads(engine.stdout.readline()).get("isDuringSearch"):
        pass
    started = time.monotonic()
    send(engine, {"id": "T", "action": "terminate", "terminateId": "PONDER"},
         katrain_query("QUERY:next", [["B", "E5"], ["W", "C3"]], rules="chinese"), {"id": "V", "action": "query_version"})
    arrived = {}
    while len(arrived) < 4:
        answer = json.loads(engine.stdout.readline())
        if not answer.get("isDuringSearch"):
            arrived[answer["id"]] = (time.monotonic() - started, answer)
    assert max(seconds for seconds, _ in arrived.values()) < 1.0, {k: round(v[0], 3) for k, v in arrived.items()}
    halted = arrived["PONDER"][1]
    assert halted["isDuringSearch"] is False and halted["moveInfos"] and halted["rootInfo"]["visits"] > 16
    assert arrived["QUERY:next"][1]["rootInfo"]["visits"] == 16 and arrived["V"][1]["action"] == "query_version"


def test_a_ponder_nobody_terminates_stops_at_the_tree_memory_it_may_use(engine):
    send(engine, katrain_query("WARM", []))  # the net loads at the first query: measure from a loaded engine
    while "moveInfos" not in (answer := answers(engine, 1)[0]):  # its warnings first (japanese rules)
        assert answer["id"] == "WARM" and "warning" in answer
    before = resident_mb(engine)
    send(engine, ponder_query("PONDER:2", []))
    warning, final = answers(engine, 2)
    assert "maxVisits" in warning["field"] and final["id"] == "PONDER:2"
    cap = final["rootInfo"]["visits"]
    assert 2_000 < cap < 10_000 and sum(m["visits"] for m in final["moveInfos"]) == cap - 1
    assert resident_mb(engine) - before < 3 * TREE_MB  # the tree (freed once answered) and the net's work space
