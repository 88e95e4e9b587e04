"""GTP analysis in-process: lz-analyze / kata-analyze requests, the exact info line formats, pondering
until the next line, the genmove forms, and which engines offer them."""

from __future__ import annotations

import os
import re
import threading
import time

import numpy as np
import pytest

from gocore.nn.inference import AuxEvaluation, NetEvaluator
from gocore.nn.nets import NetConfig, build_net
from gocore.play.gtp import GtpEngine
from gocore.play.gtp_analysis import AnalysisRequest, format_line, parse_request
from gocore.play.gtp_protocol import GtpFailure
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp
from gocore.search import mcts
from gocore.search.agents import AlphaZeroAgent, RandomAgent
from gocore.search.analysis import analyse

SIZE = 9
ANALYSIS_COMMANDS = ("lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze")
VERTEX = r"(?:[A-HJ-T](?:[1-9]|1[0-9])|pass)"
LZ_INFO = rf"info move {VERTEX} visits \d+ winrate \d+ prior \d+ lcb \d+ order \d+ pv {VERTEX}(?: {VERTEX})*"
FLOAT = r"-?\d+\.\d{6}"  # always a decimal point: Sabaki reads a winrate without one as 10000ths
KATA_INFO = (rf"info move {VERTEX} visits \d+ utility {FLOAT} winrate {FLOAT}(?: scoreMean {FLOAT} scoreLead {FLOAT})? "
             rf"prior {FLOAT} lcb {FLOAT} utilityLcb {FLOAT} order \d+ pv {VERTEX}(?: {VERTEX})*")


@pytest.fixture(scope="module")
def evaluator() -> NetEvaluator:
    torch_seed = 0
    import torch

    torch.manual_seed(torch_seed)
    config = NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    return NetEvaluator(build_net(config))


def net_engine(evaluator, sims: int = 24, **kwargs) -> GtpEngine:
    agent = AlphaZeroAgent(evaluator, mcts.MATCH.replace(sims=sims), seed=0)
    return GtpEngine(agent, sizes={SIZE}, **kwargs)


def infos(line: str) -> list[str]:
    return ["info " + part.strip() for part in line.split("info ")[1:]]


def test_parse_request_reads_color_interval_and_options():
    assert parse_request("lz", ["b", "50"]) == AnalysisRequest("lz", color=1, interval=0.5)
    assert parse_request("kata", ["25", "minmoves", "3", "maxmoves", "5", "ownership", "true"]) == \
        AnalysisRequest("kata", interval=0.25, min_moves=3, max_moves=5, ownership=True)
    assert parse_request("lz", ["W", "interval", "10"]) == AnalysisRequest("lz", color=-1, interval=0.1)
    assert parse_request("lz", []) == AnalysisRequest("lz")
    for words in (["interval"], ["avoid", "b", "D4", "1"], ["minmoves", "x"], ["ownership", "maybe"]):
        with pytest.raises(GtpFailure, match="syntax error"):
            parse_request("kata", words)


def test_lz_and_kata_lines_have_the_exact_formats(evaluator):
    search = mcts.BatchedSearch(evaluator, mcts.MATCH.replace(sims=40), [Position.initial(SIZE)], seed=0)
    search.search()
    analysis = analyse(search.roots[0])
    lz = format_line(analysis, AnalysisRequest("lz"))
    kata = format_line(analysis, AnalysisRequest("kata", ownership=True))  # no ownership head: none written
    assert lz.endswith("\n") and kata.endswith("\n") and "\n" not in lz[:-1] + kata[:-1]
    assert re.fullmatch(rf"{LZ_INFO}(?: {LZ_INFO})*\n", lz), lz
    assert re.fullmatch(rf"{KATA_INFO}(?: {KATA_INFO})*\n", kata), kata
    assert "scoreLead" not in kata and "ownership" not in kata
    first = infos(lz)[0].split()
    best = analysis.best
    assert first[first.index("winrate") + 1] == str(round(best.winrate * 10000))
    assert first[first.index("visits") + 1] == str(best.visits)
    assert first[first.index("order") + 1] == "0"
    words = infos(kata)[0].split()
    assert float(words[words.index("winrate") + 1]) == pytest.approx(best.winrate, abs=1e-6)
    assert float(words[words.index("prior") + 1]) == pytest.approx(best.prior, abs=1e-6)


