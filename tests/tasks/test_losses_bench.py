"""benchmarks/losses.py: a net's own win rate along the games of a match, and what it says about its losses."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.losses import GameVerdict, blind_spot, judge, main, parse_args, summary


def test_a_loss_the_net_thought_won_is_a_sudden_collapse():
    verdict = judge(3, [0.5, 0.7, 0.95, 0.99, 0.98, 0.4, 0.05, 0.02, 0.01], lost=True, result="B+21.5")
    assert (verdict.decided_at, verdict.highest, verdict.before_decision) == (6, 0.99, 0.99)
    slide = judge(4, [0.5, 0.45, 0.4, 0.38, 0.35, 0.3, 0.28, 0.25, 0.2, 0.15, 0.12, 0.08, 0.05], lost=True)
    assert slide.decided_at == 11 and slide.before_decision == 0.38 and slide.highest == 0.5
    comeback = judge(5, [0.5, 0.2, 0.05, 0.5, 0.95, 0.97], lost=False)
    assert (comeback.decided_at, comeback.lowest, comeback.before_decision) == (4, 0.05, 0.05)
    assert judge(6, [0.5, 0.08, 0.6], lost=True).decided_at is None  # never settled below 0.1 to the end


def test_the_summary_counts_losses_thought_won_and_wins_thought_lost():
    verdicts = [judge(0, [0.5, 0.95, 0.9, 0.05], lost=True), judge(1, [0.5, 0.4, 0.3, 0.05], lost=True),
                judge(2, [0.5, 0.2, 0.95], lost=False), judge(3, [0.5, 0.8, 0.95], lost=False)]
    lines = summary(verdicts)
    assert lines[0] == "4 games: 2 won, 2 lost (A's side)"
    assert lines[1].startswith("losses A had thought won (its win rate >= 0.9 at some point): 1 of 2")
    assert "sudden (>= 0.5 within the 8 plies before the decision): 2 of 2" in lines[2]
    assert lines[-1].startswith("wins A had thought lost (<= 0.3 at some point): 1 of 2")
    assert isinstance(verdicts[0], GameVerdict)


def test_the_blind_spot_counts_stones_the_net_counted_alive_at_its_last_sure_position_that_died():
    """Four points; A's view. At A's second position (the last with a value >= 0.8) A has stones on
    points 0, 1 and 2, counted its own on 0 and 1 (point 2 at 0.4); at the end the opponent owns 0 and 2."""
    values = [0.9, 0.85, 0.3]
    ownership = np.array([[0.9, 0.9, 0.9, 0.0], [0.9, 0.6, 0.4, -0.9], [0.0, 0.0, 0.0, 0.0]])
    stones = np.array([[1, 0, 0, 0], [1, 1, 1, -1], [1, 1, 1, -1]])
    final = np.array([-1, 1, -1, -1])
    assert blind_spot(values, ownership, stones, final) == (1, 1)  # point 0: counted A's, died
    assert blind_spot([0.5, 0.7], ownership[:2], stones[:2], final) == (None, None)  # never sure
    lines = summary([GameVerdict(0, True, 9, 5, 0.99, 0.01, 0.9, "B+9.5", 4, 5),
                     GameVerdict(1, False, 9, 5, 0.99, 0.4, 0.6, "W+9.5", 6, 0),
                     GameVerdict(2, True, 9, 5, 0.6, 0.01, 0.5, "B+2.5")])  # never sure: not counted
    assert "that died: 1 of the 1 losses it was sure in, 0 of the 1 wins it was sure in" in lines[-2]


def test_visits_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        parse_args(["m", "--visits", "0"])
    assert "--visits must be at least 1" in capsys.readouterr().err


def test_a_real_match_is_judged_game_by_game(tmp_path, capsys):
    """A tiny net's match against the random player, played by the evaluate flow's body, then judged."""
    from gocore.nn.nets import NetConfig, build_net
    from gocore.play.match import MatchConfig
    from storage.checkpoints import save_model
    from tasks.app.evaluate import MatchSettings, play_match_here

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16,
                       aux_heads=True)
    net = str(save_model(tmp_path / "net", build_net(config), config.to_dict()))
    data = tmp_path / "data"
    match = data / "matches" / "tiny"
    play_match_here(str(match), MatchSettings(net, "random", 4, 4, MatchConfig(size=5, max_moves=30)), 0.55, None)
    csv = tmp_path / "judged.csv"
    assert main(["tiny", "--data-dir", str(data), "--visits", "2", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "4 games:" in out and "judged by" in out
    assert len(csv.read_text().splitlines()) == 5  # a header and the 4 games
    assert "dead_counted_alive" in csv.read_text().splitlines()[0]
    play_match_here(str(data / "matches" / "rnd"), MatchSettings("random", net, 2, 2, MatchConfig(size=5, max_moves=10)),
                    0.55, None)
    with pytest.raises(SystemExit, match="is not a net"):
        main(["rnd", "--data-dir", str(data)])
