"""KaTrain 1.20's own engine code driving `gozero analysis` headless: pondering, a move played while
it ponders (KaTrain terminates the ponder and asks again), the ai:simple strategy (per-move
ownership), a handicap game and a finished game. A manual check, not a pytest module: KaTrain
(with Kivy) is too heavy for the test venv, so it runs in a venv of its own:

    python3 -m venv /tmp/katrain-venv && /tmp/katrain-venv/bin/pip install katrain==1.20.0
    .venv/bin/python -c "import dataclasses; from gocore.nn.nets import build_net, preset; \
        from storage.checkpoints import save_model; c = preset('small', 9, 17, encoder='agz17', aux_heads=True); \
        save_model('/tmp/katrain-model', build_net(c), dataclasses.asdict(c))"
    /tmp/katrain-venv/bin/python tests/katrain/katrain_session.py \
        --engine "$PWD/.venv/bin/gozero analysis --model /tmp/katrain-model --threads 1"

It prints one line per check and exits 1 if any failed. KaTrain's GUI hooks are stubbed the way
its own tests do (`KaTrainBase` with ``__call__``, ``update_state`` and ``controls.set_status``);
everything else (query shapes, pondering, terminate, the AI strategy) is KaTrain's code.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from types import SimpleNamespace

os.environ.setdefault("KIVY_NO_ARGS", "1")  # Kivy would read this script's arguments as its own
from katrain.core.ai import generate_ai_move  # noqa: E402
from katrain.core.base_katrain import KaTrainBase  # noqa: E402
from katrain.core.constants import AI_SIMPLE_OWNERSHIP, OUTPUT_DEBUG, OUTPUT_ERROR  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import Game  # noqa: E402
from pysgf import Move  # noqa: E402  (KaTrain 1.20 takes its SGF classes from pysgf)


class Headless(KaTrainBase):
    """KaTrain without its GUI: every log line kept with the time it was written."""

    def __init__(self):
        super().__init__(force_package_config=True, debug_level=OUTPUT_DEBUG)
        self.controls = SimpleNamespace(set_status=lambda *args, **kwargs: None)
        self.pondering = False
        self.lines: list[tuple[float, int, str]] = []

    def log(self, message, level=OUTPUT_DEBUG):
        self.lines.append((time.monotonic(), level, str(message)))

    def __call__(self, *args, **kwargs):  # popups
        self.lines.append((time.monotonic(), OUTPUT_ERROR, f"popup {args}"))

    def update_state(self, *args, **kwargs):
        pass

    def first(self, text: str, after: float = 0.0) -> float | None:
        """When the first log line containing `text` came after `after`; None if none did."""
        return next((t for t, _, line in self.lines if t >= after and text in line), None)


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def resident_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", required=True, help="the gozero analysis command line")
    parser.add_argument("--ponder-seconds", type=float, default=5.0)
    args = parser.parse_args()
    katrain = Headless()
    config = {"altcommand": f"exec {args.engine}", "max_visits": 100, "fast_visits": 25, "max_time": 8.0,
              "wide_root_noise": 0.0, "_enable_ownership": True}
    engine = KataGoEngine(katrain, config)
    checks: list[tuple[str, bool, str]] = []
    try:
        run_checks(katrain, engine, args.ponder_seconds, checks)
    finally:
        engine.shutdown(finish=False)
    for name, passed, detail in checks:
        print(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}")
    errors = [line for _, level, line in katrain.lines if level == OUTPUT_ERROR]
    print(f"KaTrain errors logged: {len(errors)}" + "".join(f"\n  {line}" for line in errors[:5]))
    return 0 if all(passed for _, passed, _ in checks) and not errors else 1


def run_checks(katrain: Headless, engine: KataGoEngine, ponder_seconds: float, checks: list) -> None:
    game = Game(katrain, engine, game_properties={"SZ": 9, "KM": 7.5, "RU": "chinese"})
    root = game.current_node
    ready = wait_for(lambda: root.analysis_complete, 120)
    checks.append(("the empty board is analysed", ready, f"{len(root.analysis['moves'])} candidate moves"))
    pid = engine.katago_process.pid
    katrain.pondering = True
    game.analyze_extra("ponder")
    wait_for(lambda: engine.ponder_query is not None, 10)
    ponder_id = engine.ponder_query["id"] if engine.ponder_query else "?"
    before = resident_mb(pid)
    time.sleep(ponder_seconds)
    grown = resident_mb(pid) - before
    visits = root.analysis["root"]["visits"] if root.analysis.get("root") else 0
    checks.append(("pondering reports as it searches", visits > 100,
                   f"{visits} visits after {ponder_seconds:.0f} s, {grown:+.0f} MB resident"))
    played_at = time.monotonic()
    node = game.play(Move.from_gtp("E5", player="B"))
    game.analyze_extra("ponder")  # what KaTrain does after a move while it ponders: stop, ask again
    halted = wait_for(lambda: katrain.first(f"[{ponder_id}][done]", played_at) is not None, 5)
    answered = wait_for(lambda: node.analysis_exists, 5)
    stop, done = katrain.first(f"Terminating query {ponder_id}", played_at), katrain.first(f"[{ponder_id}][done]", played_at)
    new = katrain.first("KataGo analysis received", (done or played_at) + 1e-9)
    detail = (f"terminate -> its final answer {1000 * (done - stop):.0f} ms, -> the next query's first answer "
              f"{1000 * (new - stop):.0f} ms") if stop and done and new else "missing answers"
    checks.append(("a move while pondering: the ponder halts and the new position is answered",
                   halted and answered and new is not None and new - stop < 1.0, detail))
    katrain.pondering = False
    game.analyze_extra("stop")
    wait_for(lambda: node.analysis_complete, 60)
    move, played = generate_ai_move(game, AI_SIMPLE_OWNERSHIP, katrain.config("ai")[AI_SIMPLE_OWNERSHIP])
    checks.append(("ai:simple picks a move from per-move ownership", played is not None,
                   f"played {move.gtp() if move else None}"))
    check_handicap_and_finished(katrain, engine, checks)


def check_handicap_and_finished(katrain: Headless, engine: KataGoEngine, checks: list) -> None:
    handicap = Game(katrain, engine, game_properties={"SZ": 9, "KM": 0.5, "RU": "chinese", "HA": 2,
                                                      "AB": ["cc", "gg"]})
    ok = wait_for(lambda: handicap.current_node.analysis_complete, 60)
    root = handicap.current_node.analysis.get("root") or {}
    checks.append(("a handicap game (AB stones, white to move) is analysed",
                   ok and handicap.current_node.next_player == "W", f"black's win rate {root.get('winrate')}"))
    finished = Game(katrain, engine, game_properties={"SZ": 9, "KM": 7.5, "RU": "chinese"})
    for gtp, player in (("E5", "B"), ("pass", "W"), ("pass", "B")):
        finished.play(Move.from_gtp(gtp, player=player))
    ok = wait_for(lambda: finished.current_node.analysis_complete, 60)
    root = finished.current_node.analysis.get("root") or {}
    checks.append(("a finished game is answered with its result", ok and root.get("winrate") == 1.0,
                   f"winrate {root.get('winrate')}, scoreLead {root.get('scoreLead')} (B+73.5 by area)"))


if __name__ == "__main__":
    sys.exit(main())