def test_kata_lines_carry_score_and_ownership_when_the_net_has_those_heads(evaluator):
    search = mcts.BatchedSearch(evaluator, mcts.MATCH.replace(sims=16), [Position.initial(SIZE)], seed=0)
    search.search()

    class WithHeads:  # the evaluator's hook, fed with fixed numbers to see where they land
        has_score = has_ownership = True

        def evaluate_aux(self, positions):
            return AuxEvaluation(None, None, ownership=np.full((len(positions), SIZE * SIZE), -0.25),
                                 score=np.full(len(positions), 2.5))

    line = format_line(analyse(search.roots[0], WithHeads()), AnalysisRequest("kata", ownership=True))
    body, ownership = line.rstrip("\n").split(" ownership ")
    assert re.fullmatch(rf"{KATA_INFO}(?: {KATA_INFO})*", body)
    assert "scoreLead -2.500000" in body  # the position after the move: the opponent's 2.5 points
    assert [float(v) for v in ownership.split()] == [-0.25] * SIZE * SIZE


def test_analysis_commands_are_offered_only_by_engines_with_a_search_tree(evaluator):
    ours, random = net_engine(evaluator), GtpEngine(RandomAgent(seed=0))
    listed = ours.handle("list_commands").removeprefix("= ").split()
    assert set(ANALYSIS_COMMANDS) <= set(listed)
    for name in ANALYSIS_COMMANDS:
        assert ours.handle(f"known_command {name}") == "= true\n\n"
        assert random.handle(f"known_command {name}") == "= false\n\n"
        assert random.handle(f"{name} b 10") == "? unknown command\n\n"
    assert not set(ANALYSIS_COMMANDS) & set(random.handle("list_commands").split())
    assert ours.handle("boardsize 13") == "? unacceptable size\n\n"  # the net plays 9x9 only


def test_analyze_streams_lines_until_the_next_line_arrives(evaluator):
    engine = net_engine(evaluator)
    engine.handle("play b E5")
    checks = iter([False] * 12 + [True])  # the next command comes after 12 looks, 11 ms apart
    pieces = list(engine.respond("7 kata-analyze 1", lambda seconds: (time.sleep(0.011), next(checks))[1]))
    assert pieces[0] == "=7\n" and pieces[-1] == "\n"
    lines = pieces[1:-1]
    assert len(lines) >= 2 and all(re.fullmatch(rf"{KATA_INFO}(?: {KATA_INFO})*\n", x) for x in lines)
    visits = [sum(int(i.split()[4]) for i in infos(x)) for x in lines]
    assert visits == sorted(visits) and visits[-1] > visits[0]  # the search went on between lines
    for info in infos(lines[-1]):  # white's candidate moves: legal after E5
        assert engine.position.is_legal(from_gtp(info.split()[2], SIZE))
    assert engine.moves == ((1, from_gtp("E5", SIZE)),)  # analysis plays nothing


def test_pondering_rests_once_the_root_has_the_ponder_limits_visits(evaluator):
    engine = net_engine(evaluator, ponder_limit=100)
    looks = []

    def has_input(seconds: float) -> bool:
        looks.append(seconds)
        return len(looks) > 40  # the next command comes after 40 looks

    for command_id in (1, 2):  # a GUI asking again about the same position: the kept tree counts
        looks.clear()
        pieces = list(engine.respond(f"{command_id} lz-analyze 1", has_input))
        visits = sum(int(info.split()[4]) for info in infos(pieces[-2]))
        assert 100 - 1 <= visits < 100 + 16  # the root's own evaluation is not a move's visit
        assert 1.0 in looks  # it waited for the next command without searching
    assert pieces[0] == "=2\n" and pieces[-1] == "\n"


