"""KataGo's JSON analysis-engine protocol (docs/Analysis_Engine.md), pure part: a query line read as
the positions it asks about, and a searched position written as KataGo's response.

KaTrain drives KataGo this way (``katago analysis``: one JSON query per line on stdin, one JSON
response per analysed turn on stdout); `gocore.play.analysis_server` runs the loop and the search,
this module only translates. The numbers come from `gocore.search.analysis.analyse`, the one reader
of a search tree (GTP's ``kata-analyze`` formats the same `PositionAnalysis`).

Queries: ``id``, ``moves`` ([["B","D4"], ...], colours need not alternate), ``initialStones``,
``initialPlayer``, ``rules``, ``komi``, ``boardXSize`` / ``boardYSize`` (both the net's size),
``analyzeTurns`` (default: the last position only), ``maxVisits``, ``includeOwnership``,
``includeMovesOwnership``, ``includePolicy``, ``priority``, ``whiteHandicapBonus``,
``overrideSettings`` (``reportAnalysisWinratesAs``, ``maxTime``), ``reportDuringSearchEvery``
(partial answers with ``isDuringSearch: true`` before the final one). Fields we cannot honour are
answered with KataGo's ``{"id", "warning", "field"}`` line and the query goes on: rules gozero
cannot play (territory scoring, stone scoring, a button: `gocore.play.game_rules`; we analyse
them as area scoring), ``avoidMoves`` / ``allowMoves``, unknown override settings, and a
``maxVisits`` above `max_visits` (the tree memory one query may take: searched to that many).

Rules: an area-scoring name (``chinese``, ``aga``, ``new zealand``, ``tromp-taylor``, ...) or JSON
object is analysed as named, white's handicap compensation (``whiteHandicapBonus``, or the
rules' own) added to the komi of a game whose setup is handicap stones.

Perspective: ``reportAnalysisWinratesAs`` is ``BLACK`` unless the query overrides it (KataGo's
analysis_example.cfg sets BLACK, and KaTrain forces BLACK in every query's ``overrideSettings``):
win rate, LCB, utility, score lead and ownership (+1 = black's point) are Black's; ``WHITE`` and
``SIDETOMOVE`` are also accepted. Flipping a view maps a win rate w to 1 - w and the LCB l to 1 - l
(as KataGo does), and negates utilities, scores and ownership. The policy (the net's priors at the
root, -1 for illegal moves, N*N+1 long with pass last, rows from the top) has no perspective.

Root and move values are the search's averages (`gocore.search.analysis`): ``rootInfo``'s
win rate, utility and score lead over the whole tree, a move's over its subtree. Without a score
head ``scoreLead`` / ``scoreMean`` / ``scoreSelfplay`` / ``scoreStdev`` are 0.0: KaTrain reads
``scoreLead`` of every move unconditionally, so it must be there, and its "points lost" are then 0
(its win rates are right). Ownership (the root's, and each move's with ``includeMovesOwnership``)
is sent only when asked for and the net has an ownership head. A finished position (two passes)
is answered with the rules' result and no moves.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gocore.errors import GozeroError
from gocore.play.game_rules import TROMP_TAYLOR, GameRules, RulesError, effective_komi, parse_rules
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp, to_gtp
from gocore.search.analysis import PositionAnalysis

BLACK, WHITE = 1, -1
COLORS = {"B": BLACK, "W": WHITE}
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
KNOWN_SETTINGS = {"reportAnalysisWinratesAs", "maxTime", "wideRootNoise", "maxVisits"}
QUERY_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
                "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy", "includeMovesOwnership",
                "includeOwnershipStdev", "priority", "priorities", "overrideSettings", "reportDuringSearchEvery",
                "avoidMoves", "allowMoves", "whiteHandicapBonus", "includePVVisits", "analysisPVLen"}
VERSION = "1.15.3"  # the KataGo version we answer query_version with (its protocol as that release has it)


class QueryError(GozeroError):
    """A query we cannot analyse; `field` names the JSON field at fault, if one is."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class TurnRequest:
    """One turn of a query to search and answer."""

    id: str
    turn: int  # moves played before this position (KataGo's turnNumber)
    position: Position
    visits: int  # root visits to reach (maxVisits)
    max_time: float | None  # seconds, None: no limit
    report_every: float | None  # seconds between partial answers (isDuringSearch), None: only the final one
    priority: int
    perspective: str  # one of PERSPECTIVES
    include_ownership: bool
    include_policy: bool
    include_moves_ownership: bool = False


