"""`gozero strong` off a terminal: a line each tenth of the expert games and of the supervised steps."""

from __future__ import annotations

from pathlib import Path

from flows.cli.strong import ProgressLines, stage_progress
from storage import gnugo_source, layout, run_dirs
from tasks.app.strong import StrongSettings


def test_the_stages_before_the_loop_report_how_far_they_are(tmp_path: Path):
    settings = StrongSettings(expert=("gnugo-9x9:level=1,games=20", "gnugo-9x9:level=5,games=20,seed=3"))
    assert stage_progress(settings, tmp_path, set()) == ("expert games", 0, 40)
    sources = [gnugo_source.parse_gnugo_source(text) for text in settings.expert]
    for index in (0, 3, 19):
        gnugo_source.write_game(tmp_path, sources[1], index, "(;GM[1]SZ[9])")
    gnugo_source.write_game(tmp_path, sources[0], 25, "(;GM[1]SZ[9])")  # beyond games=20: not counted
    assert stage_progress(settings, tmp_path, set()) == ("expert games", 3, 40)
    assert stage_progress(settings, tmp_path, {"expert"}) is None  # the supervised net has not reported yet
    directory = run_dirs.run_dir(layout.data_dir(tmp_path), "strong-9x9-supervised")
    directory.mkdir(parents=True)
    run_dirs.write_progress(directory, 500, 4000, "run")
    assert stage_progress(settings, tmp_path, {"expert"}) == ("supervised steps", 500, 4000)
    assert stage_progress(settings, tmp_path, {"expert", "supervised"}) is None


def test_a_line_each_tenth_not_each_poll():
    lines = ProgressLines()
    polls = [("expert games", n, 3200) for n in (0, 100, 319, 320, 330, 700, 3200, 3200)]
    shown = [line for line in map(lines.line, polls) if line]
    assert shown == ["recipe expert games: 320 of 3,200 (10%)", "recipe expert games: 700 of 3,200 (21%)",
                     "recipe expert games: 3,200 of 3,200 (100%)"]
    resumed = ProgressLines()  # a rerun that finds 35 % done says nothing until 40 %
    assert resumed.line(("supervised steps", 1400, 4000)) is None
    assert resumed.line(("supervised steps", 1500, 4000)) is None
    assert resumed.line(("supervised steps", 1600, 4000)) == "recipe supervised steps: 1,600 of 4,000 (40%)"
    assert lines.line(None) is None and lines.line(("supervised steps", 0, 0)) is None


def test_the_command_prints_the_progress_of_a_stage_it_is_running(tmp_path: Path, monkeypatch, capsys):
    import flows.strong
    from flows.cli.strong import _run_with_lines

    settings = StrongSettings(expert=("gnugo-9x9:level=1,games=20",))
    source = gnugo_source.parse_gnugo_source(settings.expert[0])

    def plays_the_games(*args, **kwargs) -> dict:
        for index in range(20):
            gnugo_source.write_game(tmp_path, source, index, "(;GM[1]SZ[9])")
        return {"curve": []}

    monkeypatch.setattr(flows.strong, "run_strong", plays_the_games)
    assert _run_with_lines(settings, tmp_path, 1, None, ("cpu", "cpu")) == {"curve": []}
    assert "recipe expert games: 20 of 20 (100%)" in capsys.readouterr().out
