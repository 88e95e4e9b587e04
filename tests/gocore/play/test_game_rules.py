"""`gocore.play.game_rules`: the rules GUIs name, read as what gozero plays, and white's handicap points."""

from __future__ import annotations

import pytest

from gocore.play.analysis_engine import QueryError, parse_query
from gocore.play.game_rules import RulesError, effective_komi, handicap_stones, parse_rules
from tests.gocore.play.test_analysis_engine import katrain_query


@pytest.mark.parametrize(("rules", "bonus"), [
    ("chinese", "N"), ("Chinese-OGS", "N"), ("aga", "N-1"), ("BGA", "N-1"), ("new zealand", "0"), ("nz", "0"),
    ("New_Zealand", "0"), ("tromp-taylor", "0"), ("TrompTaylor", "0"), ("ing", "0"),
    ('{"scoring":"AREA","whiteHandicapBonus":"N-1"}', "N-1"), ({"score": "AREA"}, "0"),
    ({"koRule": "KO_POSITIONAL", "scoringRule": "SCORING_AREA", "multiStoneSuicideLegal": False,
      "whiteHandicapBonusRule": "WHB_N"}, "N"),
])
def test_area_rules_are_played_with_their_handicap_compensation(rules, bonus):
    parsed = parse_rules(rules)
    assert parsed.problem is None and parsed.handicap_bonus == bonus


@pytest.mark.parametrize(("rules", "reason"), [
    ("japanese", "territory"), ("korean", "territory"), ("stone_scoring", "stone scoring"),
    ("aga-button", "button"), ({"scoring": "TERRITORY"}, "territory"), ({"scoringRule": "SCORING_TERRITORY"}, "territory"),
    ({"scoring": "AREA", "tax": "ALL"}, "tax"), ({"scoring": "AREA", "hasButton": True}, "button"),
])
def test_rules_gozero_cannot_play_say_why(rules, reason):
    assert reason in parse_rules(rules).problem


@pytest.mark.parametrize("rules", ["go-moku", "", 7, '{"scoring": ', {"scoring": "AREA", "colour": "red"},
                                   {"whiteHandicapBonus": "N+1"}])
def test_what_names_no_rules_is_refused(rules):
    with pytest.raises(RulesError):
        parse_rules(rules)


def test_white_gets_points_only_for_a_handicap_of_black_stones():
    chinese, aga = parse_rules("chinese"), parse_rules("aga")
    assert handicap_stones([1, 2, 3], []) == 3 and handicap_stones([1], []) == 0 and handicap_stones([1, 2], [3]) == 0
    assert effective_komi(0.5, chinese, [1, 2, 3], []) == 3.5 and effective_komi(0.5, aga, [1, 2, 3], []) == 2.5
    assert effective_komi(7.5, chinese, [1], []) == 7.5 and effective_komi(0.5, parse_rules("nz"), [1, 2], []) == 0.5


@pytest.mark.parametrize(("changes", "komi"), [
    ({"rules": "chinese"}, 2.5), ({"rules": "aga"}, 1.5), ({"rules": "new zealand"}, 0.5),
    ({"rules": "chinese", "whiteHandicapBonus": "0"}, 0.5), ({"rules": {"scoringRule": "SCORING_AREA"}}, 0.5),
    ({"rules": "japanese"}, 0.5),
])
def test_an_analysed_handicap_game_is_scored_with_the_rules_compensation(changes, komi):
    query = katrain_query(komi=0.5, initialStones=[["B", "C3"], ["B", "G7"]], moves=[], analyzeTurns=[0], **changes)
    (turn,), warnings = parse_query(query, 9, 100)
    assert turn.position.komi == komi and turn.position.to_play == -1
    assert [w["field"] for w in warnings] == (["rules"] if changes["rules"] == "japanese" else [])


def test_a_bad_white_handicap_bonus_names_its_field():
    with pytest.raises(QueryError) as error:
        parse_query(katrain_query(rules="chinese", whiteHandicapBonus="N+2"), 9, 100)
    assert error.value.field == "whiteHandicapBonus"