def parse_line(line: str) -> dict[str, Any]:
    """A query line as a JSON object; QueryError if it is not one."""
    try:
        query = json.loads(line)
    except json.JSONDecodeError as error:
        raise QueryError(f"could not parse JSON: {error}") from None
    if not isinstance(query, dict):
        raise QueryError("a query must be a JSON object")
    return query


def parse_query(query: dict[str, Any], size: int, default_visits: int,
                max_visits: int | None = None) -> tuple[list[TurnRequest], list[dict]]:
    """The turns an analysis query asks for, and its warning responses; QueryError if it cannot be run.
    `size`: the net's board size, the only one it analyses; `max_visits`: the most visits a turn
    may search (tree memory), None: no limit."""
    query_id = _text(query.get("id"), "id")
    warnings = [warning_response(query_id, message, field) for field, message in _unsupported(query)]
    for field in ("boardXSize", "boardYSize"):
        if _integer(query.get(field), field) != size:
            raise QueryError(f"this net analyses {size}x{size} boards only, not {field} {query.get(field)}", field)
    settings = _object(query.get("overrideSettings", {}), "overrideSettings")
    warnings += [warning_response(query_id, f"unknown setting {key} ignored", "overrideSettings")
                 for key in settings if key not in KNOWN_SETTINGS]
    perspective = settings.get("reportAnalysisWinratesAs", "BLACK")
    if perspective not in PERSPECTIVES:
        raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(PERSPECTIVES)}", "overrideSettings")
    rules, problem = query_rules(query)
    if problem is not None:
        warnings.append(warning_response(query_id, problem, "rules"))
    positions = game_positions(query, size, rules)
    turns = query.get("analyzeTurns", [len(positions) - 1])
    if not isinstance(turns, list) or not all(isinstance(t, int) and 0 <= t < len(positions) for t in turns):
        raise QueryError(f"analyzeTurns must be a list of turns in 0..{len(positions) - 1}", "analyzeTurns")
    visits = _integer(query.get("maxVisits", settings.get("maxVisits", default_visits)), "maxVisits")
    if visits < 1:
        raise QueryError("maxVisits must be at least 1", "maxVisits")
    if max_visits is not None and visits > max_visits:
        warnings.append(warning_response(query_id, f"maxVisits {visits} needs more tree memory than this engine "
                                         f"gives one query; searching {max_visits} visits", "maxVisits"))
        visits = max_visits
    max_time, every = settings.get("maxTime"), query.get("reportDuringSearchEvery")
    for value, name, field in ((max_time, "maxTime", "overrideSettings"),
                               (every, "reportDuringSearchEvery", "reportDuringSearchEvery")):
        if not (value is None or isinstance(value, int | float) and not isinstance(value, bool) and value > 0):
            raise QueryError(f"{name} must be a positive number of seconds", field)
    common = dict(id=query_id, visits=visits, max_time=None if max_time is None else float(max_time),
                  report_every=None if every is None else float(every),
                  priority=_integer(query.get("priority", 0), "priority"), perspective=perspective,
                  include_ownership=_flag(query, "includeOwnership"), include_policy=_flag(query, "includePolicy"),
                  include_moves_ownership=_flag(query, "includeMovesOwnership"))
    return [TurnRequest(turn=t, position=positions[t], **common) for t in turns], warnings


