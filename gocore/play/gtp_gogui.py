"""GoGui's analysis menu: ``gogui-analyze_commands`` and the ``gfx`` commands it lists.

GoGui asks an engine for ``gogui-analyze_commands`` once and builds its Analyze menu from the
answer, one ``TYPE/LABEL/COMMAND`` line each. `GtpEngine` (`gocore.play.gtp`) offers, with an
agent that searches a tree (a model), three ``gfx`` commands drawn on the board (GoGui's gfx
words: ``LABEL``, ``INFLUENCE``, ``VAR``, ``TEXT``) and, for any agent, the score and the stones
the rules count:

- ``gozero-search_gfx``: a search of the agent's simulations from the position: each candidate
  labelled with the side to move's win rate in percent, the best line as a variation, and the
  root's visits, win rate (and score lead with a score head) as text.
- ``gozero-policy_gfx``: the net's prior in percent on each move of at least 1 %.
- ``gozero-ownership_gfx`` (a net with the ownership head): who owns each point at the end,
  as influence (+1 black).
- ``final_score`` and ``final_status_list alive``.

Everything drawn is from black's view where a colour matters (GoGui's), numbers from the side to
move's where the text says so. Start reading at `analyze_commands`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.board import Position
from gocore.rules.coords import is_pass, to_gtp
from gocore.search.analysis import analyse

if TYPE_CHECKING:
    from gocore.search.agents import AlphaZeroAgent

SEARCH, POLICY, OWNERSHIP = "gozero-search_gfx", "gozero-policy_gfx", "gozero-ownership_gfx"
MIN_PERCENT = 1  # policy labels below this many percent are left out


def analyze_commands(has_tree: bool, has_ownership: bool) -> str:
    """The answer to ``gogui-analyze_commands`` for an engine with these abilities."""
    lines = ([f"gfx/Search: best moves/{SEARCH}", f"gfx/Policy/{POLICY}"] if has_tree else []) + \
        ([f"gfx/Ownership/{OWNERSHIP}"] if has_tree and has_ownership else []) + \
        ["string/Final score/final_score", "plist/Alive stones/final_status_list alive"]
    return "\n".join(lines)


def search_gfx(agent: AlphaZeroAgent, position: Position) -> str:
    """`SEARCH`'s drawing: candidates' win rates, the best line, the root's numbers."""
    analysis = analyse(agent.analyse(position, agent.config.sims), agent.evaluator)
    size, mover = position.size, "B" if position.to_play == 1 else "W"
    labels = [f"{to_gtp(m.move, size)} {round(100 * m.winrate)}" for m in analysis.moves if not is_pass(m.move, size)]
    colors = ["b", "w"] if position.to_play == 1 else ["w", "b"]
    best = analysis.best
    variation = [] if best is None else [f"{colors[i % 2]} {to_gtp(m, size)}" for i, m in enumerate(best.pv)]
    score = "" if analysis.score_lead is None else f", {mover} leads by {analysis.score_lead:.1f}"
    text = f"TEXT {analysis.visits} visits, {mover} wins {100 * analysis.winrate:.1f}%{score}"
    return "\n".join(line for line in (_words("LABEL", labels), _words("VAR", variation), text) if line)


def policy_gfx(agent: AlphaZeroAgent, position: Position) -> str:
    """`POLICY`'s drawing: the net's priors in percent (pass as text)."""
    priors, _ = agent.evaluator.evaluate([position])  # (1, N*N+1)
    size, percent = position.size, np.round(100 * priors[0]).astype(int)
    labels = [f"{to_gtp(int(m), size)} {percent[m]}" for m in np.flatnonzero(percent[:-1] >= MIN_PERCENT)]
    return "\n".join(line for line in (_words("LABEL", labels), f"TEXT pass {percent[-1]}%") if line)


def ownership_gfx(agent: AlphaZeroAgent, position: Position) -> str:
    """`OWNERSHIP`'s drawing: the ownership head's reading as influence, +1 = black's point."""
    ownership = agent.evaluator.evaluate_aux([position]).ownership[0] * position.to_play  # (N*N,) black's view
    size = position.size
    return "INFLUENCE " + " ".join(f"{to_gtp(m, size)} {value:.2f}" for m, value in enumerate(ownership))


def _words(keyword: str, items: list[str]) -> str:
    return f"{keyword} {' '.join(items)}" if items else ""
