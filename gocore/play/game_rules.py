"""Rules a GUI names, read as what gozero can play, and the handicap compensation they give white.

gozero plays one game: area scoring (stones plus surrounded empty points, as Tromp-Taylor counts),
positional superko, no suicide (`gocore.rules.board`). A GUI names rules in KataGo's words
(``kata-set-rules``, the analysis query's ``rules``, KaTrain's ruleset) or KGS's (``kgs-rules``);
`parse_rules` reads them into `GameRules`: whether gozero can honestly play them (area scoring with
no button and no group tax; ko and suicide details aside) and how many points white gets for a
handicap game, KataGo's ``whiteHandicapBonus``: ``"N"`` (Chinese: one point per handicap stone,
as GNU Go --chinese-rules scores too), ``"N-1"`` (AGA) or ``"0"`` (Tromp-Taylor, New Zealand).

Handicap stones are black setup stones with no white ones, two or more (`handicap_stones`, the
count KataGo uses). Their compensation goes into the komi a `Position` is scored with
(`effective_komi`), so a finished game's score, the search's terminal values and ``final_score``
all include it. Start reading at `parse_rules`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gocore.errors import GozeroError

BONUSES = ("0", "N", "N-1")
PLAYABLE = "chinese, chinese-ogs, aga, bga, french, new-zealand, tromp-taylor, ing"  # for messages


class RulesError(GozeroError):
    """Rules text that names no rules at all (not rules gozero cannot play: see `GameRules.problem`)."""


@dataclass(frozen=True)
class GameRules:
    """Named rules as gozero reads them."""

    name: str  # as the GUI gave them, for messages
    handicap_bonus: str = "N"  # white's compensation per handicap stone: "0", "N" or "N-1"
    problem: str | None = None  # why gozero cannot play these rules as named; None: it can

    def white_bonus(self, handicap: int) -> int:
        """Points white gets in a game with `handicap` handicap stones (0 for an even game)."""
        if handicap < 2 or self.handicap_bonus == "0":
            return 0
        return handicap if self.handicap_bonus == "N" else handicap - 1

    def with_bonus(self, bonus: str) -> GameRules:
        """These rules with another handicap compensation (the analysis query's whiteHandicapBonus)."""
        if bonus not in BONUSES:
            raise RulesError(f"whiteHandicapBonus must be one of {', '.join(BONUSES)}, not {bonus!r}")
        return GameRules(self.name, bonus, self.problem)


_TERRITORY = "territory scoring; gozero scores by area only"
# KataGo's rule names with '-', '_' and spaces taken out: (white's handicap bonus, problem)
_NAMED: dict[str, tuple[str, str | None]] = {
    "chinese": ("N", None), "chineseogs": ("N", None), "chinesekgs": ("N", None),
    "aga": ("N-1", None), "bga": ("N-1", None), "french": ("N-1", None),
    "nz": ("0", None), "newzealand": ("0", None), "tromptaylor": ("0", None), "goe": ("0", None), "ing": ("0", None),
    "agabutton": ("N-1", "a pass button; gozero plays without one"),
    "stonescoring": ("0", "stone scoring (territory not counted); gozero counts territory"),
    "ancientarea": ("0", "stone scoring (territory not counted); gozero counts territory"),
    "japanese": ("0", _TERRITORY), "korean": ("0", _TERRITORY), "ancientterritory": ("0", _TERRITORY),
}
CHINESE = GameRules("chinese")  # GTP's default: GNU Go --chinese-rules scores handicap games the same way
TROMP_TAYLOR = GameRules("tromp-taylor", "0")


def parse_rules(rules: object) -> GameRules:
    """`GameRules` of a name (``"new zealand"``), a JSON object (``{"scoring": "AREA", ...}``, as a
    dict or its text) or KataGo's keys in a Python dict (``{"scoringRule": "SCORING_AREA"}``);
    RulesError if `rules` names none."""
    if isinstance(rules, str) and rules.strip().startswith("{"):
        try:
            rules = json.loads(rules)
        except json.JSONDecodeError as error:
            raise RulesError(f"could not parse rules {rules!r}: {error}") from None
    if isinstance(rules, dict):
        return _from_object(rules)
    if not isinstance(rules, str):
        raise RulesError(f"rules must be a name or a JSON object, not {rules!r}")
    key = "".join(c for c in rules.lower() if c not in "-_ ")
    if key not in _NAMED:
        raise RulesError(f"unknown rules {rules!r}")
    bonus, problem = _NAMED[key]
    return GameRules(rules, bonus, problem)


def _from_object(rules: dict[str, Any]) -> GameRules:
    """KataGo's JSON rules (its keys, or the ``...Rule`` spellings of its Python helpers)."""
    values = {_KEYS.get(key, key): value for key, value in rules.items()}
    unknown = sorted(set(values) - set(_KEYS.values()))
    if unknown:
        raise RulesError(f"unknown rules option {unknown[0]!r}")
    scoring = _word(values.get("scoring", "AREA"), "SCORING_")
    tax = _word(values.get("tax", "NONE"), "TAX_")
    bonus = _word(values.get("whiteHandicapBonus", "0"), "WHB_").replace("N_MINUS_ONE", "N-1").replace("ZERO", "0")
    if bonus not in BONUSES:
        raise RulesError(f"whiteHandicapBonus must be one of {', '.join(BONUSES)}, not {bonus!r}")
    problem = (_TERRITORY if scoring == "TERRITORY" else
               f"scoring {scoring}; gozero scores by area only" if scoring != "AREA" else
               f"tax {tax}; gozero counts every point of an eye" if tax != "NONE" else
               "a pass button; gozero plays without one" if values.get("hasButton") else None)
    return GameRules(json.dumps(rules, sort_keys=True), bonus, problem)


_KEYS = {"ko": "ko", "koRule": "ko", "score": "scoring", "scoring": "scoring", "scoringRule": "scoring",
         "tax": "tax", "taxRule": "tax", "suicide": "suicide", "multiStoneSuicideLegal": "suicide",
         "hasButton": "hasButton", "whiteHandicapBonus": "whiteHandicapBonus",
         "whiteHandicapBonusRule": "whiteHandicapBonus", "friendlyPassOk": "friendlyPassOk", "komi": "komi"}


def _word(value: object, prefix: str) -> str:
    """A rules value in KataGo's upper case, without the prefix of its C++ names (``SCORING_AREA``)."""
    text = str(value).upper()
    return text[len(prefix):] if text.startswith(prefix) else text


def handicap_stones(black: list[int] | tuple[int, ...], white: list[int] | tuple[int, ...]) -> int:
    """Handicap stones of a setup: its black stones when there are two or more and no white ones
    (KataGo's count), else 0."""
    return len(black) if not white and len(black) >= 2 else 0


def effective_komi(komi: float, rules: GameRules, black: list[int] | tuple[int, ...],
                   white: list[int] | tuple[int, ...]) -> float:
    """The komi a position is scored with: `komi` plus white's handicap compensation under `rules`."""
    return komi + rules.white_bonus(handicap_stones(black, white))