def query_rules(query: dict[str, Any]) -> tuple[GameRules, str | None]:
    """The query's rules (with its whiteHandicapBonus) and, if gozero cannot play them as named, the
    warning to give (they are then analysed as area scoring); QueryError for a bad whiteHandicapBonus."""
    try:
        rules = parse_rules(query["rules"]) if "rules" in query else TROMP_TAYLOR
    except RulesError as error:  # no rules we know: analysed as area scoring, with a warning
        return TROMP_TAYLOR, f"{error}: gozero scores by area (Tromp-Taylor counting) only; analysing with those"
    if "whiteHandicapBonus" in query:
        try:
            rules = rules.with_bonus(str(query["whiteHandicapBonus"]))
        except RulesError as error:
            raise QueryError(str(error), "whiteHandicapBonus") from None
    if rules.problem is None:
        return rules, None
    return rules, f"rules {rules.name}: {rules.problem}; analysing with area scoring (Tromp-Taylor counting)"


def game_positions(query: dict[str, Any], size: int, rules: GameRules = TROMP_TAYLOR) -> list[Position]:
    """The position before each move of the query's game and after the last one (len(moves) + 1),
    scored with the query's komi plus white's handicap compensation under `rules`."""
    stones = {BLACK: [], WHITE: []}
    for color, move in _moves(query.get("initialStones", []), size, "initialStones"):
        stones[color].append(move)
    moves = _moves(query.get("moves", []), size, "moves")
    first = query.get("initialPlayer", "B" if not moves or moves[0][0] == BLACK else "W")
    if str(first).upper() not in COLORS:
        raise QueryError(f"initialPlayer must be B or W, not {first!r}", "initialPlayer")
    komi = query.get("komi", 7.5)
    if isinstance(komi, bool) or not isinstance(komi, int | float) or not math.isfinite(komi):
        raise QueryError(f"komi must be a number, not {komi!r}", "komi")
    komi = effective_komi(float(komi), rules, stones[BLACK], stones[WHITE])
    try:
        position = Position.from_setup(size, stones[BLACK], stones[WHITE], COLORS[str(first).upper()], komi)
    except ValueError as error:
        raise QueryError(f"bad initialStones: {error}", "initialStones") from None
    positions = [position]
    for index, (color, move) in enumerate(moves):
        if not position.is_legal(move, color):
            raise QueryError(f"Illegal move {index}: {'B' if color == BLACK else 'W'} {to_gtp(move, size)}", "moves")
        position = position.play(move, color)
        positions.append(position)
    return positions


def format_response(request: TurnRequest, analysis: PositionAnalysis, policy: np.ndarray | None,
                    is_during_search: bool = False) -> dict[str, Any]:
    """KataGo's response to one turn: ``moveInfos`` best first, ``rootInfo``, and ``ownership`` /
    ``policy`` when asked for and available (`policy`: the root's priors, -1 where illegal);
    `is_during_search`: a partial answer, more will come."""
    position, size = analysis.position, analysis.position.size
    flip = is_flipped(request.perspective, position.to_play)
    root_score = _score(analysis.score_lead, flip)
    response = {
        "id": request.id, "turnNumber": request.turn, "isDuringSearch": is_during_search,
        "moveInfos": [{
            "move": to_gtp(m.move, size), "visits": m.visits, "order": m.order,
            "winrate": _rate(m.winrate, flip), "lcb": _rate(m.lcb, flip), "prior": round(m.prior, 6),
            "utility": _utility(m.winrate, flip), "utilityLcb": _utility(m.lcb, flip),
            **_scores(_score(m.score_lead, flip)), "pv": [to_gtp(move, size) for move in m.pv],
            **({"ownership": _ownership(m.ownership, flip)}
               if request.include_moves_ownership and m.ownership is not None else {}),
        } for m in analysis.moves],
        "rootInfo": {"winrate": _rate(analysis.winrate, flip), "utility": _utility(analysis.winrate, flip),
                     "visits": analysis.visits, "currentPlayer": "B" if position.to_play == BLACK else "W",
                     **_scores(root_score)},
    }
    if request.include_ownership and analysis.ownership is not None:
        response["ownership"] = _ownership(analysis.ownership, flip)
    if request.include_policy and policy is not None:
        response["policy"] = [round(float(p), 6) for p in policy]
    return response