def test_genmove_analyze_streams_then_plays_its_move(evaluator):
    engine = net_engine(evaluator, sims=32)
    response = engine.handle("3 lz-genmove_analyze b 1")
    assert response.endswith("\n\n")
    head, *lines, play = response[:-2].split("\n")
    assert head == "=3" and play.startswith("play ")
    assert lines and all(re.fullmatch(rf"{LZ_INFO}(?: {LZ_INFO})*", x) for x in lines)
    move = from_gtp(play.split()[1], SIZE)
    assert engine.moves == ((1, move),)
    visits = {info.split()[2]: int(info.split()[4]) for info in infos(lines[-1])}
    assert visits[play.split()[1]] == max(visits.values())  # it plays a move the last line ranks first
    assert engine.handle("lz-genmove_analyze") == "? syntax error: usage: lz-genmove_analyze COLOR [INTERVAL] [KEY VALUE]...\n\n"


def test_serve_ponders_until_the_next_command_and_then_answers_it(evaluator):
    read_end, write_end = os.pipe()
    engine = net_engine(evaluator)
    output = []

    class Out:
        def write(self, text: str) -> None:
            output.append((time.monotonic(), text))

        def flush(self) -> None:
            pass

    with os.fdopen(read_end, "r") as stdin, os.fdopen(write_end, "w") as feed:
        server = threading.Thread(target=engine.serve, args=(stdin, Out()))
        server.start()
        feed.write("1 lz-analyze 5\n")
        feed.flush()
        time.sleep(0.8)
        sent = time.monotonic()
        feed.write("2 name\nquit\n")
        feed.flush()
        server.join(timeout=10)
    assert not server.is_alive()
    text = "".join(piece for _, piece in output)
    analysis, rest = text.split("\n\n", 1)
    assert analysis.startswith("=1\ninfo move ") and len(analysis.split("\n")) >= 3
    assert rest == "=2 gozero\n\n= \n\n"
    answered = next(t for t, piece in output if piece.startswith("=2"))
    assert answered - sent < 1.0  # the search stopped within a chunk or so, not at its limit


def test_a_failing_analysis_ends_its_response_and_the_session_goes_on(evaluator):
    class BrokenAgent(AlphaZeroAgent):
        def analyse(self, position, sims):
            raise RuntimeError("a bug")

    engine = GtpEngine(BrokenAgent(evaluator, mcts.MATCH.replace(sims=8)), sizes={SIZE})
    assert engine.handle("5 kata-analyze 10") == "=5\n\n"
    assert engine.handle("name") == "= gozero\n\n"


def test_an_analysis_whose_next_command_is_already_waiting_still_gets_an_info_line(evaluator):
    engine = net_engine(evaluator)  # as when a GUI's commands queued up while the net was loading
    for command in ("lz-analyze 10", "kata-analyze B interval 10"):
        head, *lines, end = engine.respond(command, lambda seconds: True)
        assert head == "=\n" and end == "\n" and len(lines) == 1 and infos(lines[0])


def test_a_ponder_rests_at_the_same_tree_memory_on_every_board():
    from gocore.play.gtp_analysis import PONDER_LIMIT, ponder_limit, tree_bytes_per_visit

    assert ponder_limit(9) == PONDER_LIMIT == 20_000
    assert ponder_limit(19) < ponder_limit(13) < ponder_limit(9) < ponder_limit(5)
    for size in (5, 13, 19):
        memory = ponder_limit(size) * tree_bytes_per_visit(size)
        assert abs(memory - PONDER_LIMIT * tree_bytes_per_visit(9)) < tree_bytes_per_visit(size)
    from flows.cli.gtp import PONDER_HELP  # the help's figures are these

    assert f"{ponder_limit(13):,} on 13x13" in PONDER_HELP and f"{ponder_limit(19):,} on 19x19" in PONDER_HELP