def root_policy(prior: np.ndarray | None, illegal: np.ndarray | None) -> np.ndarray | None:
    """The policy KataGo reports: priors (N*N+1,), -1 at illegal moves; None if never evaluated."""
    if prior is None or illegal is None:
        return None
    return np.where(illegal == 0, prior, -1.0)


def is_flipped(perspective: str, to_play: int) -> bool:
    """Whether numbers from the side to move's view must be turned to the other side's for `perspective`."""
    return perspective == "BLACK" and to_play != BLACK or perspective == "WHITE" and to_play == BLACK


def no_results_response(query_id: str, turn: int) -> dict[str, Any]:
    """KataGo's answer for a turn terminated before it was searched."""
    return {"id": query_id, "turnNumber": turn, "isDuringSearch": False, "noResults": True}


def error_response(query_id: str | None, message: str, field: str | None = None) -> dict[str, Any]:
    """KataGo's ``{"id", "error", "field"}`` line (no id when the line had none we could read)."""
    response = {} if query_id is None else {"id": query_id}
    return {**response, "error": message, **({} if field is None else {"field": field})}


def warning_response(query_id: str, message: str, field: str) -> dict[str, Any]:
    """KataGo's ``{"id", "warning", "field"}`` line: the query runs, this part of it is ignored."""
    return {"id": query_id, "warning": message, "field": field}


def version_response(query: dict[str, Any], name: str) -> dict[str, Any]:
    """The answer to ``query_version``: the query echoed with KataGo's fields, our name in ``git_hash``."""
    return {**query, "version": VERSION, "git_hash": name}


def _unsupported(query: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) of every part of `query` we read but cannot honour, or do not know."""
    found = [(key, f"unknown field {key} ignored") for key in query if key not in QUERY_FIELDS and key != "action"]
    return found + [(key, f"{key} is not supported and ignored") for key in ("avoidMoves", "allowMoves") if key in query]


def _moves(items: object, size: int, field: str) -> list[tuple[int, int]]:
    if not isinstance(items, list):
        raise QueryError(f"{field} must be a list of [COLOR, VERTEX] pairs", field)
    moves = []
    for item in items:
        if not (isinstance(item, list) and len(item) == 2 and str(item[0]).upper() in COLORS
                and isinstance(item[1], str)):
            raise QueryError(f"{field}: {item!r} is not a [\"B\"|\"W\", VERTEX] pair", field)
        try:
            moves.append((COLORS[str(item[0]).upper()], from_gtp(item[1], size)))
        except GozeroError as error:
            raise QueryError(f"{field}: {error}", field) from None
    return moves


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise QueryError(f"{field} must be a string", field)
    return value


def _integer(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise QueryError(f"{field} must be an integer, not {value!r}", field)
    return int(value)


def _object(value: object, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise QueryError(f"{field} must be a JSON object", field)
    return value


def _flag(query: dict[str, Any], field: str) -> bool:
    value = query.get(field, False)
    if not isinstance(value, bool):
        raise QueryError(f"{field} must be true or false", field)
    return value


def _ownership(ownership: np.ndarray, flip: bool) -> list[float]:
    """Ownership (N*N,) from the side to move's view as the response's list, flipped if asked."""
    values = np.asarray(ownership, dtype=np.float64) * (-1.0 if flip else 1.0)  # (N*N,)
    return [round(float(v), 6) for v in values]


def _rate(fraction: float, flip: bool) -> float:
    return round(1.0 - fraction if flip else fraction, 6)


def _utility(fraction: float, flip: bool) -> float:
    return round((2.0 * fraction - 1.0) * (-1.0 if flip else 1.0), 6)


def _score(lead: float | None, flip: bool) -> float:
    return 0.0 if lead is None else round(-lead if flip else lead, 6)


def _scores(lead: float) -> dict[str, float]:
    return {"scoreLead": lead, "scoreMean": lead, "scoreSelfplay": lead, "scoreStdev": 0.0}

